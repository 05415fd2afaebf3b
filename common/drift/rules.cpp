#include "common/drift/rules.h"

#include "common/doc/vocabulary.h"
#include "common/machineconfig/kinds.h"

#include <algorithm>

namespace ichor::drift {

namespace {

namespace code = vocab::code;

constexpr std::string_view k_registry_hint =
    "make the node's registries and the cluster's agree, in either direction: add the cluster's "
    "mirrors to the node's configuration (talosctl patch mc --nodes {node} --patch "
    "@registries.yaml), or set spec.registries of TalosCluster {cluster} to the node's "
    "(kubectl edit taloscluster {cluster} -n {ns})";
constexpr std::string_view k_owned_hint =
    "Ichor renders {path} from TalosCluster {cluster}; to keep the node's value instead, change "
    "the TalosCluster first (kubectl edit taloscluster {cluster} -n {ns})";
constexpr std::string_view k_contract_note =
    "Talos's generator writes {path} otherwise at the version contract of TalosCluster {cluster}; "
    "the node's value is kept";
constexpr std::string_view k_manifest_note =
    "Talos keeps applying it at bootstrap and at every talosctl upgrade-k8s, as it does now";
constexpr std::string_view k_credential_note =
    "the value is carried in a Secret that the patch references (spec.secretValues), never in "
    "the patch's text; shown as its digest";
constexpr std::string_view k_bundle_hint =
    "{path} on the node is not the secrets bundle's: check the secrets bundle of TalosCluster "
    "{cluster} (kubectl ichor trustcheck --cluster {cluster})";
constexpr std::string_view k_layout_note =
    "the same settings in another layout: the node holds them in its v1alpha1 document, Ichor's "
    "render in a document; the patch deletes the render's document and keeps the node's layout";
constexpr std::string_view k_layout_owned_hint =
    "the same values in another layout: Ichor renders {path} from TalosCluster {cluster} (or its "
    "secrets bundle) in a document, the node holds it in its v1alpha1 document; adopting moves "
    "it into the document, its values unchanged";
constexpr std::string_view k_unknown_document_hint =
    "Talos at the node's version does not load this document kind, so no patch can carry it: "
    "check the node's configuration (talosctl get machineconfig --nodes {node} -o yaml)";

// Order matters: the first rule whose path matches wins, so the specific ones come first.
const std::vector<Rule> k_rules = {
    // Install-time fields come from the node, so they are never drift; extras are captured.
    {"machine.install.extraKernelArgs",
     When::Always,
     Class::A,
     code::k_install_extra_kernel_args,
     {}},
    {"machine.install.extensions", When::Always, Class::A, code::k_install_extensions, {}},
    {"machine.install.disk", When::Always, Class::Ignored, code::k_install_from_node, {}},
    {"machine.install.diskSelector.match", When::NoInstallDisk, Class::A,
     code::k_install_disk_selector,
     "the TalosMachine has no install disk: the node's own CEL disk selector is kept in its "
     "UnattendedInstallConfig, as Talos needs one"},
    {"machine.install.diskSelector.match",
     When::Always,
     Class::Ignored,
     code::k_install_from_node,
     {}},
    {"machine.install.diskSelector", When::NoInstallDisk, Class::A, code::k_install_disk_selector,
     "the TalosMachine has no install disk: the node's own disk selector is kept in its patch, "
     "as Talos needs one of them"},
    {"machine.install.diskSelector", When::Always, Class::Ignored, code::k_install_from_node, {}},
    // At 1.14 a render without a disk writes no UnattendedInstallConfig: the rest of the
    // node's install document goes with its selector.
    {"machine.install.image", When::NoInstallDocument, Class::A, code::k_install_disk_selector,
     "the TalosMachine has no install disk: the node's install document is kept in its patch "
     "with its disk selector"},
    {"machine.install.image", When::Always, Class::Ignored, code::k_install_from_node, {}},
    {"machine.install.wipe", When::NoInstallDocument, Class::A, code::k_install_disk_selector,
     "the TalosMachine has no install disk: the node's install document is kept in its patch "
     "with its disk selector"},
    {"machine.install.wipe", When::Always, Class::Ignored, code::k_install_from_node, {}},
    {"machine.install.grubUseUKICmdline", When::Always, Class::A, code::k_contract_default,
     k_contract_note},

    // Class A: captured into the machine's TalosConfigPatch.
    {"machine.sysctls", When::Always, Class::A, code::k_sysctl, {}},
    {"machine.kernel.modules", When::Always, Class::A, code::k_kernel_modules, {}},
    {"machine.certSANs", When::Always, Class::A, code::k_talos_api_cert_sans, {}},
    {"cluster.apiServer.certSANs", When::Always, Class::A, code::k_api_server_cert_sans, {}},
    {"cluster.network.podSubnets", When::Always, Class::A, code::k_pod_subnets, {}},
    {"cluster.network.serviceSubnets", When::Always, Class::A, code::k_service_subnets, {}},
    {"machine.registries.mirrors", When::RegistriesUnset, Class::A, code::k_registry_mirror, {}},
    {"machine.registries.config", When::RegistriesUnset, Class::A, code::k_registry_config, {}},
    {"machine.registries", When::RegistriesSet, Class::B, code::k_registries, k_registry_hint},
    {"cluster.network.cni", When::CniUnmanaged, Class::A, code::k_cni, {}},
    {"cluster.proxy", When::CniUnmanaged, Class::A, code::k_kube_proxy, {}},

    // Class B: what Ichor renders from its own model.
    {"cluster.controlPlane.endpoint", When::Always, Class::B, code::k_endpoint, k_owned_hint},
    {"cluster.clusterName", When::Always, Class::B, code::k_cluster_name, k_owned_hint},
    {"machine.kubelet.image", When::Always, Class::B, code::k_kubernetes_version, k_owned_hint},
    {"cluster.apiServer.image", When::Always, Class::B, code::k_kubernetes_version, k_owned_hint},
    {"cluster.controllerManager.image", When::Always, Class::B, code::k_kubernetes_version,
     k_owned_hint},
    {"cluster.scheduler.image", When::Always, Class::B, code::k_kubernetes_version, k_owned_hint},
    {"cluster.proxy.image", When::Always, Class::B, code::k_kubernetes_version, k_owned_hint},
    {"cluster.network.cni", When::CniManaged, Class::B, code::k_cni, k_owned_hint},
    {"cluster.proxy", When::CniManaged, Class::B, code::k_kube_proxy, k_owned_hint},
    {"machine.features.kubePrism", When::Always, Class::B, code::k_kube_prism, k_owned_hint},
    {"cluster.discovery", When::Always, Class::B, code::k_discovery, k_owned_hint},
    {"machine.type", When::Always, Class::B, code::k_role, k_owned_hint},
    {"machine.kubelet.defaultRuntimeSeccompProfileEnabled", When::Always, Class::A,
     code::k_contract_default, k_contract_note},
    {"machine.kubelet.disableManifestsDirectory", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"machine.features.diskQuotaSupport", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"machine.features.hostDNS", When::Always, Class::A, code::k_contract_default, k_contract_note},
    {"machine.features.stableHostname", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"machine.features.rbac", When::Always, Class::A, code::k_contract_default, k_contract_note},
    {"machine.features.apidCheckExtKeyUsage", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"machine.nodeLabels.node.kubernetes.io/exclude-from-external-load-balancers", When::Always,
     Class::A, code::k_contract_default, k_contract_note},
    {"cluster.apiServer.admissionControl", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"cluster.apiServer.auditPolicy", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"cluster.apiServer.disablePodSecurityPolicy", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"documents.HostnameConfig.auto", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    // What Talos's own contract 1.14 adds by default (machinery v1.14.1 config/generate): the
    // control-plane label and taint that earlier contracts leave to Talos at run time, and
    // documents without a v1alpha1 field.
    {"machine.nodeLabels.node-role.kubernetes.io/control-plane", When::Always, Class::A,
     code::k_contract_default, k_contract_note},
    {"machine.nodeTaints.node-role.kubernetes.io/control-plane", When::Always, Class::A,
     code::k_contract_default, k_contract_note},
    {"documents.VolumeConfig.EPHEMERAL.mount.secure", When::Always, Class::A,
     code::k_contract_default, k_contract_note},
    {"documents.FilesystemTrimConfig.interval", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"documents.SecurityProfileConfig.workloadIsolation", When::Always, Class::A,
     code::k_contract_default, k_contract_note},
    {"documents.KubeAuthenticationConfig", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"documents.KubeAuthorizerConfig", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"documents.KubeCoreDNSConfig.enabled", When::Always, Class::A, code::k_contract_default,
     k_contract_note},
    {"persist", When::Always, Class::A, code::k_contract_default, k_contract_note},

    // A takeover removes the inline manifest that delivered Cilium (ADR 0128 decision 3, issue
    // 13): Talos applies an inline manifest again at every `talosctl upgrade-k8s`, which would
    // undo Ichor's Cilium.
    {"cluster.inlineManifests", When::CiliumManifests, Class::B, code::k_cilium_inline_manifest,
     "the inline manifest delivered the Cilium that Ichor takes over (spec.cni.cilium."
     "inlineManifests of TalosCluster {cluster}): Ichor's render removes it so that the next "
     "talosctl upgrade-k8s does not apply that Cilium again over Ichor's"},

    // Class A with a note: Talos applies these manifests itself; any other inline manifest beside
    // a taken-over Cilium's is captured with them (the Cilium one's removal stays class B above
    // only when it is the change's one removal).
    {"cluster.inlineManifests", When::CiliumMixed, Class::C, code::k_inline_manifests,
     "the node's inline manifests hold the Cilium that Ichor takes over (spec.cni.cilium."
     "inlineManifests of TalosCluster {cluster}) beside others, and one list cannot both keep and "
     "remove: move the other manifests to cluster.extraManifests or into the cluster first "
     "(talosctl patch mc --nodes {node} --patch @manifests.yaml)"},
    {"cluster.inlineManifests", When::Always, Class::A, code::k_inline_manifests, k_manifest_note},
    {"cluster.extraManifests", When::Always, Class::A, code::k_extra_manifests, k_manifest_note},
    {"cluster.extraManifestHeaders", When::Always, Class::A, code::k_extra_manifests,
     k_manifest_note},

    // Class C: what a patch cannot carry, the cluster's CAs and bundle values. Everything else
    // falls through to class A, Captured.
    {"cluster.ca", When::Always, Class::C, code::k_ca_differs,
     "the node's Kubernetes CA is not the bundle's: check the secrets bundle of TalosCluster "
     "{cluster}"},
    {"cluster.acceptedCAs", When::Always, Class::C, code::k_ca_differs,
     "the Kubernetes CAs the node accepts are not the bundle's: check the secrets bundle of "
     "TalosCluster {cluster}"},
    {"cluster.etcd.ca", When::Always, Class::C, code::k_ca_differs,
     "the node's etcd CA is not the bundle's: check the secrets bundle of TalosCluster {cluster}"},
    {"cluster.aggregatorCA", When::Always, Class::C, code::k_ca_differs,
     "the node's aggregator CA is not the bundle's: check the secrets bundle of TalosCluster "
     "{cluster}"},
    {"cluster.serviceAccount", When::Always, Class::C, code::k_ca_differs,
     "the node's service-account key is not the bundle's: check the secrets bundle of "
     "TalosCluster {cluster}"},
    {"machine.ca", When::Always, Class::C, code::k_ca_differs,
     "the node's Talos API CA is not the bundle's: check the secrets bundle of TalosCluster "
     "{cluster}"},
    {"machine.acceptedCAs", When::Always, Class::C, code::k_ca_differs,
     "the Talos API CAs the node accepts are not the bundle's: check the secrets bundle of "
     "TalosCluster {cluster}"},
    {"cluster.id", When::Always, Class::C, code::k_bundle_differs, k_bundle_hint},
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

// Paths whose secrets are the bundle's: a node's value there that the render lacks is not the
// cluster's, never a credential to carry.
bool matches_any_bundle_path(std::string_view dotted) {
    for (std::string_view p :
         {"machine.ca", "machine.token", "cluster.ca", "cluster.etcd.ca", "cluster.aggregatorCA",
          "cluster.serviceAccount", "cluster.token", "cluster.secret", "cluster.id",
          "cluster.secretboxEncryptionSecret", "cluster.aescbcEncryptionSecret",
          "cluster.acceptedCAs", "machine.acceptedCAs"}) {
        if (matches(p, dotted)) {
            return true;
        }
    }
    return false;
}

bool names_any(const doc::Value& list, const std::vector<std::string>& names) {
    if (!list.is_array()) {
        return false;
    }
    for (const auto& m : list) {
        if (std::find(names.begin(), names.end(), name_of(m)) != names.end()) {
            return true;
        }
    }
    return false;
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
    case When::CiliumMixed:
        return c.cni_preset == "cilium" && names_any(change.current, c.cilium_manifests);
    case When::NoInstallDisk:
        return !c.install_disk_rendered;
    case When::NoInstallDocument:
        return !c.install_disk_rendered && change.proposed.is_null();
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
    if (!change.layout.empty()) {
        // drift::layout_moves: the values are the same; whose they are decides. Ichor's own (a
        // rule of class B or C at the path: spec.registries' mirrors, the bundle's CAs) keep the
        // render's layout, for consent, since a patch holding them would undo Ichor's next
        // change of them; any other is captured in the node's layout.
        Change values = change;
        values.layout.clear();
        values.current = doc::Value();
        values.proposed = doc::Value();
        const Class owner = classify(values, context).cls;
        if (owner == Class::B || owner == Class::C) {
            return {Class::B, std::string(code::k_layout), std::string(k_layout_owned_hint)};
        }
        return {Class::A, std::string(code::k_layout), std::string(k_layout_note)};
    }
    if (change.secret && change.proposed.is_null() && !change.current.is_null() &&
        !matches_any_bundle_path(change.dotted)) {
        // A credential the render does not carry at all (registry auth, an OIDC client secret, a
        // WireGuard key): outside the bundle, carried in a Secret the patch references.
        return {Class::A, std::string(code::k_credential), std::string(k_credential_note)};
    }
    if (change.secret && (change.dotted == "cluster.secretboxEncryptionSecret" ||
                          change.dotted == "cluster.aescbcEncryptionSecret")) {
        // At 1.14 the node's value is the whole EncryptionConfiguration of
        // KubeEtcdEncryptionConfig, digested: it may hold the bundle's secret in a form of the
        // owner's (an identity provider after it), which Ichor only matches in Talos's forms.
        return {Class::C, std::string(code::k_secret_differs),
                "{path} on the node is neither the bundle's secret of TalosCluster {cluster} nor "
                "an EncryptionConfiguration (KubeEtcdEncryptionConfig.config) in a form Talos "
                "writes for it (one secretbox or aescbc provider, no other provider such as "
                "identity): the configuration holds a secret and cannot be captured; give the node "
                "Talos's form of the cluster's secret, or check the bundle"};
    }
    if (change.secret) {
        return {Class::C, std::string(code::k_secret_differs),
                "{path} on the node is not the secret of the bundle of TalosCluster {cluster}: a "
                "secret cannot be captured; give the node the cluster's value, or check the "
                "bundle"};
    }
    if (change.path.size() >= 2 && change.path[0] == "documents" && context.talos_minor != 0 &&
        !machineconfig::known_at(change.path[1], context.talos_minor)) {
        return {Class::C, std::string(code::k_unknown_document),
                std::string(k_unknown_document_hint)};
    }
    if (change.path.size() >= 2 && change.path[0] == "documents" &&
        !machineconfig::find_kind(change.path[1])) {
        return {Class::C, std::string(code::k_unknown_document),
                std::string(k_unknown_document_hint)};
    }
    for (const auto& r : k_rules) {
        if (matches(r.path, change.dotted) && holds(r.when, context, change)) {
            return {r.cls, std::string(r.code), std::string(r.hint)};
        }
    }
    return {Class::A, std::string(code::k_captured), {}};
}

} // namespace ichor::drift
