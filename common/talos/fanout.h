// Runs one function over many inputs (typically node addresses) with bounded parallelism.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

namespace ichor::talos {

// Calls fn(i) for every i in [0, n), on at most `concurrency` threads at once (at least one), and
// returns when all calls have returned. fn must not throw. A slow call holds only its own thread,
// so it delays the others only by keeping one worker busy; bound it with a call timeout.
void for_each_parallel(std::size_t n, int concurrency, const std::function<void(std::size_t)>& fn);

// fn(input) for every input, results in input order. Empty input gives an empty result.
template <class In, class F>
auto fan_out(const std::vector<In>& inputs, int concurrency, F fn)
    -> std::vector<std::invoke_result_t<F&, const In&>> {
    using Out = std::invoke_result_t<F&, const In&>;
    std::vector<std::optional<Out>> slots(inputs.size());
    for_each_parallel(inputs.size(), concurrency,
                      [&](std::size_t i) { slots[i].emplace(fn(inputs[i])); });
    std::vector<Out> out;
    out.reserve(slots.size());
    for (auto& s : slots) {
        out.push_back(std::move(*s));
    }
    return out;
}

} // namespace ichor::talos
