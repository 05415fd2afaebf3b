// kubectl ichor reclaim's options (tools/reclaim/reclaim.cpp): every usage error, help, version,
// and a command line into Options.
#include "test_tools_support.h"
#include "tools/reclaim/reclaim.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::reclaim::parse_options;

namespace {
constexpr std::string_view k_verb = "reclaim";
const cli::RunFn k_run = tools::reclaim::run;
const std::string k_usage = "kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME";

tools::reclaim::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-reclaim");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("reclaim: every usage error is one line and exit 2", "[tools][reclaim]") {
    test::check_usage(k_run, k_verb, {"--cluster", "prod"}, "no address given", k_usage);
    test::check_usage(k_run, k_verb, {"10.0.0.21", "10.0.0.22", "--cluster", "prod"},
                      "one address at a time: reclaim resets one machine", k_usage);
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--talosconfig", "tc"},
                      "--cluster is required: the TalosCluster the machine joins", k_usage);
    test::check_usage(k_run, k_verb,
                      {"10.0.0.21", "--cluster", "prod", "--confirm-serial", "SER-41"},
                      "--confirm-serial goes with --confirm-uuid", k_usage);
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--cluster", "prod", "--wait-timeout", "10"},
                      "--wait-timeout: \"10\" is not a duration such as 15m, 90s or 1h");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--cluster", "prod", "--call-timeout", "x"},
                      "--call-timeout: \"x\" is not a duration such as 20s, 500ms or 1m");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--cluster", "prod", "-o", "xml"},
                      "unknown output format \"xml\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"10.0.0.21", "--cluster", "prod", "--yes"},
                      "Option \u2018yes\u2019 does not exist", "see --help");
}

TEST_CASE("reclaim: --help and --version", "[tools][reclaim]") {
    test::check_help(k_run, k_verb,
                     "Reset a machine that another cluster configured, and register it as a "
                     "pending TalosMachine.");
    test::check_version(k_run, k_verb, {"10.0.0.21", "10.0.0.22"});
}

TEST_CASE("reclaim: a command line fills the options", "[tools][reclaim]") {
    auto o = parsed({"10.0.0.21",
                     "--talosconfig",
                     "tc",
                     "--talos-context",
                     "lab-b",
                     "--cluster",
                     "prod",
                     "-n",
                     "ops",
                     "--force-ungraceful",
                     "--confirm-uuid",
                     "U",
                     "--confirm-serial",
                     "S",
                     "--wait-timeout",
                     "1h",
                     "--call-timeout",
                     "2s",
                     "-o",
                     "table"});
    CHECK(o.address == "10.0.0.21");
    CHECK(o.talos.talosconfig == "tc");
    CHECK(o.talos.context == "lab-b");
    CHECK(o.talos.call_timeout_ms == 2000);
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.force_ungraceful);
    CHECK(o.confirm_uuid == "U");
    CHECK(o.confirm_serial == "S");
    CHECK(o.wait_timeout_ms == 60 * 60 * 1000);
    CHECK(o.output.format == "table");

    auto d = parsed({"10.0.0.21", "--cluster", "prod"});
    CHECK_FALSE(d.force_ungraceful);
    CHECK(d.confirm_uuid.empty());
    CHECK(d.wait_timeout_ms == 15 * 60 * 1000);
    CHECK(d.talos.call_timeout_ms == 20000);
}
