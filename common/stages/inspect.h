// Stage: inspect the nodes. One Inspection item per address (docs/stream.md), read in parallel,
// every call bounded; a failure on one node is a result naming it, the others go on.
#pragma once

#include "common/doc/resource_list.h"
#include "common/stages/stage.h"
#include "common/talos/address.h"
#include "common/talos/talosconfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ichor::stages {

struct InspectOptions {
    std::vector<talos::Address> addresses;
    // The credential for configured nodes; absent with `insecure` alone.
    std::optional<talos::TalosContext> context;
    std::string talosconfig_path; // recorded in spec.talosconfig (never the content)
    bool insecure = false;        // read maintenance-mode nodes without a client certificate
    std::vector<std::string> fingerprints; // pins for insecure reads (canonical form)
    std::int64_t call_timeout_ms = 20000;
    int concurrency = 16;
    // When set, every address is reached through this endpoint (inspection::Settings::endpoint).
    std::optional<talos::Address> endpoint;
};

struct InspectOutcome {
    doc::ResourceList list;
    int nodes = 0;
    int failed = 0;      // nodes that could not be read at all
    int unreachable = 0; // of those, the ones that did not answer (Unreachable, Timeout)
};

// Reads every node. Results: per-node errors (Unreachable, Timeout, UnknownAuthority,
// FingerprintMismatch, ...), warnings (PermissionDenied on the configuration, EtcdProblem), and
// info (Maintenance).
InspectOutcome inspect_nodes(const InspectOptions& options);

// The stage (stage.h): reads every address of `options` and appends one Inspection per address, in
// their order, replacing an Inspection of the same address that is already in the list. Outcome:
// done = nodes read, stopped = nodes that could not be read at all (an error result names each),
// unreachable = of those, the ones that did not answer.
Outcome inspect(doc::ResourceList& list, const InspectOptions& options);

// Reads one node (used again by hold release for the live zero-drift check). Appends the node's
// results to `results`.
doc::Value inspect_node(const talos::Address& address, const InspectOptions& options,
                        doc::Value& results);

} // namespace ichor::stages
