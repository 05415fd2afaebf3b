// Checks shared by the tests of the tools' option parsers (test_tools_*.cpp): a usage error is
// one exact error line (and its hint) on stderr, nothing on stdout, exit 2; --help and --version
// print their text and exit 0. Each runs the tool's run() through cli::run_tool, as main does.
#pragma once

#include "common/cli/errors.h"
#include "common/util/version.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ichor::test {

inline std::string joined(const std::vector<std::string>& args) {
    std::string out;
    for (const auto& a : args) {
        out += (out.empty() ? "" : " ") + a;
    }
    return out;
}

inline void check_usage(cli::RunFn run, std::string_view verb, const std::vector<std::string>& args,
                        const std::string& message, const std::string& hint = {}) {
    INFO("kubectl ichor " << verb << " " << joined(args));
    Ran r = run_tool(run, verb, args);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "kubectl ichor " + std::string(verb) + ": error: " + message + "\n" +
                       (hint.empty() ? "" : "hint: " + hint + "\n"));
}

// --help (and -h): the summary first, then the usage; the exit-status table last.
inline void check_help(cli::RunFn run, std::string_view verb, const std::string& summary) {
    for (const char* flag : {"--help", "-h"}) {
        INFO(flag);
        Ran r = run_tool(run, verb, {flag});
        CHECK(r.rc == 0);
        CHECK(r.err.empty());
        CHECK(
            r.out.starts_with(summary + "\n\nUsage:\n  kubectl ichor " + std::string(verb) + " "));
        CHECK(r.out.ends_with("\n" + std::string(cli::exit_status_help())));
        CHECK(r.out.find("\nFlags:\n") != std::string::npos);
    }
}

// --version: "kubectl-ichor-VERB VERSION" (the project's version), whatever else is given.
inline void check_version(cli::RunFn run, std::string_view verb,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--version"};
    args.insert(args.end(), extra.begin(), extra.end());
    Ran r = run_tool(run, verb, args);
    CHECK(r.rc == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "kubectl-ichor-" + std::string(verb) + " " + std::string(util::k_version) + "\n");
}

} // namespace ichor::test
