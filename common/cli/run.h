// The shape every tool's main takes: build the process streams, call run(args, streams), end.
#pragma once

#include "common/cli/streams.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cli {

using RunFn = int (*)(const std::vector<std::string>& args, Streams& streams);

// Runs `run` over the process's arguments and streams. Afterwards checks stdout: a reader that
// went away (EPIPE) ends the tool quietly with run's code; another write failure is an error
// (exit 1). Exceptions that escape run are bugs: reported, exit 70.
int run_main(int argc, char** argv, std::string_view verb, RunFn run);

// Reports the error and returns its exit code.
int fail(Streams& s, std::string_view verb, const Error& e);

} // namespace ichor::cli
