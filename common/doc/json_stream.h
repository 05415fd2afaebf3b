// Writing JSON to a stream without holding its whole text (value.h's to_json returns it whole).
#pragma once

#include "common/doc/value.h"

#include <ostream>

namespace ichor::doc {

// Writes to_json(v) to `os`, a piece at a time: the whole text is never held at once (a plan of
// 256 nodes is 4 MB of it, and its growth was the peak of adopt --plan; bench/HISTORY.md, "the
// plan's peak").
void write_json(std::ostream& os, const Value& v);

} // namespace ichor::doc
