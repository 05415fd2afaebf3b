// kubectl-ichor, the dispatcher: `kubectl ichor VERB ARGS...` runs the sibling binary
// kubectl-ichor-VERB found next to the dispatcher's own real path (so one krew-linked binary
// reaches the whole suite). Without a verb, or with --help, it lists the verbs.
#pragma once

#include "common/cli/streams.h"
#include "common/stages/stage.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cli {

struct Verb {
    std::string_view name;
    std::string_view summary;
};

// The suite's verbs, in the order --help lists them.
const std::vector<Verb>& verbs();

struct Dispatch {
    std::string program;           // the sibling to run, or empty: print `text`
    std::vector<std::string> args; // argv for it (argv[0] = program)
    std::string text;              // the verb list or the version
    int code = 0;
};

// Pure: decides what `kubectl-ichor ARGS` does, given the folder of the real binary and a test of
// whether a file there is executable. An unknown verb is a Usage error listing the verbs.
Result<Dispatch> resolve_dispatch(const std::vector<std::string>& args, const std::string& dir,
                                  bool (*executable)(const std::string& path));

// The run() of kubectl-ichor (cli/run.h): prints the verb list, or execs the sibling.
stages::Outcome dispatch_run(const std::vector<std::string>& args, Streams& s);

// main of kubectl-ichor.
int dispatch_main(int argc, char** argv);

} // namespace ichor::cli
