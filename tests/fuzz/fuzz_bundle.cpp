// libFuzzer harness: the secrets bundle reader (bundle::parse).
#include "common/bundle/bundle.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)ichor::bundle::parse(text, "<fuzz>");
    return 0;
}
