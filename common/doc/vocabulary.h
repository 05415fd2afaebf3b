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

// Codes (k_tag_code of a result, util::Error::code of an error): every code the suite emits, which
// it compares and a person's scripts match. Emit and compare them through these names, never a
// literal: scripts/check-conventions refuses one of them written as a string literal anywhere
// else in common/ and tools/ (util, below this floor, spells InputLimit). The Talos client's own
// codes are talos::code (common/talos/errors.h), Kubernetes' reasons kube::reason
// (common/kube/status.h), the trust verdicts inspection::field::verdict.
namespace code {
// The stream's and the configurations' readers.
inline constexpr std::string_view k_malformed_input = "MalformedInput";
inline constexpr std::string_view k_malformed_config = "MalformedConfig";
// An input past the readers' limits (common/doc/limits.h); util, below this floor, spells it too.
inline constexpr std::string_view k_input_limit = "InputLimit";

// The command line: a usage error, a missing setting, the consent, the dispatcher's verbs.
inline constexpr std::string_view k_usage = "Usage";
inline constexpr std::string_view k_config = "Config";
inline constexpr std::string_view k_consent_needed = "ConsentNeeded";
inline constexpr std::string_view k_not_confirmed = "NotConfirmed";
inline constexpr std::string_view k_not_installed = "NotInstalled";
inline constexpr std::string_view k_no_endpoints = "NoEndpoints";

// A server that does not answer (the Kubernetes API; talos::code names the same for a node).
inline constexpr std::string_view k_unreachable = "Unreachable";
inline constexpr std::string_view k_timeout = "Timeout";

// The Kubernetes client's own: TLS, the answer, the kubeconfig and its exec plugin.
inline constexpr std::string_view k_tls_verify_failed = "TLSVerifyFailed";
inline constexpr std::string_view k_tls_client_certificate = "TLSClientCertificate";
inline constexpr std::string_view k_bad_response = "BadResponse";
inline constexpr std::string_view k_response_too_large = "ResponseTooLarge";
inline constexpr std::string_view k_kubeconfig_invalid = "KubeconfigInvalid";
inline constexpr std::string_view k_exec_plugin_bad_reply = "ExecPluginBadReply";
inline constexpr std::string_view k_exec_plugin_interactive = "ExecPluginInteractive";
inline constexpr std::string_view k_exec_plugin_not_found = "ExecPluginNotFound";
inline constexpr std::string_view k_exec_plugin_failed = "ExecPluginFailed";

// A Talos resource whose spec cannot be read.
inline constexpr std::string_view k_bad_spec = "BadSpec";

// The secrets bundle and where it comes from (the talosconfig, the TalosCluster).
inline constexpr std::string_view k_bad_bundle = "BadBundle";
inline constexpr std::string_view k_bad_config = "BadConfig";
inline constexpr std::string_view k_not_control_plane = "NotControlPlane";
inline constexpr std::string_view k_rotation_in_progress = "RotationInProgress";
inline constexpr std::string_view k_no_bundle = "NoBundle";
inline constexpr std::string_view k_no_talosconfig = "NoTalosconfig";
inline constexpr std::string_view k_cluster_not_found = "ClusterNotFound";

// The render of a machine's configuration.
inline constexpr std::string_view k_bad_cluster = "BadCluster";
inline constexpr std::string_view k_patch_does_not_apply = "PatchDoesNotApply";
inline constexpr std::string_view k_secret_value_missing = "SecretValueMissing";
inline constexpr std::string_view k_render_failed = "RenderFailed";

// Drift (common/drift/rules.cpp, docs/drift-rules.md): the code of each rule of the table,
// then the classes decided before the table and after it.
inline constexpr std::string_view k_install_extra_kernel_args = "InstallExtraKernelArgs";
inline constexpr std::string_view k_install_extensions = "InstallExtensions";
inline constexpr std::string_view k_install_from_node = "InstallFromNode";
inline constexpr std::string_view k_install_disk_selector = "InstallDiskSelector";
inline constexpr std::string_view k_contract_default = "ContractDefault";
inline constexpr std::string_view k_sysctl = "Sysctl";
inline constexpr std::string_view k_kernel_modules = "KernelModules";
inline constexpr std::string_view k_talos_api_cert_sans = "TalosAPICertSANs";
inline constexpr std::string_view k_api_server_cert_sans = "APIServerCertSANs";
inline constexpr std::string_view k_pod_subnets = "PodSubnets";
inline constexpr std::string_view k_service_subnets = "ServiceSubnets";
inline constexpr std::string_view k_registry_mirror = "RegistryMirror";
inline constexpr std::string_view k_registry_config = "RegistryConfig";
inline constexpr std::string_view k_registries = "Registries";
inline constexpr std::string_view k_cni = "CNI";
inline constexpr std::string_view k_kube_proxy = "KubeProxy";
inline constexpr std::string_view k_endpoint = "Endpoint";
inline constexpr std::string_view k_cluster_name = "ClusterName";
inline constexpr std::string_view k_kubernetes_version = "KubernetesVersion";
inline constexpr std::string_view k_kube_prism = "KubePrism";
inline constexpr std::string_view k_discovery = "Discovery";
inline constexpr std::string_view k_role = "Role";
inline constexpr std::string_view k_cilium_inline_manifest = "CiliumInlineManifest";
inline constexpr std::string_view k_inline_manifests = "InlineManifests";
inline constexpr std::string_view k_extra_manifests = "ExtraManifests";
inline constexpr std::string_view k_ca_differs = "CADiffers";
inline constexpr std::string_view k_bundle_differs = "BundleDiffers";
inline constexpr std::string_view k_credential = "Credential";
inline constexpr std::string_view k_unknown_document = "UnknownDocument";
inline constexpr std::string_view k_captured = "Captured";
// A setting moved between the v1alpha1 and the typed documents, its value the same.
inline constexpr std::string_view k_layout = "Layout";
// Drift: a secret that differs from the bundle's; a capture that does not give the node's
// configuration back.
inline constexpr std::string_view k_secret_differs = "SecretDiffers";
inline constexpr std::string_view k_capture_does_not_round_trip = "CaptureDoesNotRoundTrip";

// An inspection's reading of etcd; the trust verdicts that are codes too
// (inspection::field::verdict: OtherCluster, Maintenance; discovery add names its findings the
// same).
inline constexpr std::string_view k_etcd_problem = "EtcdProblem";
inline constexpr std::string_view k_other_cluster = "OtherCluster";
inline constexpr std::string_view k_maintenance = "Maintenance";

// The plan of machines (common/stages/plan.cpp): its summary, its refusals of a node or of the run.
// The summary of a plan (one per machine plan; the whole-cluster plan has its own).
inline constexpr std::string_view k_plan = "Plan";
// The plan refuses the whole run: nothing to adopt, or nothing may be written.
inline constexpr std::string_view k_nothing_to_adopt = "NothingToAdopt";
inline constexpr std::string_view k_nothing_written = "NothingWritten";
// The node already is an approved TalosMachine: skipped.
inline constexpr std::string_view k_already_adopted = "AlreadyAdopted";
inline constexpr std::string_view k_stale_machine = "StaleMachine";
inline constexpr std::string_view k_unknown_talos_version = "UnknownTalosVersion";
inline constexpr std::string_view k_talos_too_old = "TalosTooOld";
inline constexpr std::string_view k_unsupported_kubernetes_version = "UnsupportedKubernetesVersion";
inline constexpr std::string_view k_no_configuration = "NoConfiguration";
inline constexpr std::string_view k_staged_config = "StagedConfig";
inline constexpr std::string_view k_install_disk_missing = "InstallDiskMissing";
inline constexpr std::string_view k_unknown_link = "UnknownLink";
inline constexpr std::string_view k_not_trust_checked = "NotTrustChecked";
inline constexpr std::string_view k_trusted_for_other_cluster = "TrustedForOtherCluster";
inline constexpr std::string_view k_unknown_role = "UnknownRole";
inline constexpr std::string_view k_control_plane_count = "ControlPlaneCount";
inline constexpr std::string_view k_unsupported_contract = "UnsupportedContract";
// A control plane blocked by its class C results blocks the whole cluster.
inline constexpr std::string_view k_control_plane_blocked = "ControlPlaneBlocked";

// The whole-cluster plan (plan_cluster, its checks and its layers) and the adoption's waits.
inline constexpr std::string_view k_invalid_cluster_name = "InvalidClusterName";
inline constexpr std::string_view k_cluster_exists = "ClusterExists";
inline constexpr std::string_view k_resume = "Resume";
inline constexpr std::string_view k_cluster_unreadable = "ClusterUnreadable";
inline constexpr std::string_view k_layers = "Layers";
inline constexpr std::string_view k_layers_did_not_verify = "LayersDidNotVerify";
inline constexpr std::string_view k_node_not_read = "NodeNotRead";
inline constexpr std::string_view k_no_control_plane = "NoControlPlane";
inline constexpr std::string_view k_cluster_ids = "ClusterIDs";
inline constexpr std::string_view k_talos_versions = "TalosVersions";
inline constexpr std::string_view k_ca_rotation = "CARotation";
inline constexpr std::string_view k_etcd_unhealthy = "EtcdUnhealthy";
inline constexpr std::string_view k_no_quorum = "NoQuorum";
inline constexpr std::string_view k_etcd_members = "EtcdMembers";
inline constexpr std::string_view k_ichor_api_not_served = "IchorAPINotServed";
inline constexpr std::string_view k_no_kubernetes_node = "NoKubernetesNode";
inline constexpr std::string_view k_node_not_ready = "NodeNotReady";
inline constexpr std::string_view k_members_capped = "MembersCapped";
inline constexpr std::string_view k_nodes_missing = "NodesMissing";
inline constexpr std::string_view k_members_missing = "MembersMissing";
inline constexpr std::string_view k_not_members = "NotMembers";
inline constexpr std::string_view k_cni_refused = "CniRefused";
inline constexpr std::string_view k_cni_undecided = "CNIUndecided";
inline constexpr std::string_view k_cni_not_ready = "CniNotReady";

// The CNI (common/cni, docs/cni.md): detection, the takeover's preflight, decide's refusals.
inline constexpr std::string_view k_cni_detected = "CniDetected";
// The CNI takeover: its plan, the Cilium values it keeps, a difference from the pinned Cilium.
inline constexpr std::string_view k_cni_plan = "CniPlan";
inline constexpr std::string_view k_cilium_values = "CiliumValues";
inline constexpr std::string_view k_cilium_diff = "CiliumDiff";
inline constexpr std::string_view k_cilium_not_compared = "CiliumNotCompared";
inline constexpr std::string_view k_cilium_preflight = "CiliumPreflight";
inline constexpr std::string_view k_cilium_diff_refused = "CiliumDiffRefused";
inline constexpr std::string_view k_cni_not_cilium = "CniNotCilium";
inline constexpr std::string_view k_cni_leftover_config = "CniLeftoverConfig";
inline constexpr std::string_view k_release_has_values = "ReleaseHasValues";
inline constexpr std::string_view k_cilium_values_not_cilium = "CiliumValuesNotCilium";
inline constexpr std::string_view k_cilium_values_unmanaged = "CiliumValuesUnmanaged";
inline constexpr std::string_view k_cilium_ipam = "CiliumIPAM";
inline constexpr std::string_view k_helm_record = "HelmRecord";
inline constexpr std::string_view k_owned_value = "OwnedValue";

// The node check (docs/stream.md, "Node check").
inline constexpr std::string_view k_node_check = "NodeCheck";
inline constexpr std::string_view k_node_rejected = "NodeRejected";
inline constexpr std::string_view k_node_check_failed = "NodeCheckFailed";
inline constexpr std::string_view k_install_replaced = "InstallReplaced";
// The node's dry run would change other paths than the plan's class B ones.
inline constexpr std::string_view k_node_check_mismatch = "NodeCheckMismatch";
// A credential outside the bundle changed on the node since the plan.
inline constexpr std::string_view k_credential_changed = "CredentialChanged";

// hold apply, release and abort.
inline constexpr std::string_view k_plan_has_errors = "PlanHasErrors";
inline constexpr std::string_view k_no_plan_basis = "NoPlanBasis";
inline constexpr std::string_view k_stale_plan = "StalePlan";
inline constexpr std::string_view k_backup_failed = "BackupFailed";
inline constexpr std::string_view k_backup_folder_open = "BackupFolderOpen";
inline constexpr std::string_view k_stopped_by_plan = "StoppedByPlan";
inline constexpr std::string_view k_drift_since_plan = "DriftSincePlan";
inline constexpr std::string_view k_released = "Released";
inline constexpr std::string_view k_nothing_held = "NothingHeld";
inline constexpr std::string_view k_already_released = "AlreadyReleased";
inline constexpr std::string_view k_removed = "Removed";

// kubectl ichor discovery add.
inline constexpr std::string_view k_this_cluster = "ThisCluster";
inline constexpr std::string_view k_configured = "Configured";
inline constexpr std::string_view k_already_listed = "AlreadyListed";
inline constexpr std::string_view k_added = "Added";

// kubectl ichor reclaim (docs/reclaim.md).
inline constexpr std::string_view k_last_control_plane = "LastControlPlane";
inline constexpr std::string_view k_quorum_break = "QuorumBreak";
inline constexpr std::string_view k_not_admin = "NotAdmin";
inline constexpr std::string_view k_ichor_machine = "IchorMachine";
inline constexpr std::string_view k_force_ungraceful_unused = "ForceUngracefulUnused";
inline constexpr std::string_view k_ungraceful = "Ungraceful";
inline constexpr std::string_view k_managed_cluster = "ManagedCluster";
inline constexpr std::string_view k_same_uuid_elsewhere = "SameUUIDElsewhere";
inline constexpr std::string_view k_confirmation_required = "ConfirmationRequired";
inline constexpr std::string_view k_confirmation_mismatch = "ConfirmationMismatch";
inline constexpr std::string_view k_weak_uuid = "WeakUUID";
inline constexpr std::string_view k_registered = "Registered";
inline constexpr std::string_view k_not_in_discovery = "NotInDiscovery";
inline constexpr std::string_view k_left_to_discovery = "LeftToDiscovery";
inline constexpr std::string_view k_unchanged = "Unchanged";
inline constexpr std::string_view k_bundle_unreadable = "BundleUnreadable";
inline constexpr std::string_view k_reset = "Reset";
inline constexpr std::string_view k_not_registered = "NotRegistered";
inline constexpr std::string_view k_identity_changed = "IdentityChanged";
inline constexpr std::string_view k_failed = "Failed";
} // namespace code

// Conditions of a TalosMachine's status. Released means Ready without AdoptionHeld.
inline constexpr std::string_view k_condition_ready = "Ready";
inline constexpr std::string_view k_condition_adoption_held = "AdoptionHeld";

} // namespace ichor::vocab
