// Items over loops (common/talos/loops.h): every item once, in order, within the bound, whether an
// item is done from within its start or later on its loop.
#include "common/talos/loops.h"
#include "test_loop_support.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

using namespace ichor;

TEST_CASE("for_each_on_loops: each item once, started in order, at most the bound in flight",
          "[talos][loops]") {
    const bool later = GENERATE(false, true); // done from within the start, or on the loop
    const int concurrency = GENERATE(1, 8);
    INFO("done later " << later << ", concurrency " << concurrency);
    std::mutex mu;
    std::vector<std::size_t> started;
    int in_flight = 0;
    int most = 0;
    std::map<const talos::Loop*, std::pair<int, int>> on_loop; // in flight on a loop, its most
    talos::for_each_on_loops(
        concurrency, 20, [&](talos::Loop& loop, std::size_t i, const std::function<void()>& done) {
            {
                std::lock_guard lock(mu);
                started.push_back(i);
                most = std::max(most, ++in_flight);
                auto& [now, top] = on_loop[&loop];
                top = std::max(top, ++now);
            }
            auto end = [&mu, &in_flight, &on_loop, &loop, &done] {
                {
                    std::lock_guard lock(mu);
                    --in_flight;
                    --on_loop[&loop].first;
                }
                done();
            };
            if (later) {
                new test::LoopCall(loop, std::chrono::milliseconds(0), end); // the loop deletes it
            } else {
                end();
            }
        });
    std::vector<std::size_t> sorted = started;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> all(20);
    for (std::size_t i = 0; i < all.size(); ++i) {
        all[i] = i;
    }
    CHECK(sorted == all);
    CHECK(in_flight == 0);
    CHECK(most <= concurrency);
    if (concurrency == 1) {
        CHECK(started == all); // one at a time: in order
    }
    if (later) {
        // Each loop keeps its share of the slots in flight: the shares add up to the bound.
        int shares = 0;
        for (const auto& [loop, counts] : on_loop) {
            shares += counts.second;
        }
        CHECK(shares == concurrency);
    }
}

TEST_CASE("for_each_on_loops: no item, no start", "[talos][loops]") {
    int calls = 0;
    talos::for_each_on_loops(
        4, 0, [&](talos::Loop&, std::size_t, const std::function<void()>&) { ++calls; });
    CHECK(calls == 0);
}
