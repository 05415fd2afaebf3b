// libFuzzer harness: talosconfig parsing and context selection.
#include "common/talos/talosconfig.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto cfg = ichor::talos::parse_talosconfig(text, "<fuzz>");
    if (cfg) {
        (void)ichor::talos::select_context(*cfg, "");
    }
    return 0;
}
