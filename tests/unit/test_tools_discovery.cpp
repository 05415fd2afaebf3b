// kubectl ichor discovery's options (tools/discovery/discovery.cpp): the action, the address
// (refused before anything connects), help, version and a command line into Options.
#include "test_tools_support.h"
#include "tools/discovery/discovery.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::discovery::parse_options;

namespace {
constexpr std::string_view k_verb = "discovery";
const cli::RunFn k_run = tools::discovery::run;
} // namespace

TEST_CASE("discovery: every usage error is one line and exit 2", "[tools][discovery]") {
    const std::string hint = "kubectl ichor discovery add ADDRESS --cluster NAME";
    test::check_usage(k_run, k_verb, {}, "give one action: add", hint);
    test::check_usage(k_run, k_verb, {"remove", "10.0.0.31", "--cluster", "prod"},
                      "give one action: add", hint);
    test::check_usage(k_run, k_verb, {"add", "--cluster", "prod"},
                      "discovery add takes one ADDRESS", hint);
    test::check_usage(k_run, k_verb, {"add", "10.0.0.31", "10.0.0.32", "--cluster", "prod"},
                      "discovery add takes one ADDRESS", hint);
    test::check_usage(k_run, k_verb, {"add", "10.0.0.31"}, "--cluster is required", hint);
    // A malformed address is refused by the parser: nothing connects, nothing is written.
    test::check_usage(k_run, k_verb, {"add", "10.0.0.31:99999", "--cluster", "prod"},
                      "bad address \"10.0.0.31:99999\": port 99999 is out of range",
                      "an address is HOST, HOST:PORT, [V6] or [V6]:PORT");
    test::check_usage(k_run, k_verb, {"add", "10.0.0.31", "--cluster", "prod", "-o", "xml"},
                      "unknown output format \"xml\"; allowed: yaml, json, table, objects");
}

TEST_CASE("discovery: --help and --version", "[tools][discovery]") {
    test::check_help(k_run, k_verb,
                     "Add an address to a TalosCluster's discovery and say what becomes of the "
                     "machine there.");
    test::check_version(k_run, k_verb, {"add", "10.0.0.31", "--cluster", "prod"});
}

TEST_CASE("discovery: a command line fills the options", "[tools][discovery]") {
    auto p = parse_options({"kubectl-ichor-discovery", "add", "[fd00::21]:50001", "--cluster",
                            "prod", "-n", "ops", "--talosconfig", "tc", "-o", "json"});
    REQUIRE(p.ok());
    REQUIRE(p->options);
    const auto& o = *p->options;
    CHECK(o.action == "add");
    CHECK(o.address.host == "fd00::21");
    CHECK(o.address.port == 50001);
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.talos.talosconfig == "tc");
    CHECK(o.output.format == "json");
}
