// The shape every tool takes. main.cpp is `return run_main(argc, argv, "VERB", run);`; the tool's
// run(args, streams) parses its options (a pure function), does its work and returns an Outcome
// (stages/stage.h): what was done and, when the tool could not go on, the one error. run_main
// reports that error once and turns the outcome into the exit code; nothing else prints an error
// or derives a code.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"
#include "common/util/result.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::cli {

using RunFn = stages::Outcome (*)(const std::vector<std::string>& args, Streams& streams);

// Runs `run` over the process's arguments and streams, reports the outcome's error once
// ("kubectl ichor VERB: error: ..." and its hint) and returns the exit code. Afterwards checks
// stdout: a reader that went away (EPIPE) ends the tool quietly with run's code; another write
// failure is an Io error (exit 74). Exceptions that escape run are bugs: reported, exit 70.
int run_main(int argc, char** argv, std::string_view verb, RunFn run);

// Runs `run` on the given streams, as run_main does after building them (tests call this). Sets
// s.verb. A tool started with no argument and standard input not a terminal may be a KRM function
// (kpt fn eval --exec): its input is read first and a functionConfig's data become its flags
// (function.h).
int run_tool(const std::vector<std::string>& args, Streams& s, std::string_view verb, RunFn run);

// The common first steps of every run(): a usage error becomes the outcome's error, a help or
// version request prints its text, and otherwise `body(options, streams)` runs.
template <class Options, class Body>
stages::Outcome run_parsed(Result<Parsed<Options>> parsed, Streams& s, Body&& body) {
    if (!parsed) {
        return stages::failed(parsed.error());
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return {};
    }
    return body(*parsed->options, s);
}

} // namespace ichor::cli
