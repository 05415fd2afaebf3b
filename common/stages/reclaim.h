// Stage: reclaim. Reset a machine that another cluster configured and register it as a pending
// TalosMachine (ADR 0128 decision 2, amendments 1, 5, "discovery refreshes pending machines" and
// 2026-11-07; docs/reclaim.md has the refusal texts):
//   inspect (every call bounded) -> assess -> typed confirmation -> Reset STATE and EPHEMERAL with
//   reboot -> wait for maintenance mode -> create the pending TalosMachine, or leave an existing
//   pending one to discovery, which re-records its fingerprint and inventory (the CLI writes no
//   status and no Event for that: amendment "discovery refreshes pending machines").
// Every refusal comes before the reset, the one write to the node. The stage deletes nothing.
//
// The network is behind two interfaces (ReclaimNode, ReclaimRegistry) so that the flow can be
// tested with fakes; make_node and make_registry give the real ones.
#pragma once

#include "common/doc/resource_list.h"
#include "common/doc/vocabulary.h"
#include "common/kube/client.h"
#include "common/stages/reporter.h"
#include "common/stages/stage.h"
#include "common/talos/address.h"
#include "common/talos/client.h"
#include "common/talos/talosconfig.h"
#include "common/util/clock.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages {

using vocab::k_label_cluster;

// A TalosCluster of the namespace and the cluster ID of its bundle ("" when unreadable).
struct ManagedCluster {
    std::string name;
    std::string cluster_id;
    std::vector<std::string> discovery; // its spec.discovery.addresses
};

// What Ichor records in the namespace.
struct Known {
    doc::Value machines = doc::Value::array(); // every TalosMachine of the namespace
    std::vector<ManagedCluster> clusters;      // every TalosCluster of the namespace
};

// Why a UUID cannot name one machine, or "" when it can: empty, not a UUID, one digit repeated
// (all zero, all F), a well-known firmware placeholder, or the UUID of a TalosMachine of the
// namespace with another serial number. Such a machine is confirmed with its serial number as well,
// and matched to TalosMachines by UUID and serial together.
std::string uuid_weakness(const std::string& uuid, const std::string& serial,
                          const doc::Value& machines);
bool weak_uuid(const std::string& uuid, const std::string& serial, const doc::Value& machines);

struct AssessOptions {
    std::string address;     // as the user wrote it
    std::string talosconfig; // the path, for hints
    std::string cluster;     // --cluster
    bool force_ungraceful = false;
};

// A warning: its tag code (ichor.maesh.dev/code) and its sentence.
struct Finding {
    std::string code;
    std::string message;
};

struct Assessment {
    bool graceful = true;
    bool weak_uuid = false;
    std::vector<Finding> warnings; // codes ManagedCluster, Ungraceful, ForceUngracefulUnused
};

// Whether each other etcd member answered EtcdStatus, by member ID (hex as in the Inspection).
using PeerHealth = std::vector<std::pair<std::string, bool>>;

// Decides on a configured node's Inspection. Refusals are errors (kind Findings, or Config for a
// node this talosconfig cannot reset), codes: Unreachable, Maintenance, UnknownAuthority,
// NotAdmin, IchorMachine, EtcdProblem, LastControlPlane, QuorumBreak. A node of a cluster Ichor
// manages with no approved machine is a warning (amendment 2026-11-07). `peers` is only read
// when the node's etcd answered.
Result<Assessment> assess(const doc::Value& inspection, const Known& known, const PeerHealth& peers,
                          const AssessOptions& options);

// The etcd members other than the node itself, by ID and host (from their peer URLs).
struct EtcdPeer {
    std::string id;
    std::string host;
};
std::vector<EtcdPeer> etcd_peers(const doc::Value& inspection);

// The TalosMachine that stands for the machine: approved or rejected machines are never written,
// and neither is a pending one: with the recorded identity and another fingerprint it is left to
// discovery (Discovery), which re-records it at its next pass.
struct Registration {
    enum class Action { Create, Discovery, Unchanged, Left };
    Action action = Action::Create;
    std::string name;
    doc::Value machine; // Create: the object to create (without status); else the one found
    // Create: the status {maintenanceFingerprint, discoveredDisks, discoveredLinks}
    doc::Value status;
    std::string old_fingerprint;   // Discovery
    std::string why;               // Unchanged and Left: the sentence for the user
    std::vector<Finding> warnings; // code SameUUIDElsewhere
};

struct RegisterOptions {
    std::string cluster;
    std::string ns;
    std::string address;
};

// Plans the registration from the namespace's machines and the node's maintenance Inspection.
Registration plan_registration(const doc::Value& machines, const doc::Value& maintenance,
                               const RegisterOptions& options);

// The node, as the reclaim flow talks to it.
class ReclaimNode {
  public:
    virtual ~ReclaimNode() = default;
    // Reads the node with the talosconfig (stages::inspect_node); appends its results.
    virtual doc::Value inspect(doc::Value& results) = 0;
    // Whether the etcd member on `host` answers EtcdStatus, asked through the node.
    virtual bool member_answers(const std::string& host) = 0;
    virtual Result<std::string> reset(const talos::ResetOptions& options) = 0;
    // Reads the node without a client certificate, each call bounded by `timeout_ms`. An
    // Inspection whose status.mode is "maintenance", or an error (the node is still configured,
    // rebooting, or silent).
    virtual Result<doc::Value> probe_maintenance(std::int64_t timeout_ms) = 0;
};

// The Ichor objects, as the reclaim flow reads and writes them.
class ReclaimRegistry {
  public:
    virtual ~ReclaimRegistry() = default;
    virtual Result<Known> known(const std::function<void(std::string_view)>& warn) = 0;
    virtual Result<doc::Value> machines() = 0; // the TalosMachines of the namespace, read again
    virtual Result<doc::Value> create_machine(const doc::Value& machine) = 0;
    // The status of a machine this run created (never of one that existed before).
    virtual Result<doc::Value> patch_machine_status(const std::string& name,
                                                    const doc::Value& status) = 0;
};

struct NodeDial {
    talos::Address address;
    talos::TalosContext context;
    std::string talosconfig_path;
    std::int64_t call_timeout_ms = talos::k_default_call_timeout_ms;
};
std::unique_ptr<ReclaimNode> make_node(const NodeDial& dial);
// The registry over `kube` in namespace `ns` (the client must outlive it).
std::unique_ptr<ReclaimRegistry> make_registry(kube::Client& kube, std::string ns);

// How the flow speaks to the person running it: `report` (reporter.h; null: silent) and `ask`,
// which puts a question on the terminal and returns the typed line; it is empty (or returns
// nullopt) when there is no terminal. `clock` gives the deadlines and the pauses between two
// polls (null: the system clock).
struct ReclaimUi {
    Reporter* report = nullptr;
    std::function<std::optional<std::string>(std::string_view question)> ask;
    util::Clock* clock = nullptr;
};

struct ReclaimOptions {
    talos::Address address;
    std::string talosconfig_path;
    std::string context_name;
    std::string cluster;
    std::string ns;
    bool force_ungraceful = false;
    std::string confirm_uuid;   // --confirm-uuid; empty: ask on the terminal
    std::string confirm_serial; // --confirm-serial; asked for only when the UUID is weak
    std::int64_t call_timeout_ms = talos::k_default_call_timeout_ms;
    std::int64_t wait_timeout_ms = 15 * 60 * 1000;
    std::int64_t poll_interval_ms = 1000;
    ReclaimNode* node = nullptr;         // required: make_node, or a fake
    ReclaimRegistry* registry = nullptr; // required: make_registry, or a fake
    ReclaimUi ui;
};

// The stage (stage.h): the whole flow. `list` becomes the TalosMachine as registered and the
// findings; on the way it gets an info result `Reset` when the node accepted the reset,
// `Maintenance` (tag ichor.maesh.dev/fingerprint: the node's new maintenance certificate
// fingerprint) when it came back in maintenance mode, and one of `Registered`, `LeftToDiscovery`
// (a pending machine of the identity records another fingerprint: discovery re-records it; a
// warning `NotInDiscovery` when the address is not in the cluster's spec.discovery.addresses),
// `Unchanged` for the registration. A refusal (nothing done) or a failure after the reset is the
// outcome's error, and also an error result. Outcome: done = 1 when the machine was registered (or
// found up to date).
Outcome reclaim(doc::ResourceList& list, const ReclaimOptions& options);

// The tag of the Maintenance result.
inline constexpr std::string_view k_tag_fingerprint = vocab::k_tag_fingerprint;

// The inspection block printed before the confirmation: cluster, role, hostname, address, UUID,
// serial, Talos version, and an etcd row for a control plane.
std::string inspection_block(const doc::Value& inspection);

} // namespace ichor::stages
