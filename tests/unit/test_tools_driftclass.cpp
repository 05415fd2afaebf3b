// kubectl ichor drift's options (tools/driftclass/driftclass.cpp): every usage error, help,
// version, and a command line into Options.
#include "test_tools_support.h"
#include "tools/driftclass/driftclass.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::driftclass::parse_options;

namespace {
constexpr std::string_view k_verb = "drift";
const cli::RunFn k_run = tools::driftclass::run;

tools::driftclass::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-drift");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("drift: every usage error is one line and exit 2", "[tools][driftclass]") {
    const std::string offline = "kubectl ichor drift --cluster NAME --cluster-file FILE "
                                "--patches-file FILE --secrets-bundle FILE";
    test::check_usage(k_run, k_verb, {}, "--cluster is required",
                      "kubectl ichor drift --cluster NAME");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--cluster-file", "c.yaml"},
                      "--cluster-file and --patches-file go together", offline);
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--patches-file", "p.yaml"},
                      "--cluster-file and --patches-file go together", offline);
    test::check_usage(
        k_run, k_verb,
        {"--cluster", "prod", "--cluster-file", "c.yaml", "--patches-file", "p.yaml"},
        "--cluster-file needs --secrets-bundle FILE (offline, the bundle Secret is not read)",
        offline);
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "-o", "tabel"},
                      "unknown output format \"tabel\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--recover-secrets"},
                      "Option \u2018recover-secrets\u2019 does not exist", "see --help");
}

TEST_CASE("drift: --help and --version", "[tools][driftclass]") {
    test::check_help(k_run, k_verb,
                     "Plan the adoption of trusted nodes: the objects to create, and each node's "
                     "drift by class.");
    test::check_version(k_run, k_verb);
}

TEST_CASE("drift: a command line fills the options", "[tools][driftclass]") {
    auto o = parsed({"--cluster", "prod", "-n", "ops", "-f", "trusted.yaml", "--cluster-file",
                     "c.yaml", "--patches-file", "p.yaml", "--secrets-bundle", "s.yaml",
                     "--add-machine", "-o", "table"});
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.input.file == "trusted.yaml");
    CHECK(o.cluster_file == "c.yaml");
    CHECK(o.patches_file == "p.yaml");
    CHECK(o.bundle.file == "s.yaml");
    CHECK(o.add_machine);
    CHECK(o.output.format == "table");

    auto online = parsed({"--cluster", "prod"});
    CHECK(online.cluster_file.empty());
    CHECK(online.bundle.from_secret());
    CHECK_FALSE(online.add_machine);
    CHECK(online.output.format == "yaml");
}
