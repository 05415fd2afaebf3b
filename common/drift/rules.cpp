#include "common/drift/rules.h"

#include <algorithm>

namespace ichor::drift {

namespace {

constexpr std::string_view k_registry_hint =
    "make the node's registries and the cluster's agree, in either direction: add the cluster's "
    "mirrors to the node's configuration (talosctl patch mc --nodes {node} --patch "
    "@registries.yaml), or set spec.registries of TalosCluster {cluster} to the node's "
    "(kubectl edit taloscluster {cluster} -n {ns})";
constexpr std::string_view k_owned_hint =
    "Ichor renders {path} from TalosCluster {cluster}; to keep the node's value instead, change "
    "the TalosCluster first (kubectl edit taloscluster {cluster} -n {ns})";
constexpr std::string_view k_contract_hint =
    "Ichor renders {path} as Talos's generator writes it at the version contract of TalosCluster "
    "{cluster}";
constexpr std::string_view k_unrepresentable_hint =
    "Ichor cannot represent {path} as the node has it: change the node's configuration to the "
    "rendered value (talosctl patch mc --nodes {node} --patch @fix.yaml), or leave this machine "
    "unmanaged";

// Order matters: the first rule whose path matches wins, so the specific ones come first.
const std::vector<Rule> k_rules = {
    // Install-time fields come from the node, so they are never drift; extras are captured.
    {"machine.install.extraKernelArgs", When::Always, Class::A, "InstallExtraKernelArgs", {}},
    {"machine.install.extensions", When::Always, Class::A, "InstallExtensions", {}},
    {"machine.install", When::Always, Class::Ignored, "InstallFromNode", {}},

    // Class A: captured into the machine's TalosConfigPatch.
    {"machine.sysctls", When::Always, Class::A, "Sysctl", {}},
    {"machine.kernel.modules", When::Always, Class::A, "KernelModules", {}},
    {"machine.certSANs", When::Always, Class::A, "TalosAPICertSANs", {}},
    {"cluster.apiServer.certSANs", When::Always, Class::A, "APIServerCertSANs", {}},
    {"cluster.network.podSubnets", When::Always, Class::A, "PodSubnets", {}},
    {"cluster.network.serviceSubnets", When::Always, Class::A, "ServiceSubnets", {}},
    {"machine.registries.mirrors", When::RegistriesUnset, Class::A, "RegistryMirror", {}},
    {"machine.registries.config", When::RegistriesUnset, Class::A, "RegistryConfig", {}},
    {"machine.registries", When::RegistriesSet, Class::B, "Registries", k_registry_hint},
    {"cluster.network.cni", When::CniUnmanaged, Class::A, "CNI", {}},
    {"cluster.proxy", When::CniUnmanaged, Class::A, "KubeProxy", {}},

    // Class B: what Ichor renders from its own model.
    {"cluster.controlPlane.endpoint", When::Always, Class::B, "Endpoint", k_owned_hint},
    {"cluster.clusterName", When::Always, Class::B, "ClusterName", k_owned_hint},
    {"machine.kubelet.image", When::Always, Class::B, "KubernetesVersion", k_owned_hint},
    {"cluster.apiServer.image", When::Always, Class::B, "KubernetesVersion", k_owned_hint},
    {"cluster.controllerManager.image", When::Always, Class::B, "KubernetesVersion", k_owned_hint},
    {"cluster.scheduler.image", When::Always, Class::B, "KubernetesVersion", k_owned_hint},
    {"cluster.proxy.image", When::Always, Class::B, "KubernetesVersion", k_owned_hint},
    {"cluster.network.cni", When::CniManaged, Class::B, "CNI", k_owned_hint},
    {"cluster.proxy", When::CniManaged, Class::B, "KubeProxy", k_owned_hint},
    {"machine.features.kubePrism", When::Always, Class::B, "KubePrism", k_owned_hint},
    {"cluster.discovery", When::Always, Class::B, "Discovery", k_owned_hint},
    {"machine.type", When::Always, Class::B, "Role", k_owned_hint},
    {"machine.kubelet.defaultRuntimeSeccompProfileEnabled", When::Always, Class::B,
     "ContractDefault", k_contract_hint},
    {"machine.kubelet.disableManifestsDirectory", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"machine.features.diskQuotaSupport", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"machine.features.hostDNS", When::Always, Class::B, "ContractDefault", k_contract_hint},
    {"machine.features.stableHostname", When::Always, Class::B, "ContractDefault", k_contract_hint},
    {"machine.features.rbac", When::Always, Class::B, "ContractDefault", k_contract_hint},
    {"machine.features.apidCheckExtKeyUsage", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"machine.nodeLabels.node.kubernetes.io/exclude-from-external-load-balancers", When::Always,
     Class::B, "ContractDefault", k_contract_hint},
    {"cluster.apiServer.admissionControl", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"cluster.apiServer.auditPolicy", When::Always, Class::B, "ContractDefault", k_contract_hint},
    {"cluster.apiServer.disablePodSecurityPolicy", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"documents.HostnameConfig.auto", When::Always, Class::B, "ContractDefault", k_contract_hint},
    // What Talos's own contract 1.14 adds by default (machinery v1.14.1 config/generate): the
    // control-plane label and taint that earlier contracts leave to Talos at run time, and
    // documents without a v1alpha1 field.
    {"machine.nodeLabels.node-role.kubernetes.io/control-plane", When::Always, Class::B,
     "ContractDefault", k_contract_hint},
    {"machine.nodeTaints.node-role.kubernetes.io/control-plane", When::Always, Class::B,
     "ContractDefault", k_contract_hint},
    {"documents.VolumeConfig.EPHEMERAL.mount.secure", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"documents.FilesystemTrimConfig.interval", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"documents.SecurityProfileConfig.workloadIsolation", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"documents.KubeAuthenticationConfig", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"documents.KubeAuthorizerConfig", When::Always, Class::B, "ContractDefault", k_contract_hint},
    {"documents.KubeCoreDNSConfig.enabled", When::Always, Class::B, "ContractDefault",
     k_contract_hint},
    {"persist", When::Always, Class::B, "ContractDefault", k_contract_hint},

    // A takeover removes the inline manifest that delivered Cilium (ADR 0128 decision 3, issue
    // 13): Talos applies an inline manifest again at every `talosctl upgrade-k8s`, which would
    // undo Ichor's Cilium.
    {"cluster.inlineManifests", When::CiliumManifests, Class::B, "CiliumInlineManifest",
     "the inline manifest delivered the Cilium that Ichor takes over (spec.cni.cilium."
     "inlineManifests of TalosCluster {cluster}): Ichor's render removes it so that the next "
     "talosctl upgrade-k8s does not apply that Cilium again over Ichor's"},

    // Class C with a specific hint; everything else falls through to Unrepresentable.
    {"cluster.inlineManifests", When::Always, Class::C, "InlineManifests",
     "remove cluster.inlineManifests from the node's configuration (talosctl patch mc --nodes "
     "{node} --patch @remove-manifests.yaml): Talos applies them only at bootstrap, and Ichor "
     "manages the CNI and add-ons itself"},
    {"cluster.extraManifests", When::Always, Class::C, "ExtraManifests",
     "remove cluster.extraManifests from the node's configuration (talosctl patch mc --nodes "
     "{node} --patch @remove-manifests.yaml)"},
    {"cluster.ca", When::Always, Class::C, "CADiffers",
     "the node's Kubernetes CA is not the bundle's: check the secrets bundle of TalosCluster "
     "{cluster}"},
    {"cluster.acceptedCAs", When::Always, Class::C, "CADiffers",
     "the Kubernetes CAs the node accepts are not the bundle's: check the secrets bundle of "
     "TalosCluster {cluster}"},
    {"cluster.etcd.ca", When::Always, Class::C, "CADiffers",
     "the node's etcd CA is not the bundle's: check the secrets bundle of TalosCluster {cluster}"},
    {"cluster.aggregatorCA", When::Always, Class::C, "CADiffers",
     "the node's aggregator CA is not the bundle's: check the secrets bundle of TalosCluster "
     "{cluster}"},
};

bool matches(std::string_view rule, std::string_view path) {
    return path == rule ||
           (path.size() > rule.size() && path.starts_with(rule) && path[rule.size()] == '.');
}

std::string name_of(const doc::Value& manifest) {
    if (!manifest.is_object()) {
        return {};
    }
    auto it = manifest.find("name");
    return it != manifest.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool contains(const doc::Value& list, const doc::Value& item) {
    if (!list.is_array()) {
        return false;
    }
    return std::find(list.begin(), list.end(), item) != list.end();
}

// Every inline manifest the node has and the render has not is one of `names`, and the render
// adds none: the change removes only the manifests that delivered the taken-over Cilium.
bool removes_only(const Change& change, const std::vector<std::string>& names) {
    if (!change.current.is_array() || change.current.empty() ||
        !(change.proposed.is_null() || change.proposed.is_array())) {
        return false;
    }
    bool removes = false;
    for (const auto& m : change.current) {
        if (contains(change.proposed, m)) {
            continue;
        }
        if (std::find(names.begin(), names.end(), name_of(m)) == names.end() ||
            name_of(m).empty()) {
            return false;
        }
        removes = true;
    }
    if (change.proposed.is_array()) {
        for (const auto& m : change.proposed) {
            if (!contains(change.current, m)) {
                return false;
            }
        }
    }
    return removes;
}

bool holds(When w, const Context& c, const Change& change) {
    switch (w) {
    case When::Always:
        return true;
    case When::RegistriesSet:
        return c.cluster_sets_registries;
    case When::RegistriesUnset:
        return !c.cluster_sets_registries;
    case When::CniManaged:
        return c.cni_preset != "unmanaged";
    case When::CniUnmanaged:
        return c.cni_preset == "unmanaged";
    case When::CiliumManifests:
        return c.cni_preset == "cilium" && removes_only(change, c.cilium_manifests);
    }
    return false;
}

} // namespace

std::string_view class_name(Class c) {
    switch (c) {
    case Class::A:
        return "A";
    case Class::B:
        return "B";
    case Class::C:
        return "C";
    case Class::Ignored:
        return "-";
    }
    return "C";
}

const std::vector<Rule>& rules() {
    return k_rules;
}

Verdict classify(const Change& change, const Context& context) {
    if (change.secret) {
        return {Class::C, "SecretDiffers",
                "{path} on the node is not the secret of the bundle of TalosCluster {cluster}: a "
                "secret cannot be captured; give the node the cluster's value, or check the "
                "bundle"};
    }
    for (const auto& r : k_rules) {
        if (matches(r.path, change.dotted) && holds(r.when, context, change)) {
            return {r.cls, std::string(r.code), std::string(r.hint)};
        }
    }
    return {Class::C, "Unrepresentable", std::string(k_unrepresentable_hint)};
}

} // namespace ichor::drift
