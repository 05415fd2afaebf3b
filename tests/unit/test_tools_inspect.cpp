// kubectl ichor inspect's options (tools/inspect/inspect.cpp): every usage error, help, version,
// and a command line into Options.
#include "test_tools_support.h"
#include "tools/inspect/inspect.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::inspect::parse_options;

namespace {
constexpr std::string_view k_verb = "inspect";
const cli::RunFn k_run = tools::inspect::run;

tools::inspect::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-inspect");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("inspect: every usage error is one line and exit 2", "[tools][inspect]") {
    test::check_usage(k_run, k_verb, {}, "no address given",
                      "kubectl ichor inspect ADDRESS... --talosconfig FILE");
    test::check_usage(k_run, k_verb, {"10.0.0.31", "--cert-fingerprint", "abc="},
                      "--cert-fingerprint pins a maintenance-mode node: it goes with --insecure",
                      "kubectl ichor inspect ADDRESS --insecure --cert-fingerprint FP");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "-f", "saved.yaml"},
                      "give addresses or -f FILE, not both");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "-o", "wide"},
                      "unknown output format \"wide\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--call-timeout", "soon"},
                      "--call-timeout: \"soon\" is not a duration such as 20s, 500ms or 1m");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--concurrency", "0"},
                      "--concurrency must be between 1 and 1024");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--kubeconfig", "kc"},
                      "Option \u2018kubeconfig\u2019 does not exist", "see --help");
}

TEST_CASE("inspect: --help and --version", "[tools][inspect]") {
    test::check_help(k_run, k_verb,
                     "Read Talos nodes over their API: identity, configuration (secrets "
                     "digested), facts, etcd, volumes.");
    test::check_version(k_run, k_verb, {"10.0.0.21"});
}

TEST_CASE("inspect: a command line fills the options", "[tools][inspect]") {
    auto o =
        parsed({"10.0.0.21", "10.0.0.11:50001", "--talosconfig", "tc", "--context", "lab",
                "--call-timeout", "5s", "--concurrency", "4", "-o", "table", "--jq", ".items"});
    CHECK(o.addresses == std::vector<std::string>{"10.0.0.21", "10.0.0.11:50001"});
    CHECK(o.talos.talosconfig == "tc");
    CHECK(o.talos.context == "lab");
    CHECK(o.talos.call_timeout_ms == 5000);
    CHECK(o.talos.concurrency == 4);
    CHECK(o.output.format == "table");
    CHECK(o.output.jq == ".items");
    CHECK_FALSE(o.insecure);
    CHECK(o.input.file.empty());

    auto m = parsed({"10.0.0.31", "--insecure", "--cert-fingerprint", "abc="});
    CHECK(m.insecure);
    CHECK(m.fingerprint == "abc=");
    CHECK(m.talos.call_timeout_ms == 20000);
    CHECK(m.talos.concurrency == 16);
    CHECK(m.output.format == "yaml");

    auto f = parsed({"-f", "saved.yaml"});
    CHECK(f.input.file == "saved.yaml");
    CHECK(f.addresses.empty());
}
