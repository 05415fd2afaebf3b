// --jq EXPR through libjq. The expression is compiled once; each output is returned as a value.
#pragma once

#include "common/doc/value.h"

#include <string>
#include <vector>

namespace ichor::doc {

// Runs `expr` over `input`. A compile error or a runtime error is a Usage error quoting jq's
// message.
Result<std::vector<Value>> run_jq(const std::string& expr, const Value& input);

// Formats jq outputs as the suite prints them: a string raw on its own line (like `jq -r`),
// anything else compact JSON on one line.
std::string format_jq_outputs(const std::vector<Value>& outputs);

} // namespace ichor::doc
