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
// The one wording of what a refusal leaves behind ("...; nothing was written"), in every message.
inline constexpr std::string_view k_nothing_written = "nothing was written";
// The stage that wrote a result (common/stages/stage.h).
inline constexpr std::string_view k_tag_stage = "ichor.maesh.dev/stage";
// The findings of earlier stages that a result stands for (common/stages/stage.h, add_folded).
inline constexpr std::string_view k_tag_folded = "ichor.maesh.dev/folded";
// Reclaim's Maintenance result: the node's new maintenance certificate fingerprint.
inline constexpr std::string_view k_tag_fingerprint = "ichor.maesh.dev/fingerprint";

// Codes (k_tag_code of a result, util::Error::code of an error) that the suite compares or that a
// person's scripts match: compare and emit them through these names, never a literal
// (scripts/check-conventions refuses a comparison of a literal with one of them). The Talos
// client's own codes are talos::code (common/talos/errors.h), Kubernetes' reasons kube::reason
// (common/kube/status.h).
namespace code {
// The summary of a plan (one per machine plan; the whole-cluster plan has its own).
inline constexpr std::string_view k_plan = "Plan";
// The plan refuses the whole run: nothing to adopt, or nothing may be written.
inline constexpr std::string_view k_nothing_to_adopt = "NothingToAdopt";
inline constexpr std::string_view k_nothing_written = "NothingWritten";
// The node already is an approved TalosMachine: skipped.
inline constexpr std::string_view k_already_adopted = "AlreadyAdopted";
// A control plane blocked by its class C results blocks the whole cluster.
inline constexpr std::string_view k_control_plane_blocked = "ControlPlaneBlocked";
// Drift: a secret that differs from the bundle's; a capture that does not give the node's
// configuration back.
inline constexpr std::string_view k_secret_differs = "SecretDiffers";
inline constexpr std::string_view k_capture_does_not_round_trip = "CaptureDoesNotRoundTrip";
// A credential outside the bundle changed on the node since the plan.
inline constexpr std::string_view k_credential_changed = "CredentialChanged";
// The node's dry run would change other paths than the plan's class B ones.
inline constexpr std::string_view k_node_check_mismatch = "NodeCheckMismatch";
// The CNI takeover: its plan, the Cilium values it keeps, a difference from the pinned Cilium.
inline constexpr std::string_view k_cni_plan = "CniPlan";
inline constexpr std::string_view k_cilium_values = "CiliumValues";
inline constexpr std::string_view k_cilium_diff = "CiliumDiff";
// An input past the readers' limits (common/doc/limits.h); util, below this floor, spells it too.
inline constexpr std::string_view k_input_limit = "InputLimit";
} // namespace code

// Conditions of a TalosMachine's status. Released means Ready without AdoptionHeld.
inline constexpr std::string_view k_condition_ready = "Ready";
inline constexpr std::string_view k_condition_adoption_held = "AdoptionHeld";

} // namespace ichor::vocab
