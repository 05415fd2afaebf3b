// Inside the engine: one node's replies, and the functions that turn them into the sections of
// its Inspection (through fields.h) and its results. Pure: no call is made here, so each section
// can be tested from replies made by hand.
#pragma once

#include "common/doc/resource_list.h"
#include "common/inspection/engine.h"
#include "common/machineconfig/machineconfig.h"
#include "common/talos/client.h"

#include <optional>
#include <string>
#include <vector>

namespace ichor::inspection {

// What is the same for every node of a run, worked out once.
struct RunContext {
    const Settings& settings;
    std::string ca_fingerprint; // of the context's CA
    std::string access;         // the client certificate's organizations, "none" without one

    explicit RunContext(const Settings& s);
};

// What one node's reading produces: the item and the node's results.
struct NodeReading {
    const talos::Address& address;
    doc::Value item;
    doc::Value results = doc::Value::array();
    bool gone = false; // the node stopped answering: later replies are not looked at

    // A result naming the node and pointing at the item.
    void add(doc::Severity severity, const std::string& message, std::string_view code);
};

// The item before any reply: apiVersion, kind, name, spec (address, port, the talosconfig it was
// read with) and an empty status.
doc::Value skeleton(const talos::Address& address, const RunContext& run);

// A reply, or nothing when the call was not made.
template <class T> using Reply = std::optional<Result<T>>;

// One node's replies, in the order they are looked at.
struct Replies {
    Reply<talos::Resource> system_information;
    Reply<std::vector<talos::Resource>> links;
    Reply<std::string> hostname;
    Reply<talos::Resource> machine_status;
    Reply<talos::Resource> machine_config;
    Reply<talos::Resource> persistent_config;
    Reply<talos::Resource> cluster_info;
    Reply<talos::Resource> machine_type;
    Reply<std::vector<talos::Resource>> volumes;
    Reply<std::vector<talos::Resource>> disks;
    Reply<std::vector<machine::EtcdMember>> etcd_members;
    Reply<machine::EtcdMemberStatus> etcd_status;
    Reply<talos::Resource> identity;
};

// Whether an error means the node stopped answering (Timeout, Unreachable, Unavailable).
bool is_gone(const Error& e);

// Takes one reply as a sequential reading would have: nothing once the node is gone or when the
// call was not made; on failure a result of `severity` (none for Info) and, when the node
// stopped answering, an error result instead and the node marked gone.
template <class T>
std::optional<T> take(NodeReading& r, Reply<T>& reply,
                      doc::Severity severity = doc::Severity::Warning) {
    if (r.gone || !reply) {
        return std::nullopt;
    }
    if (reply->ok()) {
        return std::move(*reply).value();
    }
    const Error& e = reply->error();
    if (is_gone(e)) {
        r.gone = true;
        r.add(doc::Severity::Error, e.message, e.code);
    } else if (severity != doc::Severity::Info) {
        r.add(severity, e.message, e.code);
    }
    return std::nullopt;
}

// The sections, each from its replies (a missing or failed reply leaves what it would fill
// empty, or out where the format says so).
// status.identity (uuid, serial, macs, hostname) and status.links: the physical links only.
void put_identity(NodeReading& r, Replies& replies);
// status.machineStatus.
void put_machine_status(NodeReading& r, Replies& replies);
// status.config and the facts it holds, then ClusterInfo's cluster ID and name where the
// configuration named none. Returns whether the configuration was read; PermissionDenied is a
// warning that says what a reader can see, MalformedConfig a warning with the parser's message.
bool put_config(NodeReading& r, Replies& replies, machineconfig::Facts& facts);
// The role from MachineType, when it was read; then status.facts.
void put_role_and_facts(NodeReading& r, Replies& replies, machineconfig::Facts& facts);
// status.volumes (STATE and EPHEMERAL) and status.disks.
void put_storage(NodeReading& r, Replies& replies);
// status.etcd, when etcd was asked: its members and this member's status, or the problem (a
// warning EtcdProblem, never a failure).
void put_etcd(NodeReading& r, Replies& replies);
// status.identity.nodeID.
void put_node_id(NodeReading& r, Replies& replies);
// status.timings: every call of `clients`, in the order they started.
void put_timings(NodeReading& r, const std::vector<const talos::NodeClient*>& clients);

} // namespace ichor::inspection
