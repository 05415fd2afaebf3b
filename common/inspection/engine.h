// The inspection engine: reads Talos nodes over the asynchronous client (common/talos) into
// Inspection items (docs/stream.md, fields.h). stages::inspect_nodes and stages::inspect_node
// are the stage over it.
//
// Phases of one node, each started when the one before it is complete:
//   1. Version      one Version call: with mutual TLS, or without a client certificate when the
//                   settings say `insecure` or carry no context.
//   2. Probe        only when mutual TLS failed with UnknownAuthority: Version without a client
//                   certificate. A node in maintenance mode answers it (its reads follow, phase
//                   3 without the configured ones); another cluster's node does not (done).
//   3. Reads        at once: SystemInformation, LinkStatuses, Hostname, MachineStatus,
//                   VolumeStatuses, Disks; with mutual TLS also MachineConfig, ClusterInfo and
//                   Identity.
//   4. MachineType  configured nodes whose configuration could not be read: the role.
//   5. Etcd         configured nodes but workers: EtcdMemberList and EtcdStatus at once.
//   6. Done         the calls' timings recorded, the item and its results handed on.
// A phase's replies are looked at once the last of them has arrived, in a fixed order (the order
// a one-call-at-a-time reading would make them in), so the output never depends on timing.
//
// Bounds: every call is bounded by Settings::call_timeout_ms; a node makes at most 13 calls in at
// most 4 rounds (1, 3, 4, 5; or 1, 2, 3), so it is done within four call timeouts. At most
// Settings::concurrency nodes (at least 1) are read at a time.
//
// Errors: reading never fails as a whole. A node that cannot be read is still an item (status.mode
// unreachable, or configured with tls.outcome unknownAuthority) with an error result. Results are
// KRM results (severity, message, resourceRef to the item, tags ichor.maesh.dev/code and
// ichor.maesh.dev/node): errors (Unreachable, Timeout, Unavailable, UnknownAuthority,
// FingerprintMismatch, ...), warnings (a read that failed, PermissionDenied on the configuration,
// MalformedConfig, EtcdProblem) and info (Maintenance). A node that stops answering (Timeout,
// Unreachable, Unavailable) is reported once, at its first call in the fixed order; its later
// replies are not looked at and no later phase starts.
//
// Through an endpoint (Settings::endpoint): the phases are the same but for the Probe, which
// needs a direct dial: a forwarded Version that fails with the node's certificate not signed by
// the endpoint's CA is UnknownAuthority at once (another cluster's node, or one in maintenance,
// read directly with --insecure). A failure of the hop to the endpoint itself (its TLS
// handshake, or a worker's PermissionDenied "no request forwarding") is EndpointRefused, naming
// the endpoint and the node, and the node is unreachable.
//
// Threading: read_nodes blocks until every node is read. It runs one talos::Loop per core, up to
// four and at most one per node, each on its own thread, the calling thread running one; a node
// stays on one loop. It shares nothing mutable between calls.
#pragma once

#include "common/doc/value.h"
#include "common/talos/address.h"
#include "common/talos/talosconfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ichor::inspection {

struct Settings {
    // The credential for configured nodes; absent with `insecure` alone.
    std::optional<talos::TalosContext> context;
    std::string talosconfig_path; // recorded in spec.talosconfig (never the content)
    bool insecure = false;        // read maintenance-mode nodes without a client certificate
    std::vector<std::string> fingerprints; // pins for insecure reads (canonical form)
    std::int64_t call_timeout_ms = 20000;
    int concurrency = 16;
    // When set, every node is reached through this endpoint (mutual TLS only: maintenance mode
    // does not forward): one channel for all nodes, the node's host in each call's `node`
    // metadata. Ignored with `insecure` or without a context (those dial directly).
    std::optional<talos::Address> endpoint;
};

// One node's reading: its Inspection item and the results that name it.
struct NodeReport {
    doc::Value item;
    doc::Value results = doc::Value::array();
};

// Reads every address; one report per address, in the order given. No address, no report.
std::vector<NodeReport> read_nodes(const std::vector<talos::Address>& addresses,
                                   const Settings& settings);

} // namespace ichor::inspection
