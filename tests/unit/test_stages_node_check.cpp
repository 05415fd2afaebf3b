// The node check (common/stages/node_check.h): each planned machine rendered with every layer and
// dry-run on its node, through a fake node (the options' seam), so that every answer is tested
// without a network.
#include "common/cli/errors.h"
#include "common/stages/node_check.h"
#include "common/util/strings.h"
#include "test_plan_support.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>

using namespace ichor;
using doc::Value;

namespace {

using Fixture = test::PlanFixture;

// A fake node: records what it was sent and answers what the test says, per address. Only the
// call on the node is faked: the stage runs its machines on its loops as the product does.
struct FakeNodes {
    std::mutex mu;
    std::map<std::string, std::string> sent; // address -> the config
    std::map<std::string, std::string> via;  // address -> the endpoint it was asked through
    std::map<std::string, Result<ichor::talos::DryRunAnswer>> answers;

    stages::DryRunNode seam() {
        return [this](ichor::talos::Loop& /*loop*/, const stages::NodeTarget& t,
                      const std::string& config,
                      const ichor::talos::NodeClient::Done<ichor::talos::DryRunAnswer>& done) {
            done(answer(t, config));
        };
    }

    Result<ichor::talos::DryRunAnswer> answer(const stages::NodeTarget& t,
                                              const std::string& config) {
        std::lock_guard<std::mutex> lock(mu);
        sent[t.address.text] = config;
        via[t.address.text] = t.via_endpoint;
        auto a = answers.find(t.address.text);
        if (a == answers.end()) {
            return ichor::talos::DryRunAnswer{no_changes(), {}};
        }
        return a->second;
    }

    static std::string no_changes() {
        return "Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\n"
               "Config diff:\n\nNo changes.";
    }
};

std::string answer_with_diff(const std::string& diff) {
    return "Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\n"
           "Config diff:\n\n" +
           diff;
}

Value patch(const std::string& name, const std::string& layer, const std::string& target, int order,
            const std::string& text) {
    Value p = Value::object();
    p["apiVersion"] = "ichor.maesh.dev/v1alpha1";
    p["kind"] = "TalosConfigPatch";
    p["metadata"]["name"] = name;
    p["metadata"]["namespace"] = "ichor-system";
    p["spec"]["cluster"] = "prod";
    p["spec"]["layer"] = layer;
    if (layer == "role") {
        p["spec"]["role"] = target;
    } else if (layer == "machine") {
        p["spec"]["machine"] = target;
    }
    p["spec"]["order"] = order;
    p["spec"]["patch"] = text;
    return p;
}

std::vector<const Value*> results_of(const doc::ResourceList& l, const std::string& code) {
    std::vector<const Value*> out;
    for (const auto& r : l.results) {
        if (r["tags"].value("ichor.maesh.dev/code", "") == code) {
            out.push_back(&r);
        }
    }
    return out;
}

int count_kind(const doc::ResourceList& l, const std::string& kind) {
    int n = 0;
    for (const auto& i : l.items) {
        n += i.value("kind", "") == kind;
    }
    return n;
}

stages::NodeCheckOptions options(Fixture& fx, FakeNodes& nodes, std::vector<Value> patches = {}) {
    stages::NodeCheckOptions o;
    o.cluster = "prod";
    o.ns = "ichor-system";
    o.talos_cluster = &fx.cluster;
    o.bundle = &fx.bundle;
    o.patches = std::move(patches);
    o.inspect.concurrency = 4;
    o.dry_run = nodes.seam();
    return o;
}

} // namespace

TEST_CASE("each planned machine is rendered with every layer and dry-run on its node",
          "[node-check]") {
    Fixture fx;
    doc::ResourceList plan;
    plan.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    Value b = fx.inspection("10.0.0.22", "prod-w-3", "w-1.13");
    b["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}}; // class A
    plan.items.push_back(b);
    std::vector<Value> cluster_patches = {
        patch("all-nodes", "cluster", "", 0,
              "machine:\n  sysctls:\n    fs.inotify.max_user_watches: \"1048576\"\n"),
        patch("workers", "role", "worker", 0,
              "machine:\n  kernel:\n    modules:\n      - name: br_netfilter\n")};
    for (auto& i : plan.items) {
        i["status"]["config"][0]["machine"]["sysctls"]["fs.inotify.max_user_watches"] = "1048576";
        i["status"]["config"][0]["machine"]["kernel"]["modules"] =
            Value::array({Value{{"name", "br_netfilter"}}});
    }
    REQUIRE_FALSE(fx.run(plan, {}, cluster_patches, true).error);
    REQUIRE(count_kind(plan, "TalosMachine") == 2);
    REQUIRE(count_kind(plan, "TalosConfigPatch") == 1); // prod-w-3-adopted, the class A capture
    FakeNodes nodes;
    auto out = stages::node_check(plan, options(fx, nodes, cluster_patches));
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 2);
    CHECK(out.stopped == 0);
    CHECK(cli::exit_code(out) == 0);
    REQUIRE(nodes.sent.size() == 2);
    for (const auto& [addr, config] : nodes.sent) {
        INFO(addr);
        CHECK(config.find("fs.inotify.max_user_watches: \"1048576\"") != std::string::npos);
        CHECK(config.find("- name: br_netfilter") != std::string::npos);
        CHECK(nodes.via[addr].empty());
    }
    CHECK(nodes.sent["10.0.0.22"].find("vm.swappiness: \"1\"") != std::string::npos);
    CHECK(nodes.sent["10.0.0.21"].find("vm.swappiness") == std::string::npos);
    auto info = results_of(plan, "NodeCheck");
    REQUIRE(info.size() == 2);
    CHECK((*info[0])["message"] ==
          "prod-w-2 (10.0.0.21): the node accepts the rendered configuration; it would change "
          "nothing");
    CHECK((*info[0])["severity"] == "info");
    CHECK((*info[0])["tags"]["ichor.maesh.dev/stage"] == "node-check");
    CHECK((*info[0])["tags"]["ichor.maesh.dev/node"] == "10.0.0.21");
    CHECK((*info[0])["tags"]["ichor.maesh.dev/node-answer"] == FakeNodes::no_changes());
    CHECK((*info[0])["resourceRef"]["kind"] == "TalosMachine");
    CHECK(results_of(plan, "NodeCheckMismatch").empty());

    SECTION("run again over its own output, it replaces its results") {
        auto again = stages::node_check(plan, options(fx, nodes, cluster_patches));
        CHECK(again.done == 2);
        CHECK(results_of(plan, "NodeCheck").size() == 2);
    }
}

TEST_CASE("a configuration the node rejects blocks that machine with the node's words",
          "[node-check]") {
    Fixture fx;
    doc::ResourceList plan;
    plan.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    Value b = fx.inspection("10.0.0.22", "prod-w-3", "w-1.13");
    b["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    plan.items.push_back(b);
    REQUIRE_FALSE(fx.run(plan, {}, {}, true).error);
    FakeNodes nodes;
    nodes.answers.emplace(
        "10.0.0.22",
        make_error(ErrorKind::Findings,
                   "10.0.0.22: InvalidArgument (ApplyConfiguration): 1 error occurred:\n\t* "
                   ".cluster.discovery should be enabled when .machine.network.kubespan is "
                   "enabled\n\n",
                   {}, "InvalidArgument"));
    auto out = stages::node_check(plan, options(fx, nodes));
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 1);
    CHECK(out.stopped == 1);
    CHECK(out.unreachable == 0);
    CHECK(cli::exit_code(out) == 5);
    auto rejected = results_of(plan, "NodeRejected");
    REQUIRE(rejected.size() == 1);
    CHECK((*rejected[0])["severity"] == "error");
    CHECK((*rejected[0])["message"] ==
          "prod-w-3 (10.0.0.22): the node rejects the rendered configuration: 1 error occurred: * "
          ".cluster.discovery should be enabled when .machine.network.kubespan is enabled; this "
          "machine is blocked; hint: kubectl get talosconfigpatches -n ichor-system -l "
          "ichor.maesh.dev/cluster=prod (fix the patch the node's words point to)");
    // the blocked machine and its own patch leave the plan; the other machine stays
    CHECK(count_kind(plan, "TalosMachine") == 1);
    CHECK(count_kind(plan, "TalosConfigPatch") == 0);
    CHECK(plan.has_errors());

    SECTION("a node that does not answer is a failed check, counted unreachable") {
        doc::ResourceList again;
        again.items.push_back(fx.inspection("10.0.0.23", "prod-w-4", "w-1.13"));
        REQUIRE_FALSE(fx.run(again, {}, {}, true).error);
        FakeNodes gone;
        gone.answers.emplace("10.0.0.23",
                             make_error(ErrorKind::Unreachable,
                                        "10.0.0.23 did not answer within 20s (ApplyConfiguration)",
                                        {}, "Timeout"));
        auto o = stages::node_check(again, options(fx, gone));
        CHECK(o.stopped == 1);
        CHECK(o.unreachable == 1);
        auto f = results_of(again, "NodeCheckFailed");
        REQUIRE(f.size() == 1);
        CHECK((*f[0])["message"].get<std::string>().starts_with(
            "prod-w-4 (10.0.0.23): the node could not check the plan: 10.0.0.23 did not answer "
            "within 20s (ApplyConfiguration); this machine is blocked"));
        CHECK(count_kind(again, "TalosMachine") == 0);
    }
}

TEST_CASE("the node's changes against the plan's class B", "[node-check]") {
    Fixture fx;
    doc::ResourceList plan;
    Value a = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    a["status"]["config"][0]["machine"]["kubelet"]["image"] = "ghcr.io/siderolabs/kubelet:v1.33.1";
    plan.items.push_back(a);
    REQUIRE_FALSE(fx.run(plan, {}, {}, true).error);
    REQUIRE(count_kind(plan, "TalosMachine") == 1);
    FakeNodes nodes;
    const std::string kubelet_diff = "--- a\n+++ b\n@@ -8,7 +8,7 @@\n     ca:\n"
                                     "         crt: LS0t\n     kubelet:\n"
                                     "-        image: ghcr.io/siderolabs/kubelet:v1.33.1\n"
                                     "+        image: ghcr.io/siderolabs/kubelet:v1.34.4\n"
                                     "         defaultRuntimeSeccompProfileEnabled: true\n";

    SECTION("they agree: no finding") {
        nodes.answers.emplace("10.0.0.21",
                              ichor::talos::DryRunAnswer{answer_with_diff(kubelet_diff), {}});
        auto out = stages::node_check(plan, options(fx, nodes));
        CHECK(out.done == 1);
        auto info = results_of(plan, "NodeCheck");
        REQUIRE(info.size() == 1);
        CHECK((*info[0])["message"] == "prod-w-2 (10.0.0.21): the node accepts the rendered "
                                       "configuration; it would change kubelet.image");
        CHECK(results_of(plan, "NodeCheckMismatch").empty());
    }
    SECTION("the node changes more, and sees no change the plan lists: both named") {
        nodes.answers.emplace("10.0.0.21",
                              ichor::talos::DryRunAnswer{
                                  answer_with_diff("--- a\n+++ b\n@@ -20,3 +20,5 @@\n machine:\n"
                                                   "+    sysctls:\n"
                                                   "+        vm.swappiness: \"1\"\n"
                                                   "     features:\n"),
                                  {"a warning"}});
        auto out = stages::node_check(plan, options(fx, nodes));
        CHECK(out.done == 1); // a finding, not a block
        CHECK(cli::exit_code(out) == 0);
        auto m = results_of(plan, "NodeCheckMismatch");
        REQUIRE(m.size() == 1);
        CHECK((*m[0])["severity"] == "warning");
        CHECK((*m[0])["message"].get<std::string>().starts_with(
            "prod-w-2 (10.0.0.21): the node's changes and the plan's class B disagree (the node: "
            "machine.sysctls.vm.swappiness; the plan: machine.kubelet.image): the node would "
            "change machine.sysctls.vm.swappiness, which the plan does not list; the plan lists "
            "machine.kubelet.image as class B, which the node would not change; the render or the "
            "diff is wrong"));
        auto info = results_of(plan, "NodeCheck");
        REQUIRE(info.size() == 1);
        CHECK((*info[0])["message"].get<std::string>().ends_with("; the node warns: a warning"));
    }
    SECTION("the render replaces the node's install selector: excused, and the plan says so") {
        nodes.answers.emplace(
            "10.0.0.21",
            ichor::talos::DryRunAnswer{
                answer_with_diff(kubelet_diff + "@@ -30,4 +30,3 @@\n machine:\n     install:\n"
                                                "-        diskSelector:\n"
                                                "-            size: '>= 100GB'\n"
                                                "+        disk: /dev/sda\n"),
                {}});
        auto out = stages::node_check(plan, options(fx, nodes));
        CHECK(out.done == 1);
        CHECK(results_of(plan, "NodeCheckMismatch").empty());
        auto replaced = results_of(plan, "InstallReplaced");
        REQUIRE(replaced.size() == 1);
        CHECK((*replaced[0])["severity"] == "info");
        const std::string m = (*replaced[0])["message"].get<std::string>();
        CHECK(m.starts_with("prod-w-2 (10.0.0.21): the render replaces the node's install "
                            "settings machine.install.diskSelector"));
        CHECK(m.find("machine.install.disk") != std::string::npos);
        CHECK(m.find("kubelet") == std::string::npos); // class B is not an install setting
    }
    SECTION("no install change: no such line") {
        nodes.answers.emplace("10.0.0.21",
                              ichor::talos::DryRunAnswer{answer_with_diff(kubelet_diff), {}});
        stages::node_check(plan, options(fx, nodes));
        CHECK(results_of(plan, "InstallReplaced").empty());
    }
}

TEST_CASE("a node read through an endpoint is asked through it", "[node-check]") {
    Fixture fx;
    doc::ResourceList plan;
    Value a = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    a["spec"]["endpoint"] = "10.0.0.10";
    plan.items.push_back(a);
    REQUIRE_FALSE(fx.run(plan, {}, {}, true).error);
    FakeNodes nodes;
    auto out = stages::node_check(plan, options(fx, nodes));
    CHECK(out.done == 1);
    CHECK(nodes.via["10.0.0.21"] == "10.0.0.10");
}

TEST_CASE("a plan without machines, and a render that fails", "[node-check]") {
    Fixture fx;
    FakeNodes nodes;
    doc::ResourceList empty;
    auto none = stages::node_check(empty, options(fx, nodes));
    CHECK_FALSE(none.error);
    CHECK(none.done == 0);
    CHECK(empty.results.empty());

    doc::ResourceList plan;
    plan.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    REQUIRE_FALSE(fx.run(plan, {}, {}, true).error);
    auto out = stages::node_check(
        plan, options(fx, nodes, {patch("broken", "cluster", "", 0, "machine: [1, 2]\n")}));
    CHECK(out.stopped == 1);
    CHECK(nodes.sent.empty()); // nothing to ask
    auto f = results_of(plan, "NodeCheckFailed");
    REQUIRE(f.size() == 1);
    CHECK((*f[0])["message"].get<std::string>().find("TalosConfigPatch broken") !=
          std::string::npos);
}

TEST_CASE("dry_run_changes reads the paths of machined's diff", "[node-check]") {
    CHECK(stages::dry_run_changes(FakeNodes::no_changes()).empty());
    CHECK(stages::dry_run_changes("Applied configuration without a reboot").empty());
    const std::string diff = answer_with_diff(
        "--- a\n+++ b\n@@ -1,9 +1,10 @@\n version: v1alpha1\n machine:\n     type: worker\n"
        "+    certSANs:\n+        - 10.0.0.9\n     sysctls:\n-        net.core.somaxconn: "
        "\"1024\"\n"
        "+        net.core.somaxconn: \"65535\"\n@@ -40,4 +41,8 @@\n"
        "             - name: x\n-              value: 1\n+---\n+apiVersion: v1alpha1\n"
        "+kind: HostnameConfig\n+hostname: w-1\n");
    CHECK(stages::dry_run_changes(diff) ==
          std::vector<std::string>{"machine.certSANs", "machine.sysctls.net.core.somaxconn",
                                   "value", "HostnameConfig"});
}

TEST_CASE("dry_run_changes finds an added line's parent among the lines the new side keeps",
          "[node-check]") {
    // issue 26's field trial (a worker given the control planes' images by its owner): the render
    // removes cluster.scheduler and adds proxy's `disabled` right after that removed key; in the
    // configuration after the change `disabled` is under proxy, never under the removed scheduler
    const std::string diff = answer_with_diff(
        "--- a\n+++ b\n@@ -1,6 +1,4 @@\n cluster:\n     proxy:\n"
        "-        image: registry.k8s.io/kube-proxy:v1.36.3\n-    scheduler:\n"
        "-        image: registry.k8s.io/kube-scheduler:v1.36.3\n+        disabled: true\n"
        "     discovery:\n         enabled: true\n");
    CHECK(stages::dry_run_changes(diff) == std::vector<std::string>{"cluster.proxy.image",
                                                                    "cluster.scheduler.image",
                                                                    "cluster.proxy.disabled"});
}

TEST_CASE("dry_run_changes: an empty mapping, list or null added or removed is no change",
          "[node-check]") {
    // issue 26's field trial (Terraform's `kernel: {modules: null}` leaves `kernel: {}` on the
    // node): the drift drops empty values, so the render's lack of them is not a change either
    const std::string diff = answer_with_diff(
        "--- a\n+++ b\n@@ -1,8 +1,6 @@\n machine:\n-    kernel: {}\n-    sysfs: null\n"
        "     network:\n-        interfaces: []\n+        hostname: w-1\n     sysctls:\n"
        "-        vm.max_map_count: \"262144\"\n");
    CHECK(stages::dry_run_changes(diff) ==
          std::vector<std::string>{"machine.network.hostname", "machine.sysctls.vm.max_map_count"});
}

TEST_CASE("dry_run_changes names a typed document's lines by their v1alpha1 homes",
          "[node-check]") {
    // Talos 1.14 adds the discovery document whole: one fact, the subtree it moves.
    const std::string added = answer_with_diff(
        "--- a\n+++ b\n@@ -20,3 +20,8 @@\n kind: KubeletConfig\n clusterDNS:\n     - 10.96.0.10\n"
        "+---\n+apiVersion: v1alpha1\n+kind: DiscoveryServiceConfig\n+name: default\n"
        "+endpoint: https://discovery.talos.dev/\n");
    CHECK(stages::dry_run_changes(added) == std::vector<std::string>{"cluster.discovery"});
    CHECK(stages::same_fact(stages::dry_run_changes(added)[0], "cluster.discovery.enabled"));
    // A field changed inside a document the hunk names: its v1alpha1 path; a key of a document the
    // table has no row for: Kind.key.
    const std::string inside = answer_with_diff(
        "--- a\n+++ b\n@@ -1,6 +1,6 @@\n apiVersion: v1alpha1\n kind: KubeNetworkConfig\n"
        "-dnsDomain: cluster.local\n+dnsDomain: k8s.internal\n podSubnets:\n     - 10.244.0.0/16\n"
        "@@ -30,4 +30,4 @@\n apiVersion: v1alpha1\n kind: WatchdogTimerConfig\n"
        "-timeout: 2m\n+timeout: 5m\n");
    CHECK(stages::dry_run_changes(inside) ==
          std::vector<std::string>{"cluster.network.dnsDomain", "WatchdogTimerConfig.timeout"});
}

TEST_CASE("same_fact: key by key, the node's path starting inside the plan's", "[node-check]") {
    CHECK(stages::same_fact("machine.sysctls.net.core.somaxconn",
                            "machine.sysctls.net.core.somaxconn"));
    CHECK(stages::same_fact("sysctls.net.core.somaxconn", "machine.sysctls.net.core.somaxconn"));
    CHECK(stages::same_fact("machine.network.interfaces.addresses", "machine.network.interfaces"));
    CHECK(stages::same_fact("machine.sysctls", "machine.sysctls.vm.swappiness"));
    CHECK_FALSE(stages::same_fact("machine.kubelet.image", "cluster.apiServer.image"));
    CHECK_FALSE(stages::same_fact("machine.sysctls.vm.swappiness", "machine.kubelet.image"));
    CHECK_FALSE(stages::same_fact("sysctls", "machine.kubelet.image"));
}

TEST_CASE("the node's answer keeps no secret in the plan", "[node-check]") {
    const std::string diff = answer_with_diff(
        "--- a\n+++ b\n@@ -1,6 +1,6 @@\n machine:\n-    token: abcdef.0123456789abcdef\n"
        "+    token: zyxwvu.0123456789abcdef\n     ca:\n         crt: LS0tQ1JU\n"
        "         key: LS0tS0VZ\n@@ -90,4 +90,4 @@\n"
        "     secretboxEncryptionSecret: c2VjcmV0\n+---\n+apiVersion: v1alpha1\n"
        "+kind: KubeEtcdEncryptionConfig\n+config: |\n+    secret: aGlkZGVu\n+    keys: [x]\n");
    const std::string r = stages::redact_dry_run(diff);
    INFO(r);
    for (const auto* secret :
         {"abcdef.0123", "zyxwvu.0123", "LS0tS0VZ", "c2VjcmV0", "aGlkZGVu", "keys: [x]"}) {
        CHECK(r.find(secret) == std::string::npos);
    }
    CHECK(r.find("-    token: " + util::sha256_digest("abcdef.0123456789abcdef") + "\n") !=
          std::string::npos);
    CHECK(r.find("         crt: LS0tQ1JU\n") != std::string::npos); // a certificate stays
    CHECK(r.find("+kind: KubeEtcdEncryptionConfig\n+config: |\n+    sha256:") != std::string::npos);
    CHECK(r.starts_with("Dry run summary:\nApplied configuration without a reboot"));
    CHECK(std::count(r.begin(), r.end(), '\n') == std::count(diff.begin(), diff.end(), '\n'));
    // the paths are read from the answer as it came
    CHECK(stages::dry_run_changes(diff) ==
          std::vector<std::string>{"machine.token", "KubeEtcdEncryptionConfig"});
}

TEST_CASE("dry_run_changes names a document of plain fields added whole by each field's home",
          "[node-check]") {
    // KubeClusterConfig holds the cluster's name and endpoint (v1alpha1 cluster.clusterName,
    // cluster.controlPlane.endpoint): named as drift::layout_moves names its moves
    const std::string diff = answer_with_diff(
        "--- a\n+++ b\n@@ -1,5 +1,3 @@\n cluster:\n-    clusterName: prod\n-    controlPlane:\n"
        "-        endpoint: https://prod:6443\n     network:\n@@ -50,2 +48,6 @@\n+---\n"
        "+apiVersion: v1alpha1\n+kind: KubeClusterConfig\n+clusterName: prod\n"
        "+endpoint: https://prod:6443\n");
    CHECK(stages::dry_run_changes(diff) ==
          std::vector<std::string>{"cluster.clusterName", "cluster.controlPlane.endpoint"});
}

TEST_CASE("dry_run_changes names a registry document added whole by its v1alpha1 entry",
          "[node-check]") {
    // A node that holds its mirror in v1alpha1, sent the render's RegistryMirrorConfig: the plan
    // lists that move at machine.registries.mirrors.docker.io (class B, Layout).
    const std::string moved = answer_with_diff(
        "--- a\n+++ b\n@@ -30,8 +30,3 @@\n machine:\n     registries:\n-        mirrors:\n"
        "-            docker.io:\n-                endpoints:\n"
        "-                    - https://mirror.local:5000\n"
        "+---\n+apiVersion: v1alpha1\n+kind: RegistryMirrorConfig\n+name: docker.io\n"
        "+endpoints:\n+    - url: https://mirror.local:5000\n");
    const auto changes = stages::dry_run_changes(moved);
    // the document is named by its entry, a parent of the removed lines' path
    CHECK(changes == std::vector<std::string>{"machine.registries.mirrors.docker.io.endpoints"});
    for (const auto& c : changes) {
        CHECK(stages::same_fact(c, "machine.registries.mirrors.docker.io"));
    }
}
