// Stage: check trust. Adds status.trust to every Inspection of the list and a result for each
// node that is not a member of the cluster's PKI (ADR 0128 decision 1 step 2, amendment 2).
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/stages/stage.h"

#include <string>

namespace ichor::stages {

struct TrustOptions {
    const bundle::Bundle* bundle = nullptr; // the cluster's secrets bundle (required)
    std::string cluster;                    // the TalosCluster's name
    std::string ns;                         // its namespace
};

// Verdicts: Member (the node's configuration, or its verified TLS identity and Infos, names this
// cluster's ID and the bundle's Talos API CA), OtherCluster, UnknownAuthority, Maintenance,
// Unreachable, Unknown. Every verdict but Member adds an error result (code = the verdict) whose
// message names the node and whose hint is the command that applies. Items of other kinds pass
// through untouched; a run over a list already checked replaces status.trust and its results.
// Outcome: stopped = the nodes refused (trust writes nothing, so done stays 0 and a refusal is a
// finding: exit 1).
Outcome check_trust(doc::ResourceList& list, const TrustOptions& options);

// The sentence used wherever a node of another cluster is refused (trustcheck, drift, adopt).
std::string other_cluster_hint(const std::string& address, const std::string& talosconfig,
                               const std::string& cluster);

} // namespace ichor::stages
