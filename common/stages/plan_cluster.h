// Stage: plan of a whole running cluster that Ichor did not make (kubectl ichor adopt without
// --add-machine; ADR 0128 "What is covered today", first rows; ADR 0103 section 1). From the
// trust-checked Inspections of every node and what the caller read of the cluster's Kubernetes
// API, the objects the adoption creates: the bundle Secret (without its data), the TalosCluster
// built from the live cluster, the class A drift in layers (cluster, role, machine
// TalosConfigPatches) and a held TalosMachine per node. Every refusal of the whole cluster is a
// result here, before anything is written. docs/stream.md, "Plan of a cluster", is the format.
// Pure: the caller reads the cluster and writes nothing.
#pragma once

#include "common/bundle/bundle.h"
#include "common/cni/decide.h"
#include "common/cni/detect.h"
#include "common/cni/preflight.h"
#include "common/doc/resource_list.h"
#include "common/stages/stage.h"

#include <optional>
#include <string>
#include <vector>

namespace ichor::stages {

// A member of Talos discovery as a node lists it (the Members resources of namespace cluster).
struct DiscoveryMember {
    std::string hostname;
    std::vector<std::string> addresses;
};

// Talos's discovery service keeps at most this many affiliates per cluster, and this many
// endpoints per affiliate (siderolabs/discovery-service, pkg/limits).
inline constexpr int k_discovery_member_cap = 1024;
inline constexpr int k_discovery_endpoint_cap = 64;

// True when a member list is at discovery's cap (1,024 members, or a member with 64 endpoints):
// it may be partial, and the plan compares the nodes with the Kubernetes Node list instead.
bool members_capped(const std::vector<DiscoveryMember>& members);

// The CNI of the cluster as adoption decided it (common/cni, docs/cni.md): what detection found,
// decide's plan or refusal, and a takeover's preflight. decide_cni makes it from what the caller
// listed; plan_cluster writes it into the TalosCluster and the plan's results.
struct ClusterCni {
    std::string preset;  // spec.cni.preset: cilium or unmanaged; empty: not decided (refused)
    std::string action;  // takeover, install or unmanaged (cni::action_name)
    std::string summary; // detection's one line ("cilium, installed by helm (...)", "flannel")
    std::vector<std::string> evidence; // "OBJECT FIELD=VALUE", each trace detection used
    // spec.cni.cilium.values (the operator's values without Ichor-owned keys); null: none.
    doc::Value values;
    std::string values_source;      // cni::source_name
    std::vector<std::string> notes; // decide's notes: the agents restart, a manifest goes
    // A takeover of a Cilium from Talos inline manifests: spec.cni.cilium.inlineManifests.
    std::vector<std::string> inline_manifests;
    // decide's (or detection's) refusal: the message word for word, its code and hint.
    std::string refusal;
    std::string refusal_code;
    std::string refusal_hint;
    // No CNI: Nodes NotReady for the network (NetworkPluginNotReady) pass the health gate.
    bool no_cni = false;
    // A takeover's preflight: the live Cilium against the render with the values. Its
    // differences refuse the adoption before any write unless accept_diff (--accept-cilium-diff),
    // and are then part of what the user consents to.
    std::optional<cni::Preflight> preflight;
    bool accept_diff = false;
};

// Detects the CNI from the cluster's objects and the control planes' configurations, decides with
// the flags, and runs a takeover's preflight. Pure. Every refusal is in the result (refusal),
// never an error: the plan reports it with the others before anything is written.
ClusterCni decide_cni(const cni::ClusterObjects& objects,
                      const std::vector<cni::ControlPlane>& planes, const cni::CniFlags& flags,
                      bool accept_diff);

// True when the Node is NotReady only because the network is not (Ready=False with
// NetworkPluginNotReady in its message), as a cluster without a CNI leaves every Node.
bool network_not_ready(const doc::Value& node);

struct ClusterPlanOptions {
    std::string cluster; // the TalosCluster to create; empty: the nodes' cluster.clusterName
    std::string ns;      // its namespace
    const bundle::Bundle* bundle = nullptr; // required: file or recovered
    std::string bundle_source;              // how the bundle was had, for the plan's words
    // The CNI (decide_cni). An empty preset without a refusal is refused as not decided.
    ClusterCni cni;
    // The cluster's Kubernetes API: its Node objects (whole, or only what plan_node_fields keeps),
    // and whether the Ichor API is served (its CRDs), with what is missing when it is not.
    std::vector<doc::Value> kube_nodes;
    bool ichor_api_served = false;
    std::string ichor_api_missing;
    // What already exists in the namespace: a TalosCluster of that name (null when none), the
    // TalosMachines and TalosConfigPatches. A TalosCluster this plan wrote (its plan digest) is a
    // rerun; any other is refused.
    const doc::Value* existing_cluster = nullptr;
    std::vector<doc::Value> machines;
    std::vector<doc::Value> patches;
    // Talos discovery's members as the first control plane lists them; nullopt when discovery is
    // off or was not read.
    std::optional<std::vector<DiscoveryMember>> members;
};

// The fields of a Kubernetes Node that plan_cluster reads (metadata.name, status.addresses,
// status.conditions, status.nodeInfo), the rest left out: a real Node carries its images and
// managed fields, tens of kB each, for nothing the plan looks at.
doc::Value plan_node_fields(const doc::Value& node);

// The stage (stage.h). Appends to `list.items` the Secret (metadata only: its data is the bundle
// and is written by hold apply from the bundle in memory, never into the plan), the TalosCluster,
// the TalosConfigPatches (one per layer that has class A drift) and the held TalosMachines,
// control planes first. Results: every refusal of the whole cluster (error, before any write),
// each machine's drift as stages::plan gives it, the layering, and a closing summary. A blocked
// control plane refuses the whole cluster; a blocked worker stays out and the others go on.
// Outcome: done = machines planned, stopped = machines blocked or refused (every node when the
// whole cluster is refused), skipped = machines an earlier run of this plan already created.
Outcome plan_cluster(doc::ResourceList& list, const ClusterPlanOptions& options);

// The name of the bundle Secret for the TalosCluster `cluster`.
std::string bundle_secret_name(const std::string& cluster);

} // namespace ichor::stages
