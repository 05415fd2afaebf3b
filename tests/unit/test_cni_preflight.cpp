#include "common/cni/preflight.h"
#include "common/cni/values.h"
#include "test_cni_support.h"

#include <algorithm>

using namespace ichor;
using cni_test::Value;
using cni_test::yaml;

namespace {

cni::LiveCilium guide_live() {
    return cni::live_cilium(cni_test::guide_cluster(), "kube-system");
}

void add_relay(cni::LiveCilium& live) {
    live.deployments.push_back(
        yaml("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "
             "hubble-relay, namespace: kube-system}\nspec: {replicas: 1}\n"));
}

std::vector<std::string> paths(const cni::Preflight& p) {
    std::vector<std::string> out;
    for (const auto& d : p.differences) {
        out.push_back(d.path);
    }
    return out;
}

} // namespace

TEST_CASE("the Talos guide's Cilium at the pinned chart shows no difference", "[cni][preflight]") {
    auto p = cni::preflight(guide_live(), Value::object());
    INFO(paths(p).size());
    for (const auto& d : p.differences) {
        UNSCOPED_INFO(cni::describe(d));
    }
    CHECK(p.empty());
    CHECK(p.not_compared.empty());
}

TEST_CASE("a non-default value with no values given is a difference naming its path",
          "[cni][preflight]") {
    auto live = guide_live();
    add_relay(live);
    auto p = cni::preflight(live, Value::object());
    REQUIRE(p.differences.size() == 1);
    const auto& d = p.differences[0];
    CHECK(d.path == "hubble.relay.enabled");
    CHECK(d.live == true);
    CHECK(d.rendered == false);
    CHECK(d.template_file == "templates/hubble-relay/deployment.yaml");
    CHECK(cni::describe(d) ==
          "hubble.relay.enabled: live true, rendered false (Deployment "
          "hubble-relay (present or not), templates/hubble-relay/deployment.yaml)");
}

TEST_CASE("the values reach the preflight", "[cni][preflight]") {
    auto live = guide_live();
    add_relay(live);
    auto values = cni::read_values("hubble:\n  relay:\n    enabled: true\n", "values.yaml");
    REQUIRE(values.ok());
    CHECK(cni::preflight(live, *values).empty());
    // The same values against a cluster without the relay now differ the other way.
    auto p = cni::preflight(guide_live(), *values);
    REQUIRE(p.differences.size() == 1);
    CHECK(p.differences[0].live == false);
    CHECK(p.differences[0].rendered == true);
}

TEST_CASE("each kind of live field is compared", "[cni][preflight]") {
    auto live = guide_live();
    live.config["data"]["tunnel-port"] = "8473";
    live.config["data"]["ipam"] = "cluster-pool";
    live.config["data"].erase("enable-hubble");
    auto& agent = live.agent["spec"]["template"]["spec"];
    agent["containers"][0]["resources"] = {{"requests", {{"cpu", "100m"}}}};
    agent["containers"][0]["env"][1]["value"] = "127.0.0.1";
    agent["containers"][0]["securityContext"]["capabilities"]["add"].push_back("SYS_MODULE");
    agent["initContainers"].push_back({{"name", "mount-cgroup"}});
    live.deployments[0]["spec"]["replicas"] = 1;
    auto p = cni::preflight(live, Value::object());
    CHECK(paths(p) == std::vector<std::string>{"ipam.mode", "k8sServiceHost", "tunnelPort",
                                               "hubble.enabled", "cgroup.autoMount.enabled",
                                               "operator.replicas", "resources",
                                               "securityContext.capabilities.ciliumAgent"});
    auto find = [&](const std::string& path) {
        return *std::find_if(p.differences.begin(), p.differences.end(),
                             [&](const cni::Difference& d) { return d.path == path; });
    };
    CHECK(find("tunnelPort").live == "8473");
    CHECK(find("tunnelPort").rendered.is_null());
    CHECK(find("hubble.enabled").live.is_null());
    CHECK(find("hubble.enabled").rendered == "true");
    CHECK(find("operator.replicas").live == 1);
    CHECK(find("operator.replicas").rendered == 2);
    CHECK(find("k8sServiceHost").field ==
          "DaemonSet cilium container cilium-agent env KUBERNETES_SERVICE_HOST");
    // Values that match the live fields close those differences; owned ones cannot be given.
    auto values = cni::read_values("tunnelPort: 8473\noperator: {replicas: 1}\n"
                                   "resources: {requests: {cpu: 100m}}\n",
                                   "values.yaml");
    REQUIRE(values.ok());
    CHECK(paths(cni::preflight(live, *values)) ==
          std::vector<std::string>{"ipam.mode", "k8sServiceHost", "hubble.enabled",
                                   "cgroup.autoMount.enabled",
                                   "securityContext.capabilities.ciliumAgent"});
}

TEST_CASE("a value outside the table is listed as not compared", "[cni][preflight]") {
    auto values = cni::read_values("hubble: {relay: {replicas: 3}}\ndebug: {enabled: true}\n"
                                   "operator: {replicas: 2}\n",
                                   "values.yaml");
    REQUIRE(values.ok());
    auto p = cni::preflight(guide_live(), *values);
    CHECK(p.empty());
    CHECK(p.not_compared == std::vector<std::string>{"hubble.relay.replicas", "debug.enabled"});
    doc::ResourceList list;
    cni::add_results(list, p, doc::Severity::Error);
    REQUIRE(list.results.size() == 2);
    CHECK(list.results[0]["severity"] == "info");
    CHECK(list.results[0]["message"] == "cilium: hubble.relay.replicas: not compared (the "
                                        "preflight's table does not cover it; docs/cni.md)");
}

TEST_CASE("differences become results with path, live and rendered", "[cni][preflight]") {
    auto live = guide_live();
    add_relay(live);
    doc::ResourceList list;
    cni::add_results(list, cni::preflight(live, Value::object()), doc::Severity::Error);
    REQUIRE(list.results.size() == 1);
    CHECK(list.has_errors());
    const auto& tags = list.results[0]["tags"];
    CHECK(tags["ichor.maesh.dev/code"] == "CiliumDiff");
    CHECK(tags["ichor.maesh.dev/path"] == "hubble.relay.enabled");
    CHECK(tags["ichor.maesh.dev/live"] == "true");
    CHECK(tags["ichor.maesh.dev/rendered"] == "false");
}

TEST_CASE("ipam.mode must be kubernetes", "[cni][preflight]") {
    cni::Detection d;
    d.cni = cni::Cni::Cilium;
    d.ipam_mode = "kubernetes";
    CHECK(cni::check_ipam(d).ok());
    d.ipam_mode = "cluster-pool";
    auto st = cni::check_ipam(d);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().kind == ErrorKind::Findings);
    CHECK(st.error().message == "cni: Cilium's ipam.mode is cluster-pool: Ichor takes over only a "
                                "Cilium with ipam.mode: kubernetes (changing IPAM renumbers every "
                                "pod)");
    d.ipam_mode.clear();
    CHECK_FALSE(cni::check_ipam(d).ok());
}
