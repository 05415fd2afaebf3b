// kubectl ichor hold's options (tools/hold/hold.cpp): every usage error, help, version, and a
// command line into Options.
#include "test_tools_support.h"
#include "tools/hold/hold.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::hold::parse_options;

namespace {
constexpr std::string_view k_verb = "hold";
const cli::RunFn k_run = tools::hold::run;

tools::hold::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-hold");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("hold: every usage error is one line and exit 2", "[tools][hold]") {
    const std::string one = "give one action: apply, release or abort";
    test::check_usage(k_run, k_verb, {}, one, "kubectl ichor hold --help");
    test::check_usage(k_run, k_verb, {"pause", "--cluster", "prod"}, one,
                      "kubectl ichor hold --help");
    test::check_usage(k_run, k_verb, {"release", "abort", "--cluster", "prod"}, one,
                      "kubectl ichor hold --help");
    test::check_usage(k_run, k_verb, {"release"}, "--cluster is required for hold release",
                      "kubectl ichor hold release --cluster NAME");
    test::check_usage(k_run, k_verb, {"abort", "--machine", "prod-w-2"},
                      "--cluster is required for hold abort",
                      "kubectl ichor hold abort --cluster NAME");
    test::check_usage(k_run, k_verb, {"release", "--cluster", "prod", "--timeout", "later"},
                      "--timeout is not a duration");
    test::check_usage(k_run, k_verb, {"apply", "-o", "xml"},
                      "unknown output format \"xml\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"release", "--cluster", "prod", "--concurrency", "2000"},
                      "--concurrency must be between 1 and 1024");
    test::check_usage(k_run, k_verb, {"apply", "--recover-secrets"},
                      "Option \u2018recover-secrets\u2019 does not exist", "see --help");
}

TEST_CASE("hold: --help and --version", "[tools][hold]") {
    test::check_help(
        k_run, k_verb,
        "Write a plan as held machines, release them after a live zero-drift check, or abort.");
    test::check_version(k_run, k_verb, {"release"});
}

TEST_CASE("hold: a command line fills the options", "[tools][hold]") {
    auto a = parsed({"apply", "-f", "plan.yaml", "--yes", "--backup-dir", "b", "-n", "ops"});
    CHECK(a.action == "apply");
    CHECK(a.input.file == "plan.yaml");
    CHECK(a.yes);
    CHECK(a.backup_dir == "b");
    CHECK(a.kube.ns == "ops");
    CHECK(a.kube.cluster.empty()); // apply takes the namespace from the plan's objects

    auto r = parsed({"release", "--cluster", "prod", "--talosconfig", "tc", "--talos-context",
                     "lab", "--machine", "prod-w-2", "--machine", "prod-cp-1", "--timeout", "5m",
                     "--secrets-bundle", "s.yaml", "--call-timeout", "30s"});
    CHECK(r.action == "release");
    CHECK(r.kube.cluster == "prod");
    CHECK(r.talos.talosconfig == "tc");
    CHECK(r.talos.context == "lab");
    CHECK(r.talos.call_timeout_ms == 30000);
    CHECK(r.machines == std::vector<std::string>{"prod-w-2", "prod-cp-1"});
    CHECK(r.timeout_ms == 5 * 60 * 1000);
    CHECK(r.bundle.file == "s.yaml");
    CHECK_FALSE(r.yes);
    CHECK(r.backup_dir == "ichor-backups");

    auto d = parsed({"abort", "--cluster", "prod"});
    CHECK(d.action == "abort");
    CHECK(d.machines.empty());
    CHECK(d.timeout_ms == 15 * 60 * 1000);
    CHECK(d.bundle.from_secret());
}

TEST_CASE("hold: release reaches the nodes through --endpoints, or dials them with --direct",
          "[tools][hold]") {
    auto r = parsed({"release", "--cluster", "prod", "--endpoints", "10.0.0.11"});
    REQUIRE(r.talos.endpoints.size() == 1);
    CHECK(r.talos.endpoints[0].text == "10.0.0.11");
    talos::TalosContext c;
    c.endpoints = {"10.0.0.12"};
    c.nodes = {"10.0.0.21"};
    auto ep = r.talos.endpoint_for(c);
    REQUIRE(ep.ok());
    REQUIRE(ep->has_value());
    CHECK((*ep)->text == "10.0.0.11"); // the flag before the context's endpoint
    auto d = parsed({"release", "--cluster", "prod", "--direct"});
    auto none = d.talos.endpoint_for(c);
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    test::check_usage(k_run, k_verb,
                      {"release", "--cluster", "prod", "--endpoints", "10.0.0.11", "--direct"},
                      "give --endpoints or --direct, not both");
    test::check_usage(k_run, k_verb, {"release", "--cluster", "prod", "--endpoints", "10.0.0.11:x"},
                      "--endpoints: bad address \"10.0.0.11:x\": port \"x\" is not a number");
}
