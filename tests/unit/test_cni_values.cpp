#include "common/cni/values.h"
#include "test_cni_support.h"

using namespace ichor;
using cni_test::Value;
using cni_test::yaml;

TEST_CASE("a values file is read as a map", "[cni][values]") {
    auto v = cni::read_values("hubble:\n  relay:\n    enabled: true\n", "values.yaml");
    REQUIRE(v.ok());
    CHECK(*v == yaml("hubble: {relay: {enabled: true}}"));
    auto empty = cni::read_values("", "values.yaml");
    REQUIRE(empty.ok());
    CHECK(*empty == Value::object());
}

TEST_CASE("values that are not a map, or not YAML, are refused", "[cni][values]") {
    auto list = cni::read_values("- a\n- b\n", "values.yaml");
    REQUIRE_FALSE(list.ok());
    CHECK(list.error().kind == ErrorKind::Usage);
    CHECK(list.error().message == "values.yaml: Cilium values must be a map, not array");
    auto broken = cni::read_values("a: [\n", "values.yaml");
    REQUIRE_FALSE(broken.ok());
    CHECK(broken.error().kind == ErrorKind::Usage);
    CHECK(broken.error().message.rfind("values.yaml", 0) == 0);
}

TEST_CASE("a values file past the reader's limit is refused", "[cni][values]") {
    std::string big = "a: \"" + std::string(doc::k_limits.max_document_bytes, 'x') + "\"\n";
    auto v = cni::read_values(big, "values.yaml");
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().code == "InputLimit");
    CHECK(v.error().kind == ErrorKind::Usage);
}

TEST_CASE("an Ichor-owned key is refused naming its path", "[cni][values]") {
    auto owned = cni::read_values("ipam:\n  mode: cluster-pool\n", "values.yaml");
    REQUIRE_FALSE(owned.ok());
    CHECK(owned.error().code == "OwnedValue");
    CHECK(owned.error().message.rfind("values.yaml: ipam.mode is owned by Ichor: Talos gives each "
                                      "node its pod CIDR",
                                      0) == 0);
    CHECK(owned.error().hint == "remove ipam.mode from values.yaml");
    // A scalar in place of the map that holds an owned key would replace it too.
    auto above = cni::read_values("cgroup: none\n", "values.yaml");
    REQUIRE_FALSE(above.ok());
    CHECK(above.error().message.rfind(
              "values.yaml: cgroup.autoMount.enabled is owned by Ichor (set through cgroup)", 0) ==
          0);
    auto below = cni::read_values("k8sServiceHost: {x: 1}\n", "values.yaml");
    REQUIRE_FALSE(below.ok());
    CHECK(below.error().message.rfind(
              "values.yaml: k8sServiceHost is owned by Ichor (set through k8sServiceHost.x)", 0) ==
          0);
    // A sibling of an owned key is the operator's.
    CHECK(cni::read_values("ipam: {operator: {clusterPoolIPv4MaskSize: 24}}\ncgroup: {autoMount: "
                           "{resources: {}}}\n",
                           "values.yaml")
              .ok());
}

TEST_CASE("leaf paths and Helm's merge", "[cni][values]") {
    Value v = yaml("a: {b: 1, c: {}}\nd: [1, 2]\ne: {f: {g: x}}\n");
    CHECK(cni::leaf_paths(v) == std::vector<std::string>{"a.b", "a.c", "d", "e.f.g"});
    Value merged =
        cni::merge_values(yaml("a: {b: 1, c: 2}\nl: [1]\n"), yaml("a: {c: null, d: 3}\nl: [2]\n"));
    CHECK(merged == yaml("a: {b: 1, d: 3}\nl: [2]\n"));
}

TEST_CASE("the render's values: defaults, then the user's, then the owned", "[cni][values]") {
    Value v = cni::render_values(yaml("hubble: {relay: {enabled: true}}\noperator: {replicas: 1}"));
    CHECK(*cni::value_at(v, "hubble.relay.enabled") == true);
    CHECK(*cni::value_at(v, "hubble.enabled") == true);
    CHECK(*cni::value_at(v, "operator.replicas") == 1);
    CHECK(*cni::value_at(v, "ipam.mode") == "kubernetes");
    CHECK(*cni::value_at(v, "routingMode") == "tunnel");
    CHECK(*cni::value_at(v, "cluster.name") == "default");
}

TEST_CASE("a record's owned keys are split off for storage", "[cni][values]") {
    auto s =
        cni::split_owned(yaml("ipam: {mode: kubernetes}\nkubeProxyReplacement: true\n"
                              "hubble: {relay: {enabled: true}}\ncgroup: {autoMount: {enabled: "
                              "false}, hostRoot: /sys/fs/cgroup}\n"));
    CHECK(s.values == yaml("hubble: {relay: {enabled: true}}"));
    CHECK(s.owned == std::vector<std::string>{"ipam.mode", "kubeProxyReplacement",
                                              "cgroup.autoMount.enabled", "cgroup.hostRoot"});
    CHECK(cni::validate_values(s.values, "spec.cni.cilium.values").ok());
}
