// Items spread over talos::Loops (run_on_loops), each started as a slot frees: the fan-out of the
// reads and calls that a stage makes of many nodes at once.
#pragma once

#include "common/talos/loop.h"

#include <cstddef>
#include <functional>

namespace ichor::talos {

// One item's calls started on `loop`: `done()` is called on the loop's thread when the item is
// over (at once, from within, when there is nothing to call).
using StartItem =
    std::function<void(Loop& loop, std::size_t item, const std::function<void()>& done)>;

// Every item of [0, items), in order, at most `concurrency` in flight over run_on_loops' loops:
// each loop starts items up to its share, and the next one each time one is done. Returns when
// every item is done. The node check's dry runs and hold apply's reads of the configurations run
// on it, in the product and in the tests alike (only the call on the node is faked there).
void for_each_on_loops(int concurrency, std::size_t items, const StartItem& start);

} // namespace ichor::talos
