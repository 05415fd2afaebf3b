// Ichor's names: the API groups, annotations, labels, result tags and conditions that the suite
// shares with the Ichor operator and with its own later runs (ADR 0128, ARCHITECTURE.md). Each is
// spelled here once; a misspelt name elsewhere would be a silent miss, never a compile error.
#pragma once

#include <string>
#include <string_view>

namespace ichor::vocab {

// API groups. Ichor's custom resources (TalosCluster, TalosMachine, TalosConfigPatch) and the
// suite's own items in the stream (Inspection, ...), which no API server stores.
inline constexpr std::string_view k_ichor_group = "ichor.maesh.dev";
inline constexpr std::string_view k_ichor_version = "v1alpha1";
inline constexpr std::string_view k_ichor_api = "ichor.maesh.dev/v1alpha1";
inline constexpr std::string_view k_adopt_api = "adopt.ichor.maesh.dev/v1alpha1";

// Annotations on TalosMachines and TalosConfigPatches.
// The operator applies nothing to a machine while it has this one (hold apply sets, release
// removes it).
inline constexpr std::string_view k_annotation_hold_apply = "ichor.maesh.dev/hold-apply";
// Ichor's webhook refuses to delete an object without it (hold abort sets it first).
inline constexpr std::string_view k_annotation_allow_delete = "ichor.maesh.dev/allow-delete";
// A user's approval of a pending machine's maintenance certificate.
inline constexpr std::string_view k_annotation_trust_maintenance_fingerprint =
    "ichor.maesh.dev/trust-maintenance-fingerprint";
// The suite's own, written by hold apply: the plan's digest, when, and the class B changes
// consented to.
inline constexpr std::string_view k_annotation_plan_digest = "ichor.maesh.dev/plan-digest";
inline constexpr std::string_view k_annotation_applied_at = "ichor.maesh.dev/applied-at";
inline constexpr std::string_view k_annotation_consented_drift = "ichor.maesh.dev/consented-drift";
// On the bundle Secret a whole-cluster plan carries (without its data): where the bundle came
// from ("recovered from ADDRESS", "from FILE").
inline constexpr std::string_view k_annotation_bundle_source = "ichor.maesh.dev/bundle-source";
// A planned credentials Secret (common/stages/credentials.h): the digest of each key's value, as
// JSON, and the nodes whose configuration holds the values (comma-separated addresses).
inline constexpr std::string_view k_annotation_credential_digests =
    "ichor.maesh.dev/credential-digests";
inline constexpr std::string_view k_annotation_credential_nodes =
    "ichor.maesh.dev/credential-nodes";

// The label that ties an object to its TalosCluster (value: the cluster's name).
inline constexpr std::string_view k_label_cluster = "ichor.maesh.dev/cluster";

// The label selector of a cluster's objects: "ichor.maesh.dev/cluster=NAME".
inline std::string cluster_selector(std::string_view cluster) {
    return std::string(k_label_cluster) + "=" + std::string(cluster);
}

// Tags of a result (common/doc/resource_list.h): the drift class (A, B, C), the machine-readable
// code, the node as the user wrote it, and the command to run instead.
inline constexpr std::string_view k_tag_class = "ichor.maesh.dev/class";
inline constexpr std::string_view k_tag_code = "ichor.maesh.dev/code";
inline constexpr std::string_view k_tag_node = "ichor.maesh.dev/node";
// A result that stands for the same finding on several nodes (a capture into a cluster or role
// patch): the nodes, comma-separated, as the user wrote them.
inline constexpr std::string_view k_tag_nodes = "ichor.maesh.dev/nodes";
inline constexpr std::string_view k_tag_hint = "ichor.maesh.dev/hint";
// The stage that wrote a result (common/stages/stage.h).
inline constexpr std::string_view k_tag_stage = "ichor.maesh.dev/stage";
// The findings of earlier stages that a result stands for (common/stages/stage.h, add_folded).
inline constexpr std::string_view k_tag_folded = "ichor.maesh.dev/folded";
// Reclaim's Maintenance result: the node's new maintenance certificate fingerprint.
inline constexpr std::string_view k_tag_fingerprint = "ichor.maesh.dev/fingerprint";

// Conditions of a TalosMachine's status. Released means Ready without AdoptionHeld.
inline constexpr std::string_view k_condition_ready = "Ready";
inline constexpr std::string_view k_condition_adoption_held = "AdoptionHeld";

} // namespace ichor::vocab
