// The typed view of an Inspection (common/inspection/view.h): every accessor over an item made
// in memory, and the contract for a field that is missing or of another type.
#include "common/doc/resource_list.h"
#include "common/inspection/view.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;
using inspection::View;

namespace {

// A configured control plane as docs/stream.md shows one, written out key by key (not through
// fields.h, so that the test holds the paths to the format).
Value full_item() {
    auto parsed = doc::parse_one(R"(
apiVersion: adopt.ichor.maesh.dev/v1alpha1
kind: Inspection
metadata: {name: "127.0.0.12:50001"}
spec:
  address: 127.0.0.12
  port: 50001
  talosconfig: {path: /tc, context: prod, caFingerprint: "sha256:ab"}
status:
  mode: configured
  access: os:admin
  tls: {outcome: verified, fingerprint: "FP="}
  talosVersion: v1.13.9
  identity: {uuid: U-1, serial: S-1, macs: ["02:00:00:00:00:01"], hostname: cp-1, nodeID: N-1}
  machineStatus: {stage: running, ready: true}
  facts:
    clusterID: CID
    clusterName: prod
    endpoint: https://127.0.0.12:6443
    role: controlplane
    talosCA: PEM
    install: {disk: /dev/sda, image: "ghcr.io/siderolabs/installer:v1.13.9", wipe: true,
              diskSelector: "disk.dev_path == \"/dev/sda\""}
    layout: multi-document
    documents: [HostnameConfig]
    versionContract: 1.12+
  config: [{version: v1alpha1}]
  etcd:
    members: [{id: "00000000000000aa", hostname: cp-1, peerURLs: [], clientURLs: [], learner: false}]
    status: {memberID: "00000000000000aa", leader: "00000000000000aa", dbSize: 1, raftIndex: 2}
    problem: "etcd is not running"
  disks: [{name: sda}]
  links: [{name: eth0}]
  trust: {verdict: Member, cluster: prod, clusterID: true, talosCA: true}
)",
                                 "item");
    REQUIRE(parsed.ok());
    return *parsed;
}

} // namespace

TEST_CASE("the view reads every field of an Inspection", "[inspection][view]") {
    const Value item = full_item();
    const View v(item);
    CHECK(v.is_inspection());
    CHECK(v.kind() == "Inspection");
    CHECK(v.name() == "127.0.0.12:50001");
    CHECK(v.address() == "127.0.0.12");
    CHECK(v.node() == "127.0.0.12");
    CHECK(v.port() == std::optional<std::int64_t>(50001));
    CHECK(v.talosconfig_path() == "/tc");
    CHECK(v.talosconfig_ca_fingerprint() == "sha256:ab");
    CHECK(v.mode() == "configured");
    CHECK(v.access() == "os:admin");
    CHECK(v.tls_outcome() == "verified");
    CHECK(v.tls_fingerprint() == "FP=");
    CHECK(v.talos_version() == "v1.13.9");
    CHECK(v.machine_stage() == "running");
    CHECK(v.uuid() == "U-1");
    CHECK(v.serial() == "S-1");
    REQUIRE(v.macs() != nullptr);
    CHECK(*v.macs() == Value::array({"02:00:00:00:00:01"}));
    CHECK(v.hostname() == "cp-1");
    CHECK(v.node_id() == "N-1");
    CHECK(v.cluster_id() == "CID");
    CHECK(v.cluster_name() == "prod");
    CHECK(v.endpoint() == "https://127.0.0.12:6443");
    CHECK(v.role() == "controlplane");
    CHECK(v.talos_ca() == "PEM");
    CHECK(v.install_disk() == "/dev/sda");
    CHECK(v.install_image() == "ghcr.io/siderolabs/installer:v1.13.9");
    CHECK(v.install_wipe());
    CHECK(v.install_disk_selector() == "disk.dev_path == \"/dev/sda\"");
    CHECK(v.layout() == "multi-document");
    CHECK(v.version_contract() == "1.12+");
    REQUIRE(v.config() != nullptr);
    CHECK(v.config()->size() == 1);
    REQUIRE(v.disks() != nullptr);
    CHECK((*v.disks())[0]["name"] == "sda");
    REQUIRE(v.links() != nullptr);
    CHECK((*v.links())[0]["name"] == "eth0");
    CHECK(v.has_etcd());
    REQUIRE(v.etcd_members() != nullptr);
    CHECK((*v.etcd_members())[0][inspection::field::member::k_hostname] == "cp-1");
    CHECK(v.etcd_member_id() == "00000000000000aa");
    CHECK(v.etcd_problem() == "etcd is not running");
    CHECK(v.has_trust());
    CHECK(v.trust_verdict() == "Member");
    CHECK(v.trust_cluster() == "prod");
    CHECK(&v.item() == &item);
}

TEST_CASE("a missing field reads as empty, no list, false", "[inspection][view]") {
    const Value item = Value{{"kind", "Inspection"}};
    const View v(item);
    CHECK_FALSE(v.is_inspection()); // no apiVersion
    for (const std::string& s : {v.name(),
                                 v.address(),
                                 v.node(),
                                 v.mode(),
                                 v.access(),
                                 v.tls_outcome(),
                                 v.tls_fingerprint(),
                                 v.talos_version(),
                                 v.machine_stage(),
                                 v.uuid(),
                                 v.serial(),
                                 v.hostname(),
                                 v.node_id(),
                                 v.cluster_id(),
                                 v.cluster_name(),
                                 v.endpoint(),
                                 v.role(),
                                 v.talos_ca(),
                                 v.install_disk(),
                                 v.install_image(),
                                 v.install_disk_selector(),
                                 v.layout(),
                                 v.version_contract(),
                                 v.etcd_member_id(),
                                 v.etcd_problem(),
                                 v.trust_verdict(),
                                 v.trust_cluster(),
                                 v.talosconfig_path(),
                                 v.talosconfig_ca_fingerprint()}) {
        CHECK(s.empty());
    }
    CHECK_FALSE(v.port());
    CHECK_FALSE(v.install_wipe());
    CHECK(v.macs() == nullptr);
    CHECK(v.config() == nullptr);
    CHECK(v.disks() == nullptr);
    CHECK(v.links() == nullptr);
    CHECK(v.etcd_members() == nullptr);
    CHECK_FALSE(v.has_etcd());
    CHECK_FALSE(v.has_trust());
    CHECK(v.text(inspection::field::k_cluster_name, "(unnamed)") == "(unnamed)");
}

TEST_CASE("a field of another type reads as missing, without throwing", "[inspection][view]") {
    auto parsed = doc::parse_one(R"(
apiVersion: adopt.ichor.maesh.dev/v1alpha1
kind: Inspection
metadata: {name: n1}
spec: {port: "50000"}
status:
  mode: 3
  identity: "not a mapping"
  facts: {install: {wipe: "true"}}
  config: {version: v1alpha1}
  etcd: {}
  trust: null
)",
                                 "item");
    REQUIRE(parsed.ok());
    const View v(*parsed);
    CHECK(v.is_inspection());
    CHECK(v.node() == "n1"); // no address: the name
    CHECK_FALSE(v.port());
    CHECK(v.mode().empty());
    CHECK(v.uuid().empty());
    CHECK(v.macs() == nullptr);
    CHECK_FALSE(v.install_wipe()); // only the boolean true is true
    CHECK(v.config() == nullptr);  // a mapping is not the list of documents
    CHECK(v.has_etcd());           // there, if empty
    CHECK(v.etcd_members() == nullptr);
    CHECK(v.has_trust()); // a null trust is still there
    CHECK(v.trust_verdict().empty());
    CHECK(v.text(inspection::field::k_mode, "none") == "none");
}

TEST_CASE("the view works on any document and on no document", "[inspection][view]") {
    const Value machine = Value{{"apiVersion", std::string(doc::k_ichor_api)},
                                {"kind", "TalosMachine"},
                                {"spec", {{"address", "127.0.0.1"}}}};
    CHECK_FALSE(View(machine).is_inspection());
    CHECK(View(machine).address() == "127.0.0.1");
    const Value nothing;
    CHECK_FALSE(View(nothing).is_inspection());
    CHECK(View(nothing).uuid().empty());
    const Value text = "a string";
    CHECK(View(text).mode().empty());
}
