// libFuzzer harness, differential: the fast block-YAML reader against yaml-cpp. Whenever the fast
// reader accepts an input, yaml-cpp must read it to the same documents (yaml_block.h's contract);
// a difference aborts, which libFuzzer reports as a crash with the input saved.
#include "common/doc/yaml_block.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto fast = ichor::doc::read_block_yaml(text);
    if (!fast) {
        return 0;
    }
    auto slow = ichor::doc::parse_documents_yaml_cpp(text, "<fuzz>");
    if (!slow) {
        std::fprintf(stderr, "fast reader accepted what yaml-cpp refuses: %s\n",
                     slow.error().message.c_str());
        std::abort();
    }
    if (*fast != *slow) {
        std::fprintf(stderr, "fast reader and yaml-cpp differ:\n%s\n%s\n",
                     ichor::doc::Value(*fast).dump().c_str(),
                     ichor::doc::Value(*slow).dump().c_str());
        std::abort();
    }
    return 0;
}
