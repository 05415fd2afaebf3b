// Which CNI a cluster runs, and how it was installed, from the cluster's Kubernetes objects and
// its control planes' machine configurations (the facts are the project's CNI reference, §1).
// Pure: the caller lists the objects; nothing here reads the network.
//
// The result names what was found and every piece of evidence (object and field), so a plan can
// say why. A cluster with two CNIs' traces (a half-done migration, Cilium beside Talos's flannel)
// is Several: adoption treats it as non-Cilium.
#pragma once

#include "common/cni/helm_record.h"
#include "common/doc/value.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::cni {

// The objects detection reads, as the Kubernetes API lists them (all namespaces). Secrets need
// only be those of type helm.sh/release.v1 (others are skipped).
struct ClusterObjects {
    std::vector<doc::Value> daemonsets;
    std::vector<doc::Value> deployments;
    std::vector<doc::Value> configmaps;
    std::vector<doc::Value> secrets;
    std::vector<doc::Value> nodes;
};

// One control plane's machine configuration. Only control planes render the bootstrap manifests,
// so a worker's configuration proves nothing about the CNI.
struct ControlPlane {
    std::string node;
    machineconfig::Config config;
    // Talos 1.14 reads a missing cluster.network section as no flannel; earlier versions as
    // flannel (reference §1.2).
    bool talos_1_14 = false;
};

enum class Cni { Cilium, Flannel, Calico, Other, None, Several };

enum class CiliumInstall {
    HelmRecord,     // helm install: a release record
    CiliumCli,      // cilium install: a release record written by the CLI
    InlineManifest, // helm template into a Talos inline (or extra) manifest: no record
    ManifestApply,  // helm template and kubectl apply: no record
    Unknown,        // Cilium objects and no trace of how they came
};

struct Evidence {
    std::string object; // "DaemonSet kube-system/cilium", "node cp-1 machine configuration"
    std::string field;  // "metadata.labels.k8s-app", "cluster.network.cni.name"
    std::string value;  // what the field holds, as text
};

struct Detection {
    Cni cni = Cni::None;
    // What was found in words: "cilium", "flannel", "calico", "weave-net", "cilium, flannel".
    std::string name;
    std::vector<Evidence> evidence;

    // Cilium only.
    CiliumInstall install = CiliumInstall::Unknown;
    std::optional<HelmRelease> release; // the current release record, if any
    std::string namespace_name;         // where the agent DaemonSet runs
    std::string ipam_mode;              // cilium-config data.ipam ("" when the ConfigMap is absent)
    // Control-plane inline or extra manifests that deliver the CNI: `talosctl upgrade-k8s` would
    // apply them again, so a managed render removes them (class B).
    std::vector<std::string> manifests;
    // Of those, the names of the inline manifests (cluster.inlineManifests,
    // KubeInlineManifestConfig) that hold the Cilium DaemonSet: a takeover records them in
    // spec.cni.cilium.inlineManifests, and their removal from the nodes is class B drift
    // (docs/drift-rules.md).
    std::vector<std::string> inline_manifests;

    // No CNI workload and every control plane says cni.name none, yet Nodes are Ready, flannel's
    // annotations on them, and the control planes run Talos 1.13 or earlier: flannel was removed
    // but its 10-flannel.conflist outlived the reboot (/etc/cni is on EPHEMERAL before 1.14,
    // reference §1.4), so containerd reports the network ready. Those Nodes; the detection is
    // Other ("none, with flannel's CNI configuration left on the nodes"), refused with what to do.
    std::vector<std::string> leftover_nodes;

    // One line: "cilium, installed by helm (release record sh.helm.release.v1.cilium.v2 with
    // values)", "flannel", "no CNI".
    [[nodiscard]] std::string summary() const;
};

std::string_view cni_name(Cni c);
std::string_view install_name(CiliumInstall i);

// Detects the CNI. A Helm release record that cannot be read is an error (its values would be
// lost); everything else is evidence. With no CNI trace at all the cluster is None only when
// every Node is NotReady for the missing network (NetworkPluginNotReady) or there are no Nodes;
// Nodes that are Ready with no CNI found mean a CNI this code does not know: Other,
// "unrecognised".
Result<Detection> detect(const ClusterObjects& objects, const std::vector<ControlPlane>& planes,
                         const RecordLimits& limits = k_record_limits);

} // namespace ichor::cni
