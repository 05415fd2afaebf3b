// libFuzzer harness: kubeconfig reading and merging (kube::merge_kubeconfigs reads a file, so the
// input is written to one first).
#include "common/kube/config.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/tmp/ichor-fuzz-kubeconfig." + std::to_string(getpid());
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    auto merged = ichor::kube::merge_kubeconfigs({path}, false);
    if (merged) {
        ichor::kube::LoadOptions opts;
        (void)ichor::kube::resolve_context(*merged, opts);
    }
    return 0;
}
