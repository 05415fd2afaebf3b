#include "common/cni/detect.h"
#include "test_cni_support.h"

#include <algorithm>

using namespace ichor;
using cni_test::Value;

namespace {

bool has_evidence(const cni::Detection& d, const std::string& object, const std::string& field) {
    return std::any_of(d.evidence.begin(), d.evidence.end(), [&](const cni::Evidence& e) {
        return e.object == object && e.field == field;
    });
}

cni::Detection must(const cni::ClusterObjects& o, const std::vector<cni::ControlPlane>& cps) {
    auto d = cni::detect(o, cps);
    REQUIRE(d.ok());
    return *d;
}

// The guide's Cilium objects, re-labelled as Helm (or the CLI) would leave them.
cni::ClusterObjects helm_cluster(const Value& config, const std::string& manager = "helm") {
    auto o = cni_test::guide_cluster();
    for (auto* list : {&o.daemonsets, &o.deployments, &o.configmaps}) {
        for (auto& obj : *list) {
            obj["metadata"]["managedFields"] = Value::array({{{"manager", manager}}});
        }
    }
    o.secrets.push_back(cni_test::release_secret(
        cni_test::release_json("cilium", 2, "deployed", "cilium", "1.19.6", config)));
    return o;
}

const char* k_cp_inline = R"(version: v1alpha1
machine: {type: controlplane}
cluster:
  network: {cni: {name: none}}
  inlineManifests:
    - name: cilium
      contents: |
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: cilium, namespace: kube-system, labels: {k8s-app: cilium}}
)";

} // namespace

TEST_CASE("Cilium with a release record that carries values", "[cni][detect]") {
    auto d = must(helm_cluster(cni_test::yaml("hubble: {relay: {enabled: true}}")),
                  {cni_test::plane("cp-1", cni_test::k_cp_none)});
    CHECK(d.cni == cni::Cni::Cilium);
    CHECK(d.install == cni::CiliumInstall::HelmRecord);
    REQUIRE(d.release);
    CHECK(d.release->has_values());
    CHECK(d.ipam_mode == "kubernetes");
    CHECK(d.namespace_name == "kube-system");
    CHECK(d.summary() == "cilium, installed by helm (release record sh.helm.release.v1.cilium.v2 "
                         "with values)");
    CHECK(has_evidence(d, "DaemonSet kube-system/cilium", "metadata.name"));
    CHECK(has_evidence(d, "Secret kube-system/sh.helm.release.v1.cilium.v2", "data.release"));
    CHECK(has_evidence(d, "ConfigMap kube-system/cilium-config", "data.ipam"));
}

TEST_CASE("Cilium with a release record without values", "[cni][detect]") {
    auto d = must(helm_cluster(Value::object()), {cni_test::plane("cp-1", cni_test::k_cp_none)});
    CHECK(d.install == cni::CiliumInstall::HelmRecord);
    REQUIRE(d.release);
    CHECK_FALSE(d.release->has_values());
    CHECK(d.summary() == "cilium, installed by helm (release record sh.helm.release.v1.cilium.v2 "
                         "without values)");
}

TEST_CASE("Cilium installed by the cilium CLI", "[cni][detect]") {
    auto d = must(helm_cluster(cni_test::yaml("operator: {replicas: 1}\nroutingMode: tunnel\n"
                                              "tunnelProtocol: vxlan\ncluster: {name: home}"),
                               "cilium"),
                  {});
    CHECK(d.cni == cni::Cni::Cilium);
    CHECK(d.install == cni::CiliumInstall::CiliumCli);
    CHECK(has_evidence(d, "DaemonSet kube-system/cilium", "metadata.managedFields[].manager"));
}

TEST_CASE("Cilium from a Talos inline manifest made with helm template", "[cni][detect]") {
    auto d = must(cni_test::guide_cluster(), {cni_test::plane("cp-1", k_cp_inline)});
    CHECK(d.cni == cni::Cni::Cilium);
    CHECK(d.install == cni::CiliumInstall::InlineManifest);
    CHECK(d.inline_manifests == std::vector<std::string>{"cilium"});
    CHECK_FALSE(d.release);
    CHECK(d.manifests == std::vector<std::string>{"cilium"});
    CHECK(
        has_evidence(d, "node cp-1 machine configuration", "cluster.inlineManifests[0].contents"));
    // Without the configuration, Talos's field manager on the objects says the same.
    auto by_manager = must(cni_test::guide_cluster(), {});
    CHECK(by_manager.install == cni::CiliumInstall::InlineManifest);
    CHECK(by_manager.manifests.empty());
}

TEST_CASE("Cilium applied with kubectl from helm template", "[cni][detect]") {
    auto o = cni_test::guide_cluster();
    for (auto* list : {&o.daemonsets, &o.deployments, &o.configmaps}) {
        for (auto& obj : *list) {
            obj["metadata"].erase("managedFields");
            obj["metadata"]["annotations"] = {
                {"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
        }
    }
    CHECK(must(o, {}).install == cni::CiliumInstall::ManifestApply);
}

TEST_CASE("flannel, Talos's default", "[cni][detect]") {
    cni::ClusterObjects o;
    cni_test::add_objects(o, R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-flannel, namespace: kube-system, labels: {k8s-app: flannel}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-flannel-cfg, namespace: kube-system}
)");
    auto d =
        must(o, {cni_test::plane("cp-1", "version: v1alpha1\nmachine: {type: controlplane}\n"
                                         "cluster: {network: {podSubnets: [10.244.0.0/16]}}\n")});
    CHECK(d.cni == cni::Cni::Flannel);
    CHECK(d.name == "flannel");
    CHECK(has_evidence(d, "DaemonSet kube-system/kube-flannel", "metadata.name"));
    CHECK(has_evidence(d, "node cp-1 machine configuration", "cluster.network.cni.name"));
    // The configuration alone says flannel: Talos applies it at the next bootstrap-manifests sync.
    CHECK(must({}, {cni_test::plane("cp-1", "version: v1alpha1\nmachine: {type: controlplane}\n")})
              .cni == cni::Cni::Flannel);
}

TEST_CASE("Calico and other CNIs", "[cni][detect]") {
    cni::ClusterObjects calico;
    cni_test::add_objects(calico, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: "
                                  "calico-node, namespace: calico-system}\n");
    auto d = must(calico, {cni_test::plane("cp-1", cni_test::k_cp_none)});
    CHECK(d.cni == cni::Cni::Calico);
    CHECK(d.summary() == "calico");
    cni::ClusterObjects weave;
    cni_test::add_objects(weave, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, "
                                 "namespace: kube-system, labels: {name: weave-net}}\n");
    auto w = must(weave, {});
    CHECK(w.cni == cni::Cni::Other);
    CHECK(w.name == "weave-net");
    CHECK(has_evidence(w, "DaemonSet kube-system/ds", "metadata.labels.name"));
}

TEST_CASE("no CNI: cni.name none, no workload, Nodes NotReady for the network", "[cni][detect]") {
    cni::ClusterObjects o;
    o.nodes = {cni_test::node("cp-1", "False", cni_test::k_no_network),
               cni_test::node("w-1", "False", cni_test::k_no_network)};
    auto d = must(o, {cni_test::plane("cp-1", cni_test::k_cp_none)});
    CHECK(d.cni == cni::Cni::None);
    CHECK(d.summary() == "no CNI");
    CHECK(has_evidence(d, "Node cp-1", "status.conditions[Ready].message"));
    CHECK(has_evidence(d, "node cp-1 machine configuration", "cluster.network.cni.name"));
}

TEST_CASE("flannel removed on Talos 1.13: its CNI file outlives the reboot, by version",
          "[cni][detect]") {
    auto flannel_node = [](const std::string& name, const std::string& ready,
                           const std::string& message = {}) {
        Value n = cni_test::node(name, ready, message);
        n["metadata"]["annotations"]["flannel.alpha.coreos.com/backend-type"] = "vxlan";
        return n;
    };
    cni::ClusterObjects o;
    o.nodes = {flannel_node("cp-1", "True"), flannel_node("w-1", "True")};
    auto cp = cni_test::plane("cp-1", cni_test::k_cp_none); // Talos 1.13
    auto d = must(o, {cp});
    CHECK(d.cni == cni::Cni::Other);
    CHECK(d.leftover_nodes == std::vector<std::string>{"cp-1", "w-1"});
    CHECK(d.name == "none, with flannel's CNI configuration left on the nodes");
    CHECK(has_evidence(d, "Node cp-1", "metadata.annotations"));
    // Talos 1.14 mounts a tmpfs on /etc/cni: a Ready Node is not explained by a leftover file.
    cp.talos_1_14 = true;
    auto d14 = must(o, {cp});
    CHECK(d14.leftover_nodes.empty());
    CHECK(d14.name == "unrecognised");
    // The file removed: the Nodes NotReady for the network, which is no CNI.
    o.nodes = {flannel_node("cp-1", "False", cni_test::k_no_network),
               flannel_node("w-1", "False", cni_test::k_no_network)};
    CHECK(must(o, {cni_test::plane("cp-1", cni_test::k_cp_none)}).cni == cni::Cni::None);
    // Ready Nodes without flannel's annotations: unrecognised, as before.
    o.nodes = {cni_test::node("cp-1", "True")};
    CHECK(must(o, {cni_test::plane("cp-1", cni_test::k_cp_none)}).name == "unrecognised");
}

TEST_CASE("no CNI found but Nodes Ready is a CNI this code does not know", "[cni][detect]") {
    cni::ClusterObjects o;
    o.nodes = {cni_test::node("cp-1", "True")};
    auto d = must(o, {cni_test::plane("cp-1", cni_test::k_cp_none)});
    CHECK(d.cni == cni::Cni::Other);
    CHECK(d.name == "unrecognised");
    // NotReady for another reason is not "no CNI" either.
    o.nodes = {cni_test::node("cp-1", "False", "PLEG is not healthy")};
    CHECK(must(o, {cni_test::plane("cp-1", cni_test::k_cp_none)}).cni == cni::Cni::Other);
    // A custom CNI by URL.
    auto custom =
        must({}, {cni_test::plane("cp-1", "version: v1alpha1\nmachine: {type: "
                                          "controlplane}\ncluster: {network: {cni: {name: "
                                          "custom, urls: [https://x/cni.yaml]}}}\n")});
    CHECK(custom.cni == cni::Cni::Other);
    CHECK(custom.name == "custom (cluster.network.cni.urls)");
}

TEST_CASE("Cilium beside flannel is several CNIs", "[cni][detect]") {
    auto o = cni_test::guide_cluster();
    cni_test::add_objects(o, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: "
                             "kube-flannel, namespace: kube-system}\n");
    auto d = must(o, {});
    CHECK(d.cni == cni::Cni::Several);
    CHECK(d.summary() == "several CNIs: cilium, flannel");
}

TEST_CASE("an unreadable release record is an error, not a release without values",
          "[cni][detect]") {
    auto o = cni_test::guide_cluster();
    auto bad = cni_test::release_secret(
        cni_test::release_json("cilium", 1, "deployed", "cilium", "1.19.6", Value::object()));
    bad["data"]["release"] = util::base64_encode("not base64 !");
    o.secrets.push_back(bad);
    auto d = cni::detect(o, {});
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().code == "HelmRecord");
}
