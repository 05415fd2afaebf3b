// Stage: discovery add (ADR 0128 decision 2, third point: the discovery hint). Adds an address to
// the TalosCluster's spec.discovery.addresses, then probes it with the inspect code and says what
// becomes of the machine there: one in maintenance mode is discovery's (a pending TalosMachine at
// its next pass); one that already runs a configuration is not enrolled by discovery, and the
// result names both commands and when each applies (kubectl ichor adopt --add-machine for this
// cluster's PKI, kubectl ichor reclaim for another cluster's), and which one applies when the
// trust check can tell.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/stages/hold.h"
#include "common/stages/objects.h"
#include "common/stages/stage.h"
#include "common/talos/address.h"

#include <optional>
#include <string>

namespace ichor::stages {

struct DiscoveryAddOptions {
    IchorObjects* objects = nullptr; // required: the TalosCluster is read and patched through it
    std::string cluster;             // the TalosCluster's name
    talos::Address address;          // checked by talos::parse_address before the stage runs
    ReadNode probe;                  // required: the Inspection of the address (inspect_node)
    // The cluster's bundle, for the trust check of a configured node; null when it could not be
    // read (the result then names both commands without choosing).
    const bundle::Bundle* bundle = nullptr;
    std::string talosconfig = "FILE"; // as the commands of the results name it
};

// The stage (stage.h). `list` becomes the TalosCluster as it is after the write and the
// Inspection of the address. The address is added with a JSON merge patch that carries the
// object's resourceVersion (a concurrent change is a Conflict error, nothing lost); an address
// already listed (the same host and port, however written) is not written again (a rerun
// converges). Results, each tagged with the node: Added or AlreadyListed (info); then one of
// Maintenance (info), Unreachable (warning), ThisCluster or OtherCluster (warning, the command
// that applies, and the other one) or Configured (warning, both commands, when the trust check
// could not run). Outcome: done = 1 when the address is listed afterwards; a missing TalosCluster
// or a failed write is the outcome's error, and then the node is not probed.
Outcome discovery_add(doc::ResourceList& list, const DiscoveryAddOptions& options);

// The address as spec.discovery.addresses records it: the host, with ":PORT" only when the port
// is not 50000 (IPv6 in brackets then).
std::string discovery_entry(const talos::Address& address);

} // namespace ichor::stages
