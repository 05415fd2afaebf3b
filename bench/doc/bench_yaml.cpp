// bench-yaml: parses tests/unit/data/talos-config-commented.yaml N times with the fast block
// reader and N times with the yaml-cpp path, and prints the median microseconds per parse of each
// and their ratio (bench/README.md).
#include "common/doc/yaml_block.h"
#include "common/util/files.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace ichor;

namespace {

const std::string k_fixture =
    std::string(ICHOR_SOURCE_DIR) + "/tests/unit/data/talos-config-commented.yaml";

struct Figures {
    double fast_us = 0;
    double slow_us = 0;
};

double mean_us(int batch, const std::function<size_t()>& f, size_t& sink) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) {
        sink += f();
    }
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / batch;
}

// Medians over `rounds` of the mean time of `batch` calls, in microseconds. The two paths take
// turns round by round, so that a change of load on the shared machine hits both alike.
Figures measure(int rounds, int batch, const std::function<size_t()>& fast,
                const std::function<size_t()>& slow) {
    std::vector<double> f;
    std::vector<double> s;
    size_t sink = 0;
    for (int r = 0; r < rounds; ++r) {
        s.push_back(mean_us(batch, slow, sink));
        f.push_back(mean_us(batch, fast, sink));
    }
    if (sink == 0) {
        std::fprintf(stderr, "bench-yaml: no documents read\n");
    }
    std::sort(f.begin(), f.end());
    std::sort(s.begin(), s.end());
    return {f[f.size() / 2], s[s.size() / 2]};
}

} // namespace

int main(int argc, char** argv) {
    int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
    auto text = util::read_file(k_fixture);
    if (!text) {
        std::fprintf(stderr, "bench-yaml: %s\n", text.error().message.c_str());
        return 1;
    }
    auto fast_once = doc::read_block_yaml(*text);
    auto slow_once = doc::parse_documents_yaml_cpp(*text, "fixture");
    if (!fast_once || !slow_once || *fast_once != *slow_once) {
        std::fprintf(stderr, "bench-yaml: the two paths disagree on the fixture\n");
        return 1;
    }
    const int rounds = 21;
    const int batch = std::max(1, n / rounds);
    auto fast = [&] { return doc::read_block_yaml(*text)->size(); };
    auto slow = [&] { return doc::parse_documents_yaml_cpp(*text, "fixture")->size(); };
    Figures m = measure(rounds, batch, fast, slow);
    std::printf("fixture: %zu bytes, %d parses per path (median of %d rounds)\n", text->size(),
                rounds * batch, rounds);
    std::printf("yaml-cpp: %8.1f us per parse\n", m.slow_us);
    std::printf("fast:     %8.1f us per parse\n", m.fast_us);
    std::printf("ratio:    %8.1f x\n", m.slow_us / m.fast_us);
    return 0;
}
