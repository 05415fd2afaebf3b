// libFuzzer harness: the Helm release record reader (cni::decode_release), gzip inflation with
// its limit included. An input that starts like gzip is taken as the gzip stream of a record
// (Helm's base64 added here, so that the fuzzer mutates the compressed bytes); anything else as
// Helm's text itself.
#include "common/cni/helm_record.h"
#include "common/util/strings.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    ichor::cni::RecordLimits limits;
    limits.max_inflated_bytes = 1u << 20; // keeps each run fast; the limit path is what matters
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        (void)ichor::cni::decode_release(ichor::util::base64_encode(bytes), "<fuzz>", limits);
    } else {
        (void)ichor::cni::decode_release(bytes, "<fuzz>", limits);
    }
    return 0;
}
