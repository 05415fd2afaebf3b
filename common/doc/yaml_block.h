// Internal to the doc layer: a fast reader for the block-style YAML that Talos machine
// configurations and our own emitter (to_yaml) write, tried by parse_documents before yaml-cpp.
//
// The reader is strict: it accepts a subset of YAML and returns nullopt ("give up") for anything
// outside it, for every malformed input and for anything it is unsure of. It never reports an
// error; parse_documents then runs yaml-cpp, which either reads the input or gives the error with
// its line and column. For an input it accepts, the result is exactly what the yaml-cpp path
// returns (same values, key order and duplicate-key behaviour; null documents dropped).
//
// Accepted: `---` separated streams with optional `...`; block mappings with plain or simply
// quoted keys; block sequences, also compact (`- key: value`, `- - x`) and at the indentation of
// their parent key; single-line plain, single-quoted and double-quoted scalars; literal block
// scalars (`|`, `|-`, `|+`, indentation indicator); empty `[]` and `{}`; comments and blank lines.
// Given up on: tabs outside comments, control characters, a byte order mark, CR line endings,
// anchors, aliases, tags, directives, folded scalars, non-empty flow collections, multi-line plain
// or quoted scalars, complex keys, null keys, unusual escapes.
#pragma once

#include "common/doc/value.h"

#include <optional>
#include <string_view>
#include <vector>

namespace ichor::doc {

// The documents of `text`, null documents dropped, or nullopt when the fast reader gives up.
// Empty text (or only comments) gives an empty vector. The reader also gives up on an input of
// more than limits.max_nodes values (its own depth cap is below limits.max_depth).
std::optional<std::vector<Value>> read_block_yaml(std::string_view text,
                                                  const Limits& limits = k_limits);

// The yaml-cpp path of parse_documents, without the fast reader (for the differential tests and
// the benchmark). Same contract as parse_documents for YAML input, less the size limit.
Result<std::vector<Value>> parse_documents_yaml_cpp(std::string_view text, std::string_view source,
                                                    const Limits& limits = k_limits);

} // namespace ichor::doc
