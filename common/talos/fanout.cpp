#include "common/talos/fanout.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace ichor::talos {

void for_each_parallel(std::size_t n, int concurrency, const std::function<void(std::size_t)>& fn) {
    std::size_t workers = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(concurrency, 1)));
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < n; i = next++) {
            fn(i);
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) {
        threads.emplace_back(work);
    }
    for (auto& t : threads) {
        t.join();
    }
}

} // namespace ichor::talos
