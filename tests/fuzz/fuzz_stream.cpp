// libFuzzer harness: the stream reader (doc::read_resource_list), the first reader of every tool.
// Any result is fine; a crash, a sanitizer report, a timeout or running out of memory is a bug.
#include "common/doc/resource_list.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto list = ichor::doc::read_resource_list(text, "<fuzz>");
    if (list) {
        (void)ichor::doc::to_yaml(list->to_value()); // the emitter walks whatever was read
    }
    return 0;
}
