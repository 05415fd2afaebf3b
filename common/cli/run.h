// The shape every tool takes. main.cpp is `return run_main(argc, argv, "VERB", run);`; the tool's
// run(args, streams) parses its options (a pure function), does its work and returns an Outcome
// (stages/stage.h): what was done and, when the tool could not go on, the one error. run_main
// reports that error once and turns the outcome into the exit code; nothing else prints an error
// or derives a code.
#pragma once

#include "common/cli/complete.h"
#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"
#include "common/util/result.h"

#include <concepts>
#include <cstdint>
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

// run_main limits glibc to two malloc arenas (run.cpp says why) unless this is true: the user set
// MALLOC_ARENA_MAX, or an arena_max in GLIBC_TUNABLES (either may be null: not set).
bool user_sets_malloc_arenas(const char* malloc_arena_max, const char* glibc_tunables);

// Runs `run` on the given streams, as run_main does after building them (tests call this). Sets
// s.verb. A tool started with no argument and standard input not a terminal may be a KRM function
// (kpt fn eval --exec): its input is read first and a functionConfig's data become its flags
// (function.h).
int run_tool(const std::vector<std::string>& args, Streams& s, std::string_view verb, RunFn run);

// Answers a completion request on s.out (cli/complete.h); nothing else is done or printed.
void run_completion(const CompletionRequest& req, Streams& s, CompletionSources src);

// The completion sources of a tool: TalosClusters and kubeconfig contexts only for a tool whose
// options hold the kube flags (a `kube` member), so that no other tool links the Kubernetes
// client (docs/design.md, "Linking").
template <class Options> CompletionSources completion_sources(const Streams& s) {
    CompletionSources src;
    src.env = s.env;
    if constexpr (requires(const Options& o) {
                      { o.kube } -> std::convertible_to<const KubeOptions&>;
                  }) {
        src.clusters = [env = s.env](const KubeOptions& k, std::int64_t bound_ms) {
            return list_clusters(k, env, bound_ms);
        };
        src.kube_contexts = [env = s.env](const KubeOptions& k) {
            return list_kube_contexts(k, env);
        };
    }
    return src;
}

// The common first steps of every run(): a usage error becomes the outcome's error, a help or
// version request prints its text, a completion request its answer, and otherwise
// `body(options, streams)` runs.
template <class Options, class Body>
stages::Outcome run_parsed(Result<Parsed<Options>> parsed, Streams& s, Body&& body) {
    if (!parsed) {
        return stages::failed(parsed.error());
    }
    if (parsed->completion) {
        run_completion(*parsed->completion, s, completion_sources<Options>(s));
        return {};
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return {};
    }
    s.quiet = parsed->quiet;
    return body(*parsed->options, s);
}

} // namespace ichor::cli
