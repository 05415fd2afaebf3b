// libFuzzer harness: machine-config patches (render::parse_patch).
#include "common/render/patch.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)ichor::render::parse_patch(text, "<fuzz>");
    return 0;
}
