// Writing a tool's document: YAML, JSON or a table, optionally through --jq; reading its input.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/doc/resource_list.h"

#include <functional>
#include <string>
#include <vector>

namespace ichor::cli {

// Renders the items of a list for people (without the results; write_list adds those).
using TableFn = std::function<std::string(const doc::ResourceList&, bool color)>;

// Writes the list in the chosen format. With --jq the expression runs over the envelope (the
// same document -o json prints) and its outputs are printed. A table prints the items, then one
// line per result.
Status write_list(Streams& s, const OutputOptions& o, const doc::ResourceList& list,
                  const TableFn& table);

// The results as table lines: "SEVERITY  CODE  MESSAGE".
std::string format_results(const doc::ResourceList& list, bool color);

// Reads the input list: from -f FILE, '-' or stdin. Refuses to wait on a terminal: with stdin a
// terminal and no -f, a Usage error saying what to pipe in.
Result<doc::ResourceList> read_input(Streams& s, const InputOptions& in, std::string_view verb,
                                     std::string_view what);

} // namespace ichor::cli
