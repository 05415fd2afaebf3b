// The typed views of Ichor's objects (common/doc/objects.h): every accessor over objects made in
// memory, and the contract for a field that is missing or of another type (a hostile object reads
// as defaults, never as a throw).
#include "common/doc/objects.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;
using objects::ClusterView;
using objects::MachineView;
using objects::PatchView;

namespace {

// Written out key by key (not through objects::field), so that the test holds the paths to the
// CRDs.
Value parsed(std::string_view text) {
    auto v = doc::parse_one(text, "object");
    REQUIRE(v.ok());
    return *v;
}

const char* const k_cluster = R"(
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosCluster
metadata: {name: home, namespace: ichor-system}
spec:
  clusterName: home-lab
  talosVersion: v1.13.4
  kubernetesVersion: v1.33.1
  endpoint: https://127.0.0.10:6443
  secretsBundleRef: {name: home-bundle, key: secrets.yaml}
  discovery: {addresses: ["127.0.0.11", "127.0.0.12:50001"]}
)";

const char* const k_machine = R"(
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata:
  name: home-cp-1
  annotations: {ichor.maesh.dev/hold-apply: "true"}
spec:
  cluster: home
  role: controlplane
  address: 127.0.0.11
  approval: Approved
  identity: {uuid: ABC-1, serial: S-1, macs: ["02:00:00:00:00:01"]}
  install: {disk: /dev/sda, image: "ghcr.io/siderolabs/installer:v1.13.4", wipe: true}
)";

const char* const k_patch = R"(
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosConfigPatch
metadata: {name: home-cp-1-adopted}
spec:
  cluster: home
  layer: machine
  machine: home-cp-1
  order: 7
  patch: "machine: {}"
  secretValues: [{path: "/machine/token", secretRef: {name: s, key: k}}]
)";

} // namespace

TEST_CASE("the cluster view reads every field it names", "[doc][objects]") {
    const Value c = parsed(k_cluster);
    const ClusterView v(c);
    CHECK(v.is());
    CHECK_FALSE(MachineView(c).is());
    CHECK(v.kind() == "TalosCluster");
    CHECK(v.name() == "home");
    CHECK(v.ns() == "ichor-system");
    CHECK(v.cluster_name() == "home-lab");
    CHECK(v.talos_version() == "v1.13.4");
    CHECK(v.kubernetes_version() == "v1.33.1");
    CHECK(v.endpoint() == "https://127.0.0.10:6443");
    CHECK(v.bundle_secret() == "home-bundle");
    CHECK(v.bundle_key() == "secrets.yaml");
    REQUIRE(v.discovery_addresses() != nullptr);
    CHECK(*v.discovery_addresses() == Value::array({"127.0.0.11", "127.0.0.12:50001"}));
    CHECK(&v.object() == &c);
}

TEST_CASE("the machine view reads every field it names", "[doc][objects]") {
    const Value m = parsed(k_machine);
    const MachineView v(m);
    CHECK(v.is());
    CHECK(v.name() == "home-cp-1");
    CHECK(v.cluster() == "home");
    CHECK(v.role() == "controlplane");
    CHECK(v.is_control_plane());
    CHECK(v.address() == "127.0.0.11");
    CHECK(v.approval() == "Approved");
    CHECK(v.is_approved());
    CHECK(v.uuid() == "ABC-1"); // as written
    CHECK(v.serial() == "S-1");
    REQUIRE(v.macs() != nullptr);
    CHECK(*v.macs() == Value::array({"02:00:00:00:00:01"}));
    CHECK(v.install_disk() == "/dev/sda");
    CHECK(v.install_image() == "ghcr.io/siderolabs/installer:v1.13.4");
    CHECK(v.install_wipe());
    CHECK(v.held());
    CHECK(v.has_annotation("ichor.maesh.dev/hold-apply"));
    CHECK_FALSE(v.has_annotation("ichor.maesh.dev/plan-digest"));
}

TEST_CASE("the patch view reads every field it names and selects by layer", "[doc][objects]") {
    const Value p = parsed(k_patch);
    const PatchView v(p);
    CHECK(v.is());
    CHECK(v.cluster() == "home");
    CHECK(v.layer() == "machine");
    CHECK(v.machine() == "home-cp-1");
    CHECK(v.role().empty());
    CHECK(v.order() == 7);
    CHECK(v.patch() == "machine: {}");
    REQUIRE(v.secret_values() != nullptr);
    CHECK(v.secret_values()->size() == 1);
    CHECK(v.secret_values_field() == v.secret_values());
    CHECK(v.selects("controlplane", "home-cp-1"));
    CHECK_FALSE(v.selects("controlplane", "home-cp-2"));
    CHECK_FALSE(v.selects("controlplane", ""));

    Value q = p;
    q["spec"]["layer"] = "role";
    q["spec"]["role"] = "worker";
    CHECK(PatchView(q).selects("worker", "any"));
    CHECK_FALSE(PatchView(q).selects("controlplane", "any"));
    q["spec"]["layer"] = "cluster";
    CHECK(PatchView(q).selects("controlplane", ""));
    q["spec"]["layer"] = "node"; // no such layer
    CHECK_FALSE(PatchView(q).selects("worker", "home-cp-1"));
}

TEST_CASE("a patch selects a machine of its cluster as cluster() and selects() together say",
          "[doc][objects]") {
    // The form render::select_patches asks of every patch for every machine, read in place: it
    // must agree with the two questions it stands for on every layer, cluster and name.
    const Value p = parsed(k_patch);
    for (const char* layer : {"machine", "role", "cluster", "node", ""}) {
        for (const char* cluster : {"home", "other", ""}) {
            Value q = p;
            q["spec"]["layer"] = layer;
            q["spec"]["role"] = "worker";
            q["spec"]["cluster"] = cluster;
            if (std::string(layer).empty()) {
                q["spec"].erase("layer");
            }
            const PatchView v(q);
            for (const char* role : {"worker", "controlplane"}) {
                for (const char* machine : {"home-cp-1", "home-cp-2", ""}) {
                    INFO(layer << " " << cluster << " " << role << " " << machine);
                    CHECK(v.selects("home", role, machine) ==
                          (v.cluster() == "home" && v.selects(role, machine)));
                    CHECK(v.selects("", role, machine) ==
                          (v.cluster().empty() && v.selects(role, machine)));
                }
            }
        }
    }
    CHECK(PatchView(p).selects("home", "controlplane", "home-cp-1"));
    CHECK_FALSE(PatchView(p).selects("other", "controlplane", "home-cp-1"));
    // no spec at all, or a spec that is not a mapping: of no cluster, selecting nothing
    const Value bare = Value{{"kind", "TalosConfigPatch"}};
    CHECK_FALSE(PatchView(bare).selects("", "worker", "x"));
    const Value odd = Value{{"kind", "TalosConfigPatch"}, {"spec", "text"}};
    CHECK_FALSE(PatchView(odd).selects("", "worker", "x"));
}

TEST_CASE("a missing field reads as empty, no list, false, 0", "[doc][objects]") {
    const Value m = Value{{"kind", "TalosMachine"}};
    const MachineView v(m);
    CHECK_FALSE(v.is()); // no apiVersion
    for (const std::string& s : {v.name(), v.ns(), v.cluster(), v.role(), v.address(), v.approval(),
                                 v.uuid(), v.serial(), v.install_disk(), v.install_image()}) {
        CHECK(s.empty());
    }
    CHECK(v.approval("Pending") == "Pending");
    CHECK_FALSE(v.is_control_plane());
    CHECK_FALSE(v.is_approved());
    CHECK(v.macs() == nullptr);
    CHECK_FALSE(v.install_wipe());
    CHECK_FALSE(v.held());
    const ClusterView c(m);
    CHECK(c.bundle_secret().empty());
    CHECK(c.bundle_key() == "bundle.yaml"); // the default key
    CHECK(c.discovery_addresses() == nullptr);
    const PatchView p(m);
    CHECK(p.order() == 0);
    CHECK(p.secret_values() == nullptr);
    CHECK(p.secret_values_field() == nullptr);
    CHECK_FALSE(p.selects("controlplane", "x"));
}

TEST_CASE("a field of an object of another type reads as missing, without throwing",
          "[doc][objects]") {
    const Value hostile = parsed(R"(
apiVersion: ichor.maesh.dev/v1alpha1
kind: TalosMachine
metadata: {name: [1, 2], annotations: [ichor.maesh.dev/hold-apply]}
spec:
  cluster: {name: home}
  role: 3
  address: null
  approval: true
  identity: "not a mapping"
  install: {disk: [], wipe: "true"}
  order: "7"
  layer: [machine]
  secretValues: {path: /x}
  discovery: {addresses: "127.0.0.1"}
  secretsBundleRef: {key: 5}
)");
    const MachineView v(hostile);
    CHECK(v.is());
    CHECK(v.name().empty());
    CHECK(v.cluster().empty());
    CHECK(v.role().empty());
    CHECK(v.address().empty());
    CHECK(v.approval("Pending") == "Pending");
    CHECK(v.uuid().empty());
    CHECK(v.macs() == nullptr);
    CHECK(v.install_disk().empty());
    CHECK_FALSE(v.install_wipe()); // only the boolean true is true
    CHECK_FALSE(v.held());         // annotations that are not a mapping hold nothing
    const PatchView p(hostile);
    CHECK(p.order() == 0);
    CHECK(p.layer().empty());
    CHECK(p.secret_values() == nullptr);         // a mapping is not the list
    REQUIRE(p.secret_values_field() != nullptr); // but it is there, for render to refuse
    CHECK(p.secret_values_field()->is_object());
    const ClusterView c(hostile);
    CHECK(c.discovery_addresses() == nullptr);
    CHECK(c.bundle_key() == "bundle.yaml");

    Value big = parsed(k_patch);
    big["spec"]["order"] = 1.5;
    CHECK(PatchView(big).order() == 0);
    big["spec"]["order"] = -3;
    CHECK(PatchView(big).order() == -3);
}

TEST_CASE("the views work on any document and on no document", "[doc][objects]") {
    const Value nothing;
    CHECK_FALSE(MachineView(nothing).is());
    CHECK(MachineView(nothing).address().empty());
    CHECK_FALSE(MachineView(nothing).held());
    const Value text = "a string";
    CHECK(PatchView(text).cluster().empty());
    CHECK(PatchView(text).order() == 0);
    CHECK(ClusterView(text).discovery_addresses() == nullptr);
    const Value list = Value::array({1, 2});
    CHECK(ClusterView(list).endpoint().empty());
    const Value wrong_api = Value{{"apiVersion", "v1"}, {"kind", "TalosCluster"}};
    CHECK_FALSE(ClusterView(wrong_api).is());
}
