#include "common/talos/loops.h"

#include <atomic>

namespace ichor::talos {

void for_each_on_loops(int concurrency, std::size_t items, const StartItem& start) {
    std::atomic<std::size_t> next{0};
    run_on_loops(concurrency, items, [&](Loop& loop, int share) {
        int free = share;     // slots of this loop with no item in flight
        bool filling = false; // an item done from within its start only frees its slot
        std::function<void()> done;
        auto fill = [&] {
            filling = true;
            while (free > 0) {
                const std::size_t i = next++;
                if (i >= items) {
                    break;
                }
                --free;
                start(loop, i, done);
            }
            filling = false;
        };
        done = [&] {
            ++free;
            if (!filling) {
                fill();
            }
        };
        fill();
        loop.run();
    });
}

} // namespace ichor::talos
