// The fields of the Inspection format (docs/stream.md), in one place: every dotted path from the
// item's root, the keys of the records inside its lists, and the values that readers compare.
// The engine writes through these and inspection::View reads through them, so a renamed field is
// one edit here, and a name that goes away is a compile error wherever it was used.
// tests/unit/test_inspection_fields.cpp keeps docs/stream.md in step with this file.
#pragma once

#include "common/doc/value.h"
#include "common/doc/vocabulary.h"
#include "common/machineconfig/machineconfig.h"
#include "common/talos/errors.h"

#include <span>
#include <string_view>

namespace ichor::inspection {

// A field of an Inspection item: its path from the item's root, keys joined by dots. A distinct
// type, so that put() and find() take only the fields below, never a string made up on the spot.
struct Path {
    std::string_view dotted;
};

namespace field {
inline constexpr std::string_view k_inspection = "Inspection"; // kind, of apiVersion k_adopt_api

inline constexpr Path k_api_version{"apiVersion"};
inline constexpr Path k_kind{"kind"};
inline constexpr Path k_name{"metadata.name"}; // the address as given (host or host:port)

inline constexpr Path k_address{"spec.address"};
inline constexpr Path k_port{"spec.port"};
// Through an endpoint: the endpoint as given (host or host:port); absent when dialled directly.
inline constexpr Path k_via_endpoint{"spec.endpoint"};
inline constexpr Path k_talosconfig_path{"spec.talosconfig.path"};
inline constexpr Path k_talosconfig_context{"spec.talosconfig.context"};
inline constexpr Path k_talosconfig_ca_fingerprint{"spec.talosconfig.caFingerprint"};

inline constexpr Path k_status{"status"};
inline constexpr Path k_mode{"status.mode"};
inline constexpr Path k_access{"status.access"};
inline constexpr Path k_tls_outcome{"status.tls.outcome"};
inline constexpr Path k_tls_fingerprint{"status.tls.fingerprint"};
inline constexpr Path k_talos_version{"status.talosVersion"};

inline constexpr Path k_identity{"status.identity"};
inline constexpr Path k_uuid{"status.identity.uuid"};
inline constexpr Path k_serial{"status.identity.serial"};
inline constexpr Path k_macs{"status.identity.macs"};
inline constexpr Path k_hostname{"status.identity.hostname"};
inline constexpr Path k_node_id{"status.identity.nodeID"};

inline constexpr Path k_machine_stage{"status.machineStatus.stage"};
inline constexpr Path k_machine_ready{"status.machineStatus.ready"};

inline constexpr Path k_facts{"status.facts"};
inline constexpr Path k_cluster_id{"status.facts.clusterID"};
inline constexpr Path k_cluster_name{"status.facts.clusterName"};
inline constexpr Path k_endpoint{"status.facts.endpoint"};
inline constexpr Path k_role{"status.facts.role"};
inline constexpr Path k_talos_ca{"status.facts.talosCA"};
inline constexpr Path k_accepted_cas{"status.facts.acceptedCAs"}; // only when there are some
inline constexpr Path k_install_disk{"status.facts.install.disk"};
inline constexpr Path k_install_image{"status.facts.install.image"};
inline constexpr Path k_install_wipe{"status.facts.install.wipe"};
inline constexpr Path k_install_disk_selector{"status.facts.install.diskSelector"}; // v1.14
inline constexpr Path k_layout{"status.facts.layout"};
inline constexpr Path k_documents{"status.facts.documents"};
inline constexpr Path k_version_contract{"status.facts.versionContract"};

inline constexpr Path k_config{"status.config"}; // the documents, secrets digested
// "sha256:<hex>" of the configuration's bytes exactly as the node returned them: what hold apply
// compares a fresh read with, so that a saved plan is applied only to the node it was made from.
inline constexpr Path k_config_digest{"status.configDigest"};
// The persistent configuration (MachineConfig `persistent`), secrets digested, only when its bytes
// differ from the running one's: an apply in STAGED mode not yet rebooted into, or a TRY window
// still open. The plan compares the two semantically (plan.cpp, StagedConfig).
inline constexpr Path k_persistent_config{"status.persistentConfig"};

inline constexpr Path k_etcd{"status.etcd"};
inline constexpr Path k_etcd_members{"status.etcd.members"}; // records keyed by member::
inline constexpr Path k_etcd_member_id{"status.etcd.status.memberID"};
inline constexpr Path k_etcd_leader{"status.etcd.status.leader"};
inline constexpr Path k_etcd_db_size{"status.etcd.status.dbSize"};
inline constexpr Path k_etcd_raft_index{"status.etcd.status.raftIndex"};
inline constexpr Path k_etcd_problem{"status.etcd.problem"};

inline constexpr Path k_volumes{"status.volumes"}; // records keyed by volume::
inline constexpr Path k_disks{"status.disks"};     // records keyed by disk::
inline constexpr Path k_links{"status.links"};     // records keyed by link::
// Every link the node reports (LinkStatuses: physical, virtual, loopback), by name.
inline constexpr Path k_link_names{"status.linkNames"};
inline constexpr Path k_timings{"status.timings"}; // records keyed by timing::

// Added by trustcheck (stages::check_trust).
inline constexpr Path k_trust{"status.trust"};
inline constexpr Path k_trust_verdict{"status.trust.verdict"};
inline constexpr Path k_trust_cluster{"status.trust.cluster"};
inline constexpr Path k_trust_cluster_id{"status.trust.clusterID"};
inline constexpr Path k_trust_talos_ca{"status.trust.talosCA"};

// The keys of the records in the lists above.
namespace member {
inline constexpr const char* k_id = "id"; // 16 hex digits, as memberID
inline constexpr const char* k_hostname = "hostname";
inline constexpr const char* k_peer_urls = "peerURLs";
inline constexpr const char* k_client_urls = "clientURLs";
inline constexpr const char* k_learner = "learner";
} // namespace member
namespace volume {
inline constexpr const char* k_id = "id";
inline constexpr const char* k_phase = "phase";
inline constexpr const char* k_location = "location";
} // namespace volume
namespace disk {
inline constexpr const char* k_name = "name";
inline constexpr const char* k_dev_path = "devPath";
inline constexpr const char* k_size = "size";
inline constexpr const char* k_model = "model";
inline constexpr const char* k_serial = "serial";
inline constexpr const char* k_wwid = "wwid";
inline constexpr const char* k_modalias = "modalias";
inline constexpr const char* k_uuid = "uuid";
inline constexpr const char* k_bus_path = "busPath";
inline constexpr const char* k_transport = "transport";
inline constexpr const char* k_rotational = "rotational";
inline constexpr const char* k_cdrom = "cdrom";
inline constexpr const char* k_readonly = "readonly";
} // namespace disk
namespace link {
inline constexpr const char* k_name = "name";
inline constexpr const char* k_permanent_addr = "permanentAddr";
inline constexpr const char* k_hardware_addr = "hardwareAddr";
} // namespace link
namespace timing {
inline constexpr const char* k_call = "call";
inline constexpr const char* k_ms = "ms";
inline constexpr const char* k_ok = "ok";
} // namespace timing

// The values of status.mode, status.tls.outcome and status.trust.verdict that readers act on.
namespace mode {
inline constexpr std::string_view k_configured = "configured";
inline constexpr std::string_view k_maintenance = "maintenance";
inline constexpr std::string_view k_unreachable = "unreachable";
} // namespace mode
namespace tls {
inline constexpr std::string_view k_verified = "verified";
inline constexpr std::string_view k_unknown_authority = "unknownAuthority";
inline constexpr std::string_view k_insecure = "insecure";
inline constexpr std::string_view k_pinned = "pinned";
inline constexpr std::string_view k_failed = "failed";
} // namespace tls
// status.trust.verdict; each but Member is also the code of the trust check's result.
namespace verdict {
inline constexpr std::string_view k_member = "Member";
inline constexpr std::string_view k_other_cluster = vocab::code::k_other_cluster;
inline constexpr std::string_view k_unknown_authority = talos::code::k_unknown_authority;
inline constexpr std::string_view k_maintenance = vocab::code::k_maintenance;
inline constexpr std::string_view k_unreachable = vocab::code::k_unreachable;
inline constexpr std::string_view k_unknown = "Unknown"; // the cluster ID could not be read
} // namespace verdict
} // namespace field

// Every path above, in the order of docs/stream.md; for the test that holds the two together.
std::span<const Path> all_paths();

// The value at `path`, or nullptr when a key on the way is missing or not an object.
const doc::Value* find(const doc::Value& item, Path path);

// The value at `path`, made (with the objects on the way) when missing; a new key goes after the
// keys its object already has, which is what makes the writer's order the output's order.
doc::Value& put(doc::Value& item, Path path);

// Writes the facts read from a configuration (and Infos) at status.facts: the one place the
// facts' layout is made, for the engine and for tests that build an Inspection by hand.
void put_facts(doc::Value& item, const machineconfig::Facts& facts);

} // namespace ichor::inspection
