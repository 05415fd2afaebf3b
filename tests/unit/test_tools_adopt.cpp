// kubectl ichor adopt's options (tools/adopt/adopt.cpp): every usage error, help, version, a
// command line into Options, and --explain (which prints without connecting anywhere).
#include "test_tools_support.h"
#include "tools/adopt/adopt.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::adopt::parse_options;

namespace {
constexpr std::string_view k_verb = "adopt";
const cli::RunFn k_run = tools::adopt::run;

tools::adopt::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-adopt");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("adopt: every usage error is one line and exit 2", "[tools][adopt]") {
    const std::string required = "--cluster NAME is required with --add-machine";
    const std::string hint =
        "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --talosconfig FILE";
    test::check_usage(k_run, k_verb, {"--add-machine", "10.0.0.21"}, required, hint);
    // a whole cluster: --nodes and --cni-unmanaged are not for --add-machine
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "--nodes", "10.0.0.2"},
                      "--nodes is for a whole cluster; with --add-machine the addresses are the "
                      "machines to add",
                      hint);
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "--cni-unmanaged"},
                      "--cni-unmanaged is for a whole cluster; with --add-machine the addresses "
                      "are the machines to add",
                      hint);
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "--cilium-values", "v"},
                      "--cilium-values is for a whole cluster; with --add-machine the addresses "
                      "are the machines to add",
                      hint);
    // the CNI: Ichor renders no Cilium for an unmanaged CNI
    test::check_usage(k_run, k_verb,
                      {"--talosconfig", "tc", "--cni-unmanaged", "--cilium-values", "v.yaml"},
                      "--cilium-values cannot be used with --cni-unmanaged: Ichor renders no "
                      "Cilium for an unmanaged CNI",
                      "drop --cilium-values");
    test::check_usage(k_run, k_verb,
                      {"--talosconfig", "tc", "--cni-unmanaged", "--accept-cilium-diff"},
                      "--accept-cilium-diff cannot be used with --cni-unmanaged: Ichor renders no "
                      "Cilium for an unmanaged CNI",
                      "drop --accept-cilium-diff");
    test::check_usage(k_run, k_verb, {"--talosconfig", "tc", "--parallel", "0"},
                      "--parallel must be 1 or more");
    test::check_usage(k_run, k_verb, {"--talosconfig", "tc", "--recover-from", "10.0.0.2"},
                      "--recover-from goes with --recover-secrets",
                      "kubectl ichor adopt --talosconfig FILE --recover-secrets --recover-from "
                      "CONTROL-PLANE");
    test::check_usage(k_run, k_verb,
                      {"--talosconfig", "tc", "--secrets-bundle", "b.yaml", "--recover-secrets"},
                      "give --secrets-bundle or --recover-secrets, not both");
    test::check_usage(
        k_run, k_verb, {"--cluster", "prod", "--add-machine", "10.0.0.21", "--recover-secrets"},
        "--recover-secrets and --recover-from ADDRESS go together",
        "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --recover-secrets --recover-from "
        "CONTROL-PLANE");
    test::check_usage(
        k_run, k_verb,
        {"--cluster", "prod", "--add-machine", "10.0.0.21", "--recover-from", "10.0.0.11"},
        "--recover-secrets and --recover-from ADDRESS go together",
        "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --recover-secrets --recover-from "
        "CONTROL-PLANE");
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "--secrets-bundle",
                       "s.yaml", "--recover-secrets", "--recover-from", "10.0.0.11"},
                      "give --secrets-bundle or --recover-secrets, not both");
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "--timeout", "forever"},
                      "--timeout is not a duration");
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "-o", "xml"},
                      "unknown output format \"xml\"; allowed: yaml, json, table, objects");
    test::check_usage(k_run, k_verb, {"--cluster", "prod", "--add-machine"},
                      "Option \u2018add-machine\u2019 is missing an argument", "see --help");
}

TEST_CASE("adopt: --help and --version", "[tools][adopt]") {
    test::check_help(k_run, k_verb,
                     "Adopt a running Talos cluster that Ichor did not make, or add machines that "
                     "already run a configuration signed by an Ichor cluster's CAs, without a "
                     "reset.");
    test::check_version(k_run, k_verb, {"--cluster", "prod"});
}

TEST_CASE("adopt: a whole cluster's command line fills the options", "[tools][adopt]") {
    auto o = parsed({"--talosconfig", "tc", "--nodes", "10.0.0.2,10.0.0.3", "--cni-unmanaged",
                     "--parallel", "3", "--recover-secrets", "--recover-to", "b.yaml"});
    CHECK(o.add_machines.empty());
    CHECK(o.nodes == std::vector<std::string>{"10.0.0.2", "10.0.0.3"});
    CHECK(o.cni_unmanaged);
    CHECK(o.parallel == 3);
    CHECK(o.bundle.recover);
    CHECK(o.bundle.recover_from.empty()); // the first control plane
    CHECK(o.bundle.recover_to == "b.yaml");
    CHECK(o.cilium_values.empty());
    CHECK_FALSE(o.accept_cilium_diff);
    auto c = parsed({"--talosconfig", "tc", "--cilium-values", "v.yaml", "--accept-cilium-diff"});
    CHECK(c.cilium_values == "v.yaml");
    CHECK(c.accept_cilium_diff);
    CHECK_FALSE(c.cni_unmanaged);
    CHECK(o.kube.cluster.empty()); // the cluster's own name
}

TEST_CASE("adopt: a command line fills the options", "[tools][adopt]") {
    auto o = parsed({"--cluster",
                     "prod",
                     "--add-machine",
                     "10.0.0.21",
                     "--add-machine",
                     "10.0.0.22",
                     "--talosconfig",
                     "tc",
                     "--plan",
                     "--yes",
                     "--keep-stages",
                     "st",
                     "--backup-dir",
                     "bk",
                     "--timeout",
                     "90s",
                     "-n",
                     "ops",
                     "--recover-secrets",
                     "--recover-from",
                     "10.0.0.11"});
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.add_machines == std::vector<std::string>{"10.0.0.21", "10.0.0.22"});
    CHECK(o.talos.talosconfig == "tc");
    CHECK(o.plan_only);
    CHECK(o.yes);
    CHECK_FALSE(o.explain);
    CHECK(o.keep_stages == "st");
    CHECK(o.backup_dir == "bk");
    CHECK(o.timeout_ms == 90000);
    CHECK(o.bundle.recover);
    CHECK(o.bundle.recover_from == "10.0.0.11");

    auto d = parsed({"--cluster", "prod", "--add-machine", "10.0.0.21"});
    CHECK_FALSE(d.plan_only);
    CHECK_FALSE(d.yes);
    CHECK(d.backup_dir == "ichor-backups");
    CHECK(d.timeout_ms == 15 * 60 * 1000);
    CHECK(d.bundle.from_secret());
    CHECK(d.output.format == "yaml");
    CHECK(d.node_check); // on by default
}

TEST_CASE("adopt --explain prints the pipe of single tools and connects to nothing",
          "[tools][adopt]") {
    test::Ran r = test::run_tool(k_run, k_verb,
                                 {"--cluster", "prod", "--add-machine", "10.0.0.21",
                                  "--add-machine", "10.0.0.22", "--talosconfig", "tc",
                                  "--secrets-bundle", "s.yaml", "-n", "ops", "--yes", "--explain"});
    CHECK(r.rc == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "kubectl ichor inspect 10.0.0.21 10.0.0.22 --talosconfig tc \\\n"
          " | kubectl ichor trustcheck --cluster prod -n ops --secrets-bundle s.yaml \\\n"
          " | kubectl ichor drift --cluster prod -n ops --secrets-bundle s.yaml --add-machine "
          "--node-check --talosconfig tc > plan.yaml\n"
          "kubectl ichor hold apply -f plan.yaml -n ops --talosconfig tc --yes\n"
          "kubectl ichor hold release --cluster prod -n ops --talosconfig tc\n");

    auto plan = parsed({"--cluster", "prod", "--add-machine", "10.0.0.21", "--plan",
                        "--recover-secrets", "--recover-from", "10.0.0.11", "--talosconfig", "tc"});
    CHECK(tools::adopt::explain(plan) ==
          "kubectl ichor inspect 10.0.0.21 --talosconfig tc \\\n"
          " | kubectl ichor trustcheck --cluster prod --recover-secrets --recover-from 10.0.0.11 "
          "--talosconfig tc \\\n"
          " | kubectl ichor drift --cluster prod --add-machine --node-check --talosconfig tc > "
          "plan.yaml\n");

    auto unchecked = parsed({"--cluster", "prod", "--add-machine", "10.0.0.21", "--plan",
                             "--talosconfig", "tc", "--no-node-check"});
    CHECK_FALSE(unchecked.node_check);
    CHECK(tools::adopt::explain(unchecked).find(
              " | kubectl ichor drift --cluster prod --add-machine > plan.yaml\n") !=
          std::string::npos);
}

TEST_CASE("adopt: an argument no flag takes is refused, not ignored", "[tools][adopt]") {
    test::check_usage(k_run, k_verb,
                      {"--cluster", "prod", "--add-machine", "10.0.0.21", "10.0.0.22"},
                      "unexpected argument \"10.0.0.22\"", "see --help");
}
