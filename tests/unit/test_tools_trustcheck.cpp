// kubectl ichor trustcheck's options (tools/trustcheck/trustcheck.cpp): every usage error, help,
// version, and a command line into Options.
#include "test_tools_support.h"
#include "tools/trustcheck/trustcheck.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::trustcheck::parse_options;

namespace {
constexpr std::string_view k_verb = "trustcheck";
const cli::RunFn k_run = tools::trustcheck::run;

tools::trustcheck::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-trustcheck");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("trustcheck: every usage error is one line and exit 2", "[tools][trustcheck]") {
    const std::string recover =
        "kubectl ichor trustcheck --cluster NAME --recover-secrets --recover-from ADDRESS";
    test::check_usage(k_run, k_verb, {}, "--cluster is required",
                      "kubectl ichor trustcheck --cluster NAME");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--recover-secrets"},
                      "--recover-secrets and --recover-from ADDRESS go together", recover);
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--recover-from", "10.0.0.11"},
                      "--recover-secrets and --recover-from ADDRESS go together", recover);
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--secrets-bundle", "s.yaml", "--recover-secrets",
                       "--recover-from", "10.0.0.11"},
                      "give --secrets-bundle or --recover-secrets, not both");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "-o", "xml"},
                      "unknown output format \"xml\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--call-timeout", "0s"},
                      "--call-timeout: \"0s\" is not a duration such as 20s, 500ms or 1m");
}

TEST_CASE("trustcheck: --help and --version", "[tools][trustcheck]") {
    test::check_help(k_run, k_verb,
                     "Check that each inspected node carries the cluster's CAs: its cluster ID and "
                     "Talos API CA.");
    test::check_version(k_run, k_verb);
}

TEST_CASE("trustcheck: a command line fills the options", "[tools][trustcheck]") {
    auto o = parsed({"--cluster",
                     "prod",
                     "-n",
                     "ops",
                     "--kubeconfig",
                     "kc",
                     "--context",
                     "admin",
                     "--recover-secrets",
                     "--recover-from",
                     "10.0.0.11",
                     "--recover-to",
                     "r.yaml",
                     "--talosconfig",
                     "tc",
                     "--talos-context",
                     "lab",
                     "-f",
                     "in.yaml",
                     "-o",
                     "json"});
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.kube.kubeconfig == "kc");
    CHECK(o.kube.context == "admin");
    CHECK(o.bundle.recover);
    CHECK(o.bundle.recover_from == "10.0.0.11");
    CHECK(o.bundle.recover_to == "r.yaml");
    CHECK(o.talos.talosconfig == "tc");
    CHECK(o.talos.context == "lab");
    CHECK(o.input.file == "in.yaml");
    CHECK(o.output.format == "json");

    auto d = parsed({"--cluster", "prod"});
    CHECK(d.bundle.from_secret());
    CHECK(d.kube.ns.empty());
    CHECK(d.input.file.empty());
}

TEST_CASE("trustcheck: --recover-from's control plane is reached through --endpoints",
          "[tools][trustcheck]") {
    auto o = parsed({"--cluster", "prod", "--recover-secrets", "--recover-from", "10.0.0.12",
                     "--talosconfig", "tc", "--endpoints", "10.0.0.11:50001"});
    REQUIRE(o.talos.endpoints.size() == 1);
    CHECK(o.talos.endpoints[0].port == 50001);
    talos::TalosContext c; // a context without nodes: only the flag routes
    c.endpoints = {"10.0.0.12"};
    auto ep = o.talos.endpoint_for(c);
    REQUIRE(ep.ok());
    REQUIRE(ep->has_value());
    CHECK((*ep)->text == "10.0.0.11:50001");
    auto plain = parsed({"--cluster", "prod", "--recover-secrets", "--recover-from", "10.0.0.12"});
    auto direct = plain.talos.endpoint_for(c);
    REQUIRE(direct.ok());
    CHECK_FALSE(direct->has_value());
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--direct", "--endpoints", "10.0.0.11"},
                      "give --endpoints or --direct, not both");
}
