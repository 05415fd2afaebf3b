// libFuzzer harness: Cilium values files (cni::read_values: the reader's limits, then the checks
// of Ichor-owned keys, which walk whatever was read).
#include "common/cni/values.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)ichor::cni::read_values(text, "<fuzz>");
    return 0;
}
