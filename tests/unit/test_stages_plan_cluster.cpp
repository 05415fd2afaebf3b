// The whole-cluster plan (common/stages/plan_cluster.h): every node's Inspection and what was read
// of the cluster's Kubernetes API in; the bundle Secret, the TalosCluster, the layered patches and
// the held machines out, or the refusals that stop the whole cluster before any write.
#include "common/doc/vocabulary.h"
#include "common/render/render.h"
#include "common/stages/hold.h"
#include "common/stages/plan_cluster.h"
#include "test_cni_support.h"
#include "test_plan_support.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ichor;
using doc::Value;

namespace {

// Another cluster's Kubernetes CA, as cluster.acceptedCAs would accept it (public).
Value other_ca() {
    return Value::array({Value{
        {"crt",
         "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJxekNDQVZHZ0F3SUJBZ0lVUXBWRHUxdnQxNHJBRlV2N1JXb"
         "zJQZTNKRTk4d0NnWUlLb1pJemowRUF3SXcKS2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsY2kxamJIVnpkR1Z5TVE0d0"
         "RBWURWUVFEREFWMFlXeHZjekFnRncweQpOakV5TURJd05UUTVNVEZhR0E4eU1USTJNVEV3T0RBMU5Ea3hNVm93S2p"
         "FWU1CWUdBMVVFQ2d3UFlXNXZkR2hsCmNpMWpiSFZ6ZEdWeU1RNHdEQVlEVlFRRERBVjBZV3h2Y3pCWk1CTUdCeXFH"
         "U000OUFnRUdDQ3FHU000OUF3RUgKQTBJQUJPRXRxNERvalZtM1J0OHFEdmlkNW9SOFdXK1ZIUUwxK1JzZzI4VVpJe"
         "khnc2Q3a3d2ZzVTbE5VWnJqSgp1V2RZb2RiYSt0SHB4TmU3QW1vdmZiSm4rNmVqVXpCUk1CMEdBMVVkRGdRV0JCVE"
         "xaZXVManp2RDdydFFSV2Y2CnVhNjZsYVREdkRBZkJnTlZIU01FR0RBV2dCVExaZXVManp2RDdydFFSV2Y2dWE2Nmx"
         "hVER2REFQQmdOVkhSTUIKQWY4RUJUQURBUUgvTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFEN2FRWStTS0RCbkhU"
         "ZmptZFpYclFBN2ovRApoSDNpbjJwMVlVSmd3cFlPNUFJZ1pRUDFnSU1sRnVhbXk3cXBOSnpUWkh4U0hoMkcxNFI4N"
         "GJEQ0hRa3Q4d0k9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"}}});
}

// The golden cluster "lab-u" (cni unmanaged, cluster.clusterName legacy-name): one control plane
// and workers, each an Inspection as trustcheck leaves it, with etcd, a Ready Node each.
struct Cluster {
    test::PlanFixture fx;
    doc::ResourceList list;
    stages::ClusterPlanOptions o;
    std::vector<std::string> hosts;

    void add(const std::string& address, const std::string& host, const std::string& config) {
        Value v = fx.inspection(address, host, config);
        v["status"]["trust"]["cluster"] = "lab-u";
        list.items.push_back(std::move(v));
        hosts.push_back(host);
        o.kube_nodes.push_back(test::ready_node(host));
    }

    Cluster() {
        add("10.0.0.2", "u-cp-1", "cp-1.13-unmanaged");
        add("10.0.0.3", "u-w-1", "w-1.13-unmanaged");
        add("10.0.0.4", "u-w-2", "w-1.13-unmanaged");
        etcd();
        o.cluster = "lab-u";
        o.ns = "ichor-system";
        o.bundle = &fx.bundle;
        o.bundle_source = "recovered from 10.0.0.2";
        o.cni.preset = "unmanaged";
        o.ichor_api_served = true;
    }

    void etcd() {
        Value members = Value::array();
        for (auto& item : list.items) {
            if (doc::get_string(item, "status.facts.role") == "controlplane") {
                members.push_back(Value{
                    {"id", "00000000000000" + std::to_string(members.size() + 1)},
                    {"hostname", doc::get_string(item, "status.identity.hostname")},
                    {"peerURLs", Value::array({"https://" + doc::get_string(item, "spec.address") +
                                               ":2380"})}});
            }
        }
        for (auto& item : list.items) {
            if (doc::get_string(item, "status.facts.role") == "controlplane") {
                item["status"]["etcd"]["members"] = members;
                item["status"]["etcd"]["status"]["memberID"] = "0000000000000001";
            }
        }
    }

    // Sets `path` (keys) to `value` in the v1alpha1 document of node `index`.
    void set(std::size_t index, const std::vector<std::string>& path, Value value) {
        Value& docs = list.items[index]["status"]["config"];
        for (auto& d : docs) {
            if (d.contains("kind")) {
                continue;
            }
            Value* at = &d;
            for (const auto& k : path) {
                at = &(*at)[k];
            }
            *at = std::move(value);
            return;
        }
        FAIL("no v1alpha1 document");
    }

    // What the adoption's live zero-drift check does: each node's Inspection planned again with
    // the TalosCluster and every TalosConfigPatch of the plan; CHECKs `done` and that nothing is
    // left to capture.
    void replan_with_patches(std::size_t done) {
        std::vector<Value> patches;
        for (const auto* p : of_kind("TalosConfigPatch")) {
            patches.push_back(*p);
        }
        doc::ResourceList again;
        for (const auto& i : list.items) {
            if (i.value("kind", "") == "Inspection") {
                again.items.push_back(i);
            }
        }
        Value tc = *of_kind("TalosCluster")[0];
        auto replanned =
            stages::plan(again, {"lab-u", "ichor-system", true, &tc, &fx.bundle, patches, {}});
        REQUIRE_FALSE(replanned.error);
        CHECK(replanned.done == done);
        for (const auto& i : again.items) {
            CHECK(i.value("kind", "") != "TalosConfigPatch"); // nothing left to capture
        }
    }

    stages::Outcome run() {
        auto out = stages::plan_cluster(list, o);
        INFO((out.error ? out.error->message : std::string("no error")));
        CHECK_FALSE(out.error);
        for (const auto& r : list.results) {
            UNSCOPED_INFO(r.value("message", ""));
        }
        return out;
    }

    [[nodiscard]] std::vector<const Value*> of_kind(const std::string& kind) const {
        std::vector<const Value*> out;
        for (const auto& i : list.items) {
            if (i.value("kind", "") == kind) {
                out.push_back(&i);
            }
        }
        return out;
    }

    [[nodiscard]] bool has_code(const std::string& code) const {
        return std::any_of(list.results.begin(), list.results.end(), [&](const Value& r) {
            return r["tags"].value(std::string(vocab::k_tag_code), "") == code;
        });
    }
};

const Value* patch_of_layer(const Cluster& c, const std::string& layer) {
    for (const auto* p : c.of_kind("TalosConfigPatch")) {
        if (doc::get_string(*p, "spec.layer") == layer) {
            return p;
        }
    }
    return nullptr;
}

} // namespace

TEST_CASE("a whole cluster: the Secret without data, the TalosCluster from the live cluster, held "
          "machines control planes first",
          "[plan][cluster]") {
    Cluster c;
    auto out = c.run();
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK(out.stopped == 0);
    CHECK_FALSE(c.list.has_errors());
    auto secrets = c.of_kind("Secret");
    REQUIRE(secrets.size() == 1);
    CHECK(doc::get_string(*secrets[0], "metadata.name") == "lab-u-secrets");
    CHECK_FALSE(secrets[0]->contains("data")); // the bundle never goes into the plan
    CHECK_FALSE(secrets[0]->contains("stringData"));
    auto clusters = c.of_kind("TalosCluster");
    REQUIRE(clusters.size() == 1);
    const Value& tc = *clusters[0];
    CHECK(doc::get_string(tc, "metadata.name") == "lab-u");
    CHECK(doc::get_string(tc, "spec.clusterName") == "legacy-name");
    CHECK(doc::get_string(tc, "spec.endpoint") == "https://lb.example.com:6443");
    CHECK(doc::get_string(tc, "spec.talosVersion") == "v1.13.9");
    CHECK(doc::get_string(tc, "spec.kubernetesVersion") == "v1.34.4");
    CHECK(doc::get_string(tc, "spec.versionContract") == "1.13");
    CHECK(tc["spec"]["controlPlane"]["count"] == 1);
    CHECK(tc["spec"]["cni"]["preset"] == "unmanaged");
    CHECK(tc["spec"]["network"]["podSubnets"] == Value::array({"10.244.0.0/16"}));
    CHECK(tc["spec"]["discovery"]["addresses"] ==
          Value::array({"10.0.0.2", "10.0.0.3", "10.0.0.4"}));
    CHECK(doc::get_string(tc, "spec.secretsBundleRef.name") == "lab-u-secrets");
    auto machines = c.of_kind("TalosMachine");
    REQUIRE(machines.size() == 3);
    CHECK(doc::get_string(*machines[0], "spec.role") == "controlplane");
    for (const auto* m : machines) {
        CHECK((*m)["metadata"]["annotations"][std::string(vocab::k_annotation_hold_apply)] ==
              "true");
        CHECK((*m)["spec"]["approval"] == "Approved");
    }
    CHECK(c.of_kind("TalosConfigPatch").empty()); // the nodes are the render
    // the order a rerun resumes in: the Secret, the cluster, patches, machines
    std::vector<std::string> kinds;
    for (const auto& i : c.list.items) {
        if (i.value("kind", "") != "Inspection") {
            kinds.push_back(i.value("kind", ""));
        }
    }
    CHECK(kinds.front() == "Secret");
    CHECK(kinds[1] == "TalosCluster");
}

TEST_CASE("class A drift in layers: equal on every node is the cluster's, equal on a role the "
          "role's, the rest the machine's",
          "[plan][cluster]") {
    Cluster c;
    c.add("10.0.0.5", "u-cp-2", "cp-1.13-unmanaged");
    c.etcd();
    for (std::size_t i = 0; i < 4; ++i) {
        c.set(i, {"machine", "sysctls"}, Value{{"net.core.somaxconn", "65535"}});
    }
    for (std::size_t i : {1, 2}) {
        c.set(i, {"machine", "kernel"},
              Value{{"modules", Value::array({Value{{"name", "br_netfilter"}}})}});
    }
    c.set(0, {"machine", "certSANs"}, Value::array({"cp.example.com"}));
    c.set(3, {"machine", "certSANs"}, Value::array({"cp.example.com"}));
    c.set(2, {"machine", "sysctls"},
          Value{{"net.core.somaxconn", "65535"}, {"vm.max_map_count", "262144"}});
    auto out = c.run();
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 4);
    CHECK_FALSE(c.has_code("LayersDidNotVerify"));
    const Value* cluster = patch_of_layer(c, "cluster");
    REQUIRE(cluster != nullptr);
    CHECK(doc::get_string(*cluster, "metadata.name") == "lab-u-adopted");
    CHECK(doc::get_string(*cluster, "spec.patch").find("somaxconn") != std::string::npos);
    CHECK(doc::get_string(*cluster, "spec.patch").find("br_netfilter") == std::string::npos);
    std::vector<const Value*> roles;
    for (const auto* p : c.of_kind("TalosConfigPatch")) {
        if (doc::get_string(*p, "spec.layer") == "role") {
            roles.push_back(p);
        }
    }
    REQUIRE(roles.size() == 2);
    for (const auto* r : roles) {
        const std::string text = doc::get_string(*r, "spec.patch");
        if (doc::get_string(*r, "spec.role") == "worker") {
            CHECK(text.find("br_netfilter") != std::string::npos);
            CHECK(text.find("somaxconn") == std::string::npos);
        } else {
            CHECK(doc::get_string(*r, "spec.role") == "controlplane");
            CHECK(text.find("cp.example.com") != std::string::npos);
        }
    }
    const Value* machine = patch_of_layer(c, "machine");
    REQUIRE(machine != nullptr);
    CHECK(doc::get_string(*machine, "spec.machine") == "u-w-2");
    CHECK(doc::get_string(*machine, "spec.patch").find("max_map_count") != std::string::npos);
    CHECK(doc::get_string(*machine, "spec.patch").find("somaxconn") == std::string::npos);
    CHECK(c.of_kind("TalosConfigPatch").size() == 4);

    // One finding per captured fact and layer: the sysctl on all four nodes is one result
    // naming the four, the machine's own one result of its node.
    std::vector<const Value*> somaxconn;
    std::vector<const Value*> max_map;
    for (const auto& r : c.list.results) {
        const std::string path = doc::get_string(r, "field.path");
        if (path == "machine.sysctls.net.core.somaxconn") {
            somaxconn.push_back(&r);
        } else if (path == "machine.sysctls.vm.max_map_count") {
            max_map.push_back(&r);
        }
    }
    REQUIRE(somaxconn.size() == 1);
    const Value& grouped = *somaxconn[0];
    CHECK(grouped["tags"].value(std::string(vocab::k_tag_nodes), "") ==
          "10.0.0.2,10.0.0.3,10.0.0.4,10.0.0.5");
    CHECK_FALSE(grouped["tags"].contains(std::string(doc::k_tag_node)));
    CHECK(grouped.value("message", "") ==
          "machine.sysctls.net.core.somaxconn on all 4 nodes: each node has \"65535\", Ichor "
          "does not render it; captured into TalosConfigPatch lab-u-adopted (cluster layer)");
    REQUIRE(max_map.size() == 1);
    CHECK((*max_map[0])["tags"].value(std::string(doc::k_tag_node), "") == "10.0.0.4");
    CHECK((*max_map[0])
              .value("message", "")
              .ends_with("captured into TalosConfigPatch u-w-2-adopted"));
    bool layers = false;
    for (const auto& r : c.list.results) {
        if (r["tags"].value(std::string(doc::k_tag_code), "") == "Layers") {
            layers = true;
            CHECK(r.value("message", "")
                      .starts_with("class A drift in 1 cluster-layer patch, 2 role-layer patches, "
                                   "1 machine-layer "
                                   "patch: "));
        }
    }
    CHECK(layers);
    CHECK(stages::plan_table(c.list, false)
              .find("lab-u-adopted,lab-u-workers-adopted,u-w-2-adopted") != std::string::npos);

    // Every machine rendered with every layer is its node again: no class A left.
    auto spec = render::parse_cluster(*c.of_kind("TalosCluster")[0]);
    REQUIRE(spec.ok());
    c.replan_with_patches(4);
}

TEST_CASE("at contract 1.14 the layers patch the documents Talos holds the facts in",
          "[plan][cluster]") {
    // Nodes of Talos's own contract 1.14: subnets in KubeNetworkConfig on every node (the
    // TalosCluster takes them), extra API server SANs in KubeAPIServerConfig and a kube-proxy
    // mode in KubeProxyConfig on the control plane. Talos 1.14 refuses v1alpha1's
    // cluster.apiServer and cluster.proxy beside those documents, so the layers patch them.
    Cluster c;
    c.list.items.clear();
    c.o.kube_nodes.clear();
    c.hosts.clear();
    c.add("10.0.0.2", "u-cp-1", "cp-1.14-unmanaged");
    c.add("10.0.0.3", "u-w-1", "w-1.14-unmanaged");
    c.add("10.0.0.4", "u-w-2", "w-1.14-unmanaged");
    c.etcd();
    auto set_doc = [&](std::size_t index, const std::string& kind, const std::string& key,
                       Value value) {
        for (auto& d : c.list.items[index]["status"]["config"]) {
            if (d.value("kind", "") == kind) {
                d[key] = std::move(value);
                return;
            }
        }
        FAIL("no " << kind);
    };
    for (auto& i : c.list.items) {
        i["status"]["talosVersion"] = "v1.14.1";
    }
    for (std::size_t i = 0; i < 3; ++i) {
        set_doc(i, "KubeNetworkConfig", "podSubnets", Value::array({"10.100.0.0/16"}));
    }
    set_doc(0, "KubeAPIServerConfig", "certExtraSANs", Value::array({"api.example.com"}));
    set_doc(0, "KubeProxyConfig", "mode", "ipvs");
    auto out = c.run();
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK_FALSE(c.has_code("LayersDidNotVerify"));
    const Value* tc = c.of_kind("TalosCluster").empty() ? nullptr : c.of_kind("TalosCluster")[0];
    REQUIRE(tc != nullptr);
    CHECK(doc::get_string(*tc, "spec.versionContract") == "1.14");
    CHECK((*tc)["spec"]["network"]["podSubnets"] == Value::array({"10.100.0.0/16"}));
    std::string all;
    for (const auto* p : c.of_kind("TalosConfigPatch")) {
        all += doc::get_string(*p, "spec.patch") + "---\n";
        auto docs = doc::parse_documents(doc::get_string(*p, "spec.patch"), "patch");
        REQUIRE(docs.ok());
        for (const auto& d : *docs) {
            if (!d.contains("kind")) {
                CHECK_FALSE(doc::find_path(d, "cluster.network"));
                CHECK_FALSE(doc::find_path(d, "cluster.apiServer"));
            }
        }
    }
    INFO(all);
    CHECK(all.find("kind: KubeAPIServerConfig") != std::string::npos);
    CHECK(all.find("certExtraSANs") != std::string::npos);
    CHECK(all.find("kind: KubeProxyConfig") != std::string::npos);
    CHECK(all.find("mode: ipvs") != std::string::npos);
    CHECK(all.find("podSubnets") == std::string::npos); // the TalosCluster's
}

TEST_CASE("a plan planned again gives the same list, and the same digest", "[plan][cluster]") {
    Cluster c;
    c.set(1, {"machine", "sysctls"}, Value{{"vm.max_map_count", "262144"}});
    REQUIRE_FALSE(c.run().error);
    const std::string first = doc::to_yaml(c.list.to_value());
    const std::string digest = stages::plan_digest(c.list);
    REQUIRE_FALSE(c.run().error);
    CHECK(doc::to_yaml(c.list.to_value()) == first);
    CHECK(stages::plan_digest(c.list) == digest);
}

TEST_CASE("whole-cluster refusals are results before any object", "[plan][cluster]") {
    auto refused = [](Cluster& c, const std::string& code) {
        auto out = c.run();
        REQUIRE_FALSE(out.error);
        CHECK(out.done == 0);
        CHECK(out.stopped == 3);
        CHECK(c.has_code(code));
        CHECK(c.of_kind("TalosMachine").empty());
        CHECK(c.of_kind("TalosCluster").empty());
        CHECK(c.of_kind("Secret").empty());
    };
    SECTION("a node with no Kubernetes Node") {
        Cluster c;
        c.o.kube_nodes.pop_back();
        refused(c, "NoKubernetesNode");
    }
    SECTION("a NotReady Node") {
        Cluster c;
        c.o.kube_nodes[1]["status"]["conditions"][0]["status"] = "False";
        refused(c, "NodeNotReady");
    }
    SECTION("the Ichor API not served") {
        Cluster c;
        c.o.ichor_api_served = false;
        refused(c, "IchorAPINotServed");
    }
    SECTION("the CNI not decided") { // a caller that did not run decide_cni
        Cluster c;
        c.o.cni.preset.clear();
        refused(c, "CNIUndecided");
    }
    SECTION("two Talos versions") {
        Cluster c;
        c.list.items[2]["status"]["talosVersion"] = "v1.12.11";
        refused(c, "TalosVersions");
    }
    SECTION("a version below the floor") {
        Cluster c;
        for (auto& i : c.list.items) {
            i["status"]["talosVersion"] = "v1.11.5";
        }
        refused(c, "TalosTooOld");
    }
    SECTION("two cluster IDs") {
        Cluster c;
        c.list.items[2]["status"]["facts"]["clusterID"] = "another";
        refused(c, "ClusterIDs");
    }
    SECTION("no control plane") {
        Cluster c;
        c.list.items.erase(c.list.items.begin());
        auto out = c.run();
        CHECK(out.done == 0);
        CHECK(c.has_code("NoControlPlane"));
        CHECK(c.of_kind("TalosMachine").empty());
    }
    SECTION("an unhealthy etcd member") {
        Cluster c;
        c.list.items[0]["status"]["etcd"]["problem"] = "etcd is not running";
        refused(c, "EtcdUnhealthy");
        CHECK(c.has_code("NoQuorum"));
    }
    SECTION("an etcd member that is not a control plane given") {
        Cluster c;
        c.list.items[0]["status"]["etcd"]["members"].push_back(
            Value{{"id", "0000000000000009"}, {"hostname", "old-cp"}});
        refused(c, "EtcdMembers");
    }
    SECTION("a CA rotation under way") {
        Cluster c;
        c.list.items[1]["status"]["facts"]["acceptedCAs"] = Value::array({"sha256:aa"});
        refused(c, "CARotation");
    }
    SECTION("discovery members that are not the nodes given") {
        Cluster c;
        c.o.members = std::vector<stages::DiscoveryMember>{
            {"u-cp-1", {"10.0.0.2"}}, {"u-w-1", {"10.0.0.3"}}, {"u-w-9", {"10.0.0.9"}}};
        refused(c, "MembersMissing");
        CHECK(c.has_code("NotMembers")); // 10.0.0.4
    }
    SECTION("a TalosCluster of that name that this plan did not write") {
        Cluster c;
        Value existing = Value{{"metadata", {{"name", "lab-u"}}}};
        c.o.existing_cluster = &existing;
        refused(c, "ClusterExists");
    }
}

namespace {

// Discovery's member list at its cap: the three nodes given and strangers up to `count`.
std::vector<stages::DiscoveryMember> members_at_cap(std::size_t count) {
    std::vector<stages::DiscoveryMember> m{
        {"u-cp-1", {"10.0.0.2"}}, {"u-w-1", {"10.0.0.3"}}, {"u-w-2", {"10.0.0.4"}}};
    while (m.size() < count) {
        m.push_back(
            {"far-" + std::to_string(m.size()),
             {"10.9." + std::to_string(m.size() / 250) + "." + std::to_string(m.size() % 250)}});
    }
    return m;
}

} // namespace

TEST_CASE("at discovery's cap the nodes are compared with the Kubernetes Nodes instead",
          "[plan][cluster]") {
    SECTION("1,024 members, every Node given: planned, and the plan says why") {
        Cluster c;
        c.o.members = members_at_cap(stages::k_discovery_member_cap);
        auto out = c.run();
        CHECK(out.done == 3);
        CHECK(c.has_code("MembersCapped"));
        CHECK_FALSE(c.has_code("MembersMissing"));
        CHECK_FALSE(c.list.has_errors());
    }
    SECTION("one member fewer is below the cap: the strangers are missing members") {
        Cluster c;
        c.o.members = members_at_cap(stages::k_discovery_member_cap - 1);
        c.run();
        CHECK(c.has_code("MembersMissing"));
        CHECK_FALSE(c.has_code("MembersCapped"));
    }
    SECTION("a member with 64 endpoints is at the cap too") {
        Cluster c;
        c.o.members = members_at_cap(3);
        for (int i = 0; i < stages::k_discovery_endpoint_cap - 1; ++i) {
            c.o.members->at(0).addresses.push_back("fd00::" + std::to_string(i));
        }
        c.o.members->push_back({"u-w-9", {"10.0.0.9"}});
        auto out = c.run();
        CHECK(out.done == 3);
        CHECK(c.has_code("MembersCapped"));
    }
    SECTION("at the cap, a Kubernetes Node not among the nodes given is refused") {
        Cluster c;
        c.o.members = members_at_cap(stages::k_discovery_member_cap);
        Value extra = c.o.kube_nodes.back();
        extra["metadata"]["name"] = "u-w-7";
        c.o.kube_nodes.push_back(std::move(extra));
        auto out = c.run();
        CHECK(out.done == 0);
        CHECK(c.has_code("NodesMissing"));
        CHECK(c.has_code("MembersCapped"));
        CHECK(c.of_kind("TalosMachine").empty());
    }
}

TEST_CASE("a TalosCluster this plan wrote is a rerun, not a refusal", "[plan][cluster]") {
    Cluster c;
    REQUIRE_FALSE(c.run().error);
    Value existing = *c.of_kind("TalosCluster")[0];
    existing["metadata"]["annotations"][std::string(vocab::k_annotation_plan_digest)] =
        stages::plan_digest(c.list);
    c.o.existing_cluster = &existing;
    auto out = c.run();
    CHECK(out.done == 3);
    CHECK(c.has_code("Resume"));
    CHECK_FALSE(c.list.has_errors());
}

TEST_CASE("a v1alpha1 install disk selector on nodes without a disk is in the layered patches, "
          "and the machines planned again with them are their nodes",
          "[plan][cluster]") {
    // issue 26's field trial: workers that name their install disk by a selector alone (talhelper's
    // installDiskSelector); the plan said "captured", no patch held it, and the adoption's live
    // zero-drift check kept every such machine held
    Cluster c;
    for (std::size_t i : {1, 2}) {
        for (auto& d : c.list.items[i]["status"]["config"]) {
            if (!d.contains("kind")) {
                d["machine"]["install"].erase("disk");
            }
        }
        c.set(i, {"machine", "install", "diskSelector"}, Value{{"model", "QEMU HARDDISK"}});
        Value& facts = c.list.items[i]["status"]["facts"]["install"];
        facts["disk"] = "";
        facts["diskSelector"] = Value{{"model", "QEMU HARDDISK"}}.dump();
    }
    auto out = c.run();
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK_FALSE(c.has_code("LayersDidNotVerify"));
    bool held = false;
    for (const auto* p : c.of_kind("TalosConfigPatch")) {
        held = held || doc::get_string(*p, "spec.patch").find("QEMU HARDDISK") != std::string::npos;
    }
    CHECK(held);
    c.replan_with_patches(3); // the adoption's live zero-drift check
}

TEST_CASE("settings Ichor does not own are captured on every node, inline manifests too",
          "[plan][cluster]") {
    Cluster c;
    for (std::size_t i = 0; i < 3; ++i) {
        c.set(i, {"cluster", "inlineManifests"},
              Value::array({Value{{"name", "rbac"}, {"contents", "kind: ClusterRole"}}}));
        c.set(i, {"machine", "kubelet", "extraArgs"},
              Value{{"rotate-server-certificates", "true"}});
    }
    auto out = c.run();
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK(out.stopped == 0);
    CHECK_FALSE(c.has_code("LayersDidNotVerify"));
    const Value* cluster = patch_of_layer(c, "cluster");
    REQUIRE(cluster != nullptr);
    CHECK(doc::get_string(*cluster, "spec.patch").find("rbac") != std::string::npos);
    CHECK(doc::get_string(*cluster, "spec.patch").find("rotate-server-certificates") !=
          std::string::npos);
    bool said = false;
    for (const auto& r : c.list.results) {
        if (doc::get_string(r, "field.path") == "cluster.inlineManifests") {
            said = r.value("message", "")
                       .find("Talos keeps applying it at bootstrap and at every "
                             "talosctl upgrade-k8s") != std::string::npos;
        }
    }
    CHECK(said);
}

TEST_CASE("a blocked worker stays out and the others go on, a blocked control plane refuses all",
          "[plan][cluster]") {
    SECTION("worker") {
        Cluster c;
        c.set(2, {"cluster", "acceptedCAs"}, other_ca()); // class C: no patch carries a CA
        auto out = c.run();
        REQUIRE_FALSE(out.error);
        CHECK(out.done == 2);
        CHECK(out.stopped == 1);
        CHECK(c.of_kind("TalosMachine").size() == 2);
        CHECK(c.of_kind("TalosCluster").size() == 1);
    }
    SECTION("control plane") {
        Cluster c;
        c.set(0, {"cluster", "acceptedCAs"}, other_ca());
        auto out = c.run();
        CHECK(out.done == 0);
        CHECK(c.has_code("ControlPlaneBlocked"));
        CHECK(c.of_kind("TalosMachine").empty());
        CHECK(c.of_kind("TalosCluster").empty());
    }
}

// ---- The CNI (ADR 0128 decisions 3 and 4; docs/cni.md) ------------------------------------------

namespace {

const char* k_cp_flannel = "version: v1alpha1\nmachine: {type: controlplane}\ncluster: {}\n";

std::vector<cni::ControlPlane> planes_none() {
    return {cni_test::plane("cp-1", cni_test::k_cp_none)};
}

const Value* cluster_of(const Cluster& c) {
    auto tcs = c.of_kind("TalosCluster");
    return tcs.empty() ? nullptr : tcs.front();
}

std::string message_of(const Cluster& c, const std::string& code) {
    for (const auto& r : c.list.results) {
        if (r["tags"].value(std::string(vocab::k_tag_code), "") == code) {
            return r.value("message", "");
        }
    }
    return {};
}

} // namespace

TEST_CASE("a non-Cilium CNI is refused with the ADR's words unless --cni-unmanaged",
          "[plan][cluster][cni]") {
    cni::ClusterObjects flannel;
    cni_test::add_objects(flannel, "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: "
                                   "kube-flannel, namespace: kube-system}\n");
    flannel.nodes = {cni_test::node("cp-1", "True")};
    const std::vector<cni::ControlPlane> cps{cni_test::plane("cp-1", k_cp_flannel)};

    Cluster c;
    c.o.cni = stages::decide_cni(flannel, cps, {}, false);
    CHECK(c.o.cni.preset.empty());
    auto out = c.run();
    CHECK(out.done == 0);
    CHECK(c.of_kind("TalosCluster").empty());
    CHECK(c.of_kind("Secret").empty());
    const std::string m = message_of(c, "CniNotCilium");
    CHECK(m.find("rerun with --cni-unmanaged") != std::string::npos);
    CHECK(m.find(std::string(cni::k_no_migration)) != std::string::npos);
    CHECK(m.find("Ichor does not migrate a CNI. To have Ichor manage Cilium you need a cluster "
                 "whose CNI is Cilium with ipam.mode: kubernetes, or none; see the adopt guide, "
                 "'Moving from flannel'.") != std::string::npos);
    CHECK(c.has_code("CniDetected"));
    CHECK_FALSE(c.has_code("CNIUndecided"));

    Cluster u;
    u.o.cni = stages::decide_cni(flannel, cps, {true, false, Value()}, false);
    CHECK(u.o.cni.preset == "unmanaged");
    CHECK(u.run().done == 3);
    REQUIRE(cluster_of(u) != nullptr);
    CHECK((*cluster_of(u))["spec"]["cni"]["preset"] == "unmanaged");
    CHECK_FALSE((*cluster_of(u))["spec"]["cni"].contains("cilium"));
    CHECK(message_of(u, "CniDetected").find("flannel") != std::string::npos);

    // --cilium-values on a non-Cilium cluster
    Cluster f;
    f.o.cni = stages::decide_cni(flannel, cps, {false, true, cni_test::yaml("a: 1")}, false);
    f.run();
    CHECK(f.has_code("CiliumValuesNotCilium"));
    CHECK(f.of_kind("TalosCluster").empty());
}

TEST_CASE("a Cilium takeover: the values reach the preflight and the TalosCluster, the gate "
          "refuses a difference unless accepted",
          "[plan][cluster][cni]") {
    const auto guide = cni_test::guide_cluster();
    SECTION("no values: no difference, Ichor's defaults") {
        Cluster c;
        c.o.cni = stages::decide_cni(guide, planes_none(), {}, false);
        REQUIRE(c.o.cni.preflight);
        CHECK(c.o.cni.preflight->empty());
        CHECK(c.run().done == 3);
        REQUIRE(cluster_of(c) != nullptr);
        CHECK((*cluster_of(c))["spec"]["cni"]["preset"] == "cilium");
        CHECK_FALSE((*cluster_of(c))["spec"]["cni"].contains("cilium"));
        CHECK(c.has_code("CiliumPreflight"));
        CHECK(message_of(c, "CniPlan").find("restarts the Cilium agents") != std::string::npos);
    }
    SECTION("values that the live Cilium does not run: refused before any write") {
        Cluster c;
        const Value v = cni_test::yaml("hubble: {relay: {enabled: true}}");
        c.o.cni = stages::decide_cni(guide, planes_none(), {false, true, v}, false);
        REQUIRE(c.o.cni.preflight);
        REQUIRE(c.o.cni.preflight->differences.size() == 1);
        CHECK(c.o.cni.preflight->differences[0].path == "hubble.relay.enabled");
        auto out = c.run();
        CHECK(out.done == 0);
        CHECK(c.has_code("CiliumDiffRefused"));
        CHECK(c.of_kind("TalosCluster").empty());
        CHECK(c.of_kind("TalosMachine").empty());
        bool tagged = false;
        for (const auto& r : c.list.results) {
            if (r["tags"].value(std::string(vocab::k_tag_code), "") == "CiliumDiff") {
                CHECK(r.value("severity", "") == "error");
                CHECK(r["tags"].value("ichor.maesh.dev/path", "") == "hubble.relay.enabled");
                tagged = true;
            }
        }
        CHECK(tagged);

        Cluster a; // --accept-cilium-diff: written, the difference listed for consent
        a.o.cni = stages::decide_cni(guide, planes_none(), {false, true, v}, true);
        CHECK(a.run().done == 3);
        REQUIRE(cluster_of(a) != nullptr);
        CHECK((*cluster_of(a))["spec"]["cni"]["cilium"]["values"] == v);
        const auto lines = stages::consent_lines(a.list);
        CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
            return l.find("hubble.relay.enabled") != std::string::npos;
        }));
    }
    SECTION("a release record with values: the record's values, owned keys kept out") {
        auto o = guide;
        o.secrets.push_back(cni_test::release_secret(cni_test::release_json(
            "cilium", 1, "deployed", "cilium", "1.19.6",
            cni_test::yaml("ipam: {mode: kubernetes}\ncluster: {name: home}\n"))));
        Cluster c;
        c.o.cni = stages::decide_cni(o, planes_none(), {}, false);
        CHECK(c.o.cni.values_source == "the release record");
        CHECK(c.o.cni.values == cni_test::yaml("cluster: {name: home}"));
        c.run();
        REQUIRE(cluster_of(c) == nullptr); // cluster.name differs from the guide's "default"
        CHECK(c.has_code("CiliumDiffRefused"));
        Cluster a;
        a.o.cni = stages::decide_cni(o, planes_none(), {}, true);
        CHECK(a.run().done == 3);
        REQUIRE(cluster_of(a) != nullptr);
        CHECK((*cluster_of(a))["spec"]["cni"]["cilium"]["values"] ==
              cni_test::yaml("cluster: {name: home}"));

        Cluster f; // --cilium-values beside a record that carries values
        f.o.cni =
            stages::decide_cni(o, planes_none(), {false, true, cni_test::yaml("a: 1")}, false);
        f.run();
        CHECK(message_of(f, "ReleaseHasValues").find(std::string(cni::k_release_has_values)) !=
              std::string::npos);
        CHECK(f.of_kind("TalosCluster").empty());
    }
}

TEST_CASE("a takeover of an inline-manifest Cilium: the manifest's removal is class B, recorded "
          "in the TalosCluster, and a release plans it the same from the TalosCluster alone",
          "[plan][cluster][cni]") {
    const std::string ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: cilium, "
                           "namespace: kube-system, labels: {k8s-app: cilium}}\n";
    const std::string cp_inline = std::string(cni_test::k_cp_none) +
                                  "  inlineManifests:\n    - name: cilium\n      contents: |\n" +
                                  "        apiVersion: apps/v1\n        kind: DaemonSet\n" +
                                  "        metadata: {name: cilium, namespace: kube-system, "
                                  "labels: {k8s-app: cilium}}\n";
    const std::vector<cni::ControlPlane> planes{cni_test::plane("u-cp-1", cp_inline)};
    const Value manifest{{"name", "cilium"}, {"contents", ds}};
    const auto find = [](const doc::ResourceList& l, const std::string& code) -> const Value* {
        for (const auto& r : l.results) {
            if (r["tags"].value(std::string(vocab::k_tag_code), "") == code) {
                return &r;
            }
        }
        return nullptr;
    };

    Cluster c;
    c.o.cni = stages::decide_cni(cni_test::guide_cluster(), planes, {}, false);
    REQUIRE(c.o.cni.action == "takeover");
    CHECK(c.o.cni.inline_manifests == std::vector<std::string>{"cilium"});
    c.set(0, {"cluster", "inlineManifests"}, Value::array({manifest}));
    CHECK(c.run().done == 3);
    REQUIRE(cluster_of(c) != nullptr);
    const Value tc = *cluster_of(c);
    CHECK(tc["spec"]["cni"]["cilium"]["inlineManifests"] == Value::array({"cilium"}));
    const Value* b = find(c.list, "CiliumInlineManifest");
    REQUIRE(b != nullptr);
    CHECK(b->value("severity", "") == "warning");
    CHECK((*b)["tags"].value(std::string(vocab::k_tag_class), "") == "B");
    CHECK(b->value("message", "").find("talosctl upgrade-k8s") != std::string::npos);
    const auto lines = stages::consent_lines(c.list);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
        return l.find("cluster.inlineManifests") != std::string::npos;
    }));
    CHECK(std::any_of(c.list.results.begin(), c.list.results.end(), [](const Value& r) {
        return r["tags"].value(std::string(vocab::k_tag_code), "") == "CniPlan" &&
               r.value("message", "").find("inline manifest cilium delivers Cilium") !=
                   std::string::npos;
    }));

    // The render from the TalosCluster alone: no inline manifest, and the same class B.
    auto spec = render::parse_cluster(tc);
    REQUIRE(spec.ok());
    CHECK(spec->cilium_manifests == std::vector<std::string>{"cilium"});
    doc::ResourceList again;
    again.items.push_back(c.list.items[0]); // the control plane's Inspection
    stages::PlanOptions po{"lab-u", "ichor-system", true, &tc, &c.fx.bundle, {}, {}};
    stages::plan(again, po);
    CHECK(find(again, "CiliumInlineManifest") != nullptr);
    CHECK(find(again, "InlineManifests") == nullptr);
    CHECK_FALSE(again.has_errors());
    render::Input in{&*spec, &c.fx.bundle, "controlplane", "u-cp-1", {"/dev/sda", "img", false}, "",
                     {}};
    auto rendered = render::render(in);
    REQUIRE(rendered.ok());
    for (const auto& d : *rendered) {
        CHECK_FALSE(doc::find_path(d, "cluster.inlineManifests"));
    }

    SECTION("another inline manifest beside Cilium's still blocks the control plane") {
        Cluster o;
        o.o.cni = stages::decide_cni(cni_test::guide_cluster(), planes, {}, false);
        o.set(0, {"cluster", "inlineManifests"},
              Value::array({manifest, Value{{"name", "x"}, {"contents", "kind: ConfigMap"}}}));
        CHECK(o.run().done == 0);
        CHECK(o.has_code("InlineManifests"));
        CHECK(o.has_code("ControlPlaneBlocked"));
        CHECK(o.of_kind("TalosCluster").empty());
    }
}

TEST_CASE("no CNI: managed Cilium, Nodes NotReady for the network pass the health gate only",
          "[plan][cluster][cni]") {
    cni::ClusterObjects none;
    none.nodes = {cni_test::node("u-cp-1", "False", cni_test::k_no_network)};
    Cluster c;
    c.o.cni = stages::decide_cni(none, planes_none(), {}, false);
    CHECK(c.o.cni.preset == "cilium");
    CHECK(c.o.cni.no_cni);
    for (auto& n : c.o.kube_nodes) {
        n["status"]["conditions"][0] =
            Value{{"type", "Ready"}, {"status", "False"}, {"message", cni_test::k_no_network}};
    }
    CHECK(c.run().done == 3);
    REQUIRE(cluster_of(c) != nullptr);
    CHECK((*cluster_of(c))["spec"]["cni"]["preset"] == "cilium");

    Cluster other; // NotReady for another reason
    other.o.cni = c.o.cni;
    other.o.kube_nodes[1]["status"]["conditions"][0]["status"] = "False";
    other.o.kube_nodes[1]["status"]["conditions"][0]["message"] = "PLEG is not healthy";
    CHECK(other.run().done == 0);
    CHECK(other.has_code("NodeNotReady"));

    Cluster managed; // a Cilium cluster does not pass NotReady Nodes
    managed.o.cni = stages::decide_cni(cni_test::guide_cluster(), planes_none(), {}, false);
    managed.o.kube_nodes[1]["status"]["conditions"][0] =
        c.o.kube_nodes[1]["status"]["conditions"][0];
    CHECK(managed.run().done == 0);
    CHECK(managed.has_code("NodeNotReady"));
}

TEST_CASE("a staged configuration leaves a worker out and refuses the cluster for a control plane",
          "[plan][cluster]") {
    auto stage = [](Cluster& c, std::size_t i) {
        Value staged = c.list.items[i]["status"]["config"];
        for (auto& d : staged) {
            if (!d.contains("kind")) {
                d["machine"]["sysctls"]["vm.nr_hugepages"] = "64";
            }
        }
        c.list.items[i]["status"]["persistentConfig"] = staged;
    };
    SECTION("worker") {
        Cluster c;
        stage(c, 2);
        auto out = c.run();
        CHECK(out.done == 2);
        CHECK(out.stopped == 1);
        CHECK(c.has_code("StagedConfig"));
        CHECK(c.of_kind("TalosCluster").size() == 1);
    }
    SECTION("control plane") {
        Cluster c;
        stage(c, 0);
        auto out = c.run();
        CHECK(out.done == 0);
        CHECK(c.has_code("StagedConfig"));
        CHECK(c.has_code("ControlPlaneBlocked"));
        CHECK(c.of_kind("TalosCluster").empty());
    }
}

TEST_CASE("a Node cut to plan_node_fields plans as the whole Node does", "[plan][cluster]") {
    // Nodes as a real API server lists them: labels, images, capacity and spec beside what the
    // plan reads; one found by its InternalIP only, one NotReady.
    auto real = [](Value n, const std::string& address) {
        n["metadata"]["labels"]["kubernetes.io/hostname"] = n["metadata"]["name"];
        n["metadata"]["managedFields"] = Value::array({Value{{"manager", "kubelet"}}});
        n["spec"]["podCIDR"] = "10.244.0.0/24";
        n["status"]["addresses"] =
            Value::array({Value{{"type", "InternalIP"}, {"address", address}}});
        n["status"]["images"] = Value::array({Value{{"names", Value::array({"img"})}}});
        n["status"]["capacity"]["cpu"] = "4";
        return n;
    };
    const Value kept = stages::plan_node_fields(real(test::ready_node("u-w-1"), "10.0.0.3"));
    CHECK(kept ==
          Value{{"apiVersion", "v1"},
                {"kind", "Node"},
                {"metadata", {{"name", "u-w-1"}}},
                {"status",
                 {{"addresses",
                   Value::array({Value{{"type", "InternalIP"}, {"address", "10.0.0.3"}}})},
                  {"conditions", Value::array({Value{{"type", "Ready"}, {"status", "True"}}})},
                  {"nodeInfo", {{"kubeletVersion", "v1.34.4"}}}}}});

    for (const bool not_ready : {false, true}) {
        Cluster whole;
        Cluster cut;
        const std::vector<std::string> addresses = {"10.0.0.2", "10.0.0.3", "10.0.0.4"};
        for (std::size_t i = 0; i < addresses.size(); ++i) {
            Value n = real(whole.o.kube_nodes[i], addresses[i]);
            if (i == 2) {
                n["metadata"]["name"] = "renamed-w-2"; // matched by its address
            }
            if (not_ready && i == 1) {
                n["status"]["conditions"][0]["status"] = "False";
            }
            whole.o.kube_nodes[i] = n;
            cut.o.kube_nodes[i] = stages::plan_node_fields(n);
        }
        INFO("NotReady: " << not_ready);
        const auto a = whole.run();
        const auto b = cut.run();
        CHECK(a.done == b.done);
        CHECK(a.stopped == b.stopped);
        CHECK(a.done == (not_ready ? 0 : 3));
        CHECK(whole.list.to_value() == cut.list.to_value());
    }
}
