// A tool run as a KRM function (kpt fn eval DIR --exec kubectl-ichor-VERB -- cluster=prod;
// docs/stream.md, "Under kpt"): the orchestrator starts it with no argument and sends a
// ResourceList whose functionConfig, a ConfigMap, carries the flags as its data. run_tool reads
// that input first, turns the data into flags and hands the tool the same text.
#pragma once

#include "common/cli/streams.h"
#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cli {

// Whether run_tool reads standard input first to look for a functionConfig: a tool (the verb is
// not empty: not the dispatcher) started with no argument but the program, its standard input
// not a terminal. A tool given arguments takes its flags from them alone.
bool may_run_as_function(const std::vector<std::string>& args, const Streams& s,
                         std::string_view verb);

// The flags a functionConfig stands for, in the order of its data: KEY: VALUE is --KEY=VALUE (a
// one-letter KEY is -K VALUE); KEY: "false" leaves the flag out (a switch not given, since a
// switch counts as given whatever its value). A functionConfig that is not a ConfigMap, a key
// that is not a flag's name, or a value that is not a scalar is a Usage error naming it.
Result<std::vector<std::string>> function_config_flags(const doc::Value& function_config);

} // namespace ichor::cli
