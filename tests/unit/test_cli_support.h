// Streams over strings for the tests (cli-runtime's NewTestIOStreams): standard input from a
// string, standard output and error into strings, the terminal and color flags as the test sets
// them, and a fake environment (nothing of the real one, HOME a folder that does not exist) so
// that a tool under test never reads the user's kubeconfig or talosconfig.
#pragma once

#include "common/cli/run.h"
#include "common/cli/streams.h"
#include "common/util/env.h"

#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::test {

// Which of the three streams are terminals, and whether stderr is colored.
struct Terminal {
    bool in = false;
    bool out = false;
    bool err = false;
    bool color = false;
};

// The fake environment every test starts from.
inline Environment test_environment() {
    Environment env;
    env.vars["HOME"] = "/nonexistent/ichor-test-home";
    return env;
}

// Owns the string streams and the cli::Streams over them; `s` is what a run() is handed.
// Not copyable or movable: `s` refers to the members.
struct TestStreams {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    cli::Streams s;

    explicit TestStreams(std::string input = {}, Terminal tty = {},
                         Environment env = test_environment())
        : in(std::move(input)), s{in,      out,     err,       tty.in,
                                  tty.out, tty.err, tty.color, std::move(env)} {}
    TestStreams(const TestStreams&) = delete;
    TestStreams& operator=(const TestStreams&) = delete;

    [[nodiscard]] std::string out_text() const { return out.str(); }
    [[nodiscard]] std::string err_text() const { return err.str(); }
};

// Counts the occurrences of `needle` in `text` (a message reported once appears once).
inline int count_of(const std::string& text, const std::string& needle) {
    int n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + needle.size())) {
        ++n;
    }
    return n;
}

// What a tool printed and returned.
struct Ran {
    int rc = -1;
    std::string out;
    std::string err;
};

// Runs the tool `verb` as run_main would (cli::run_tool), with `args` after the program name, on
// test streams without a terminal.
inline Ran run_tool(cli::RunFn run, std::string_view verb, std::vector<std::string> args,
                    std::string input = {}) {
    args.insert(args.begin(), "kubectl-ichor-" + std::string(verb));
    TestStreams t(std::move(input));
    Ran r;
    r.rc = cli::run_tool(args, t.s, verb, run);
    r.out = t.out_text();
    r.err = t.err_text();
    return r;
}

} // namespace ichor::test
