#include "common/render/render.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/machineconfig/layout.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>

namespace ichor::render {

using doc::Value;
using objects::PatchView;

namespace {

Error config_error(std::string message, std::string_view code = vocab::code::k_bad_cluster) {
    return make_error(ErrorKind::Config, std::move(message), "", code);
}

std::string minor_of(std::string_view version) {
    std::string v(version.starts_with('v') ? version.substr(1) : version);
    auto parts = util::split(v, '.');
    if (parts.size() < 2) {
        return {};
    }
    return parts[0] + "." + parts[1];
}

bool known_contract(const std::string& c) {
    return std::find(std::begin(k_contracts), std::end(k_contracts), c) != std::end(k_contracts);
}

Value cert_and_key(const bundle::CertAndKey& ck, bool with_key) {
    Value v = Value::object();
    v["crt"] = ck.crt;
    v["key"] = with_key ? ck.key : std::string();
    return v;
}

// The PodSecurity admission configuration Talos's generator writes for every contract after 1.0.
Value pod_security() {
    Value defaults = Value::object();
    for (const char* k :
         {"audit", "audit-version", "enforce", "enforce-version", "warn", "warn-version"}) {
        std::string key(k);
        defaults[key] =
            key.ends_with("-version") ? "latest" : (key == "enforce" ? "baseline" : "restricted");
    }
    Value config = Value::object();
    config["apiVersion"] = "pod-security.admission.config.k8s.io/v1alpha1";
    config["defaults"] = defaults;
    config["exemptions"] = Value{{"namespaces", Value::array({"kube-system"})},
                                 {"runtimeClasses", Value::array()},
                                 {"usernames", Value::array()}};
    config["kind"] = "PodSecurityConfiguration";
    Value plugin = Value::object();
    plugin["name"] = "PodSecurity";
    plugin["configuration"] = std::move(config);
    return Value::array({std::move(plugin)});
}

Value audit_policy() {
    Value v = Value::object();
    v["apiVersion"] = "audit.k8s.io/v1";
    v["kind"] = "Policy";
    v["rules"] = Value::array({Value{{"level", "Metadata"}}});
    return v;
}

Value image(const char* repo, const std::string& version) {
    return std::string(repo) + ":v" + version;
}

Value machine_section(const Input& in, const std::string& contract, bool cp) {
    const bundle::Bundle& b = *in.bundle;
    const std::string& k8s = in.cluster->kubernetes_version;
    Value m = Value::object();
    m["type"] = cp ? "controlplane" : "worker";
    m["token"] = b.trustd_token;
    m["ca"] = cert_and_key(b.os, cp);
    m["certSANs"] = Value::array();
    m["kubelet"] = Value{{"image", image("ghcr.io/siderolabs/kubelet", k8s)},
                         {"defaultRuntimeSeccompProfileEnabled", true},
                         {"disableManifestsDirectory", true}};
    if (contract == "1.12") {
        m["network"] = Value::object(); // KubeSpan moved to its document with contract 1.13
    }
    Value install = Value::object();
    install["disk"] = in.install.disk;
    install["image"] = in.install.image;
    install["wipe"] = in.install.wipe;
    install["grubUseUKICmdline"] = true;
    m["install"] = std::move(install);
    Value features = Value::object();
    features["diskQuotaSupport"] = true;
    features["kubePrism"] = Value{{"enabled", true}, {"port", 7445}};
    features["hostDNS"] = Value{{"enabled", true}, {"forwardKubeDNSToHost", true}};
    m["features"] = std::move(features);
    if (cp) {
        m["nodeLabels"] = Value{{"node.kubernetes.io/exclude-from-external-load-balancers", ""}};
    }
    return m;
}

Value cluster_section(const Input& in, bool cp) {
    const bundle::Bundle& b = *in.bundle;
    const ClusterSpec& c = *in.cluster;
    const std::string& k8s = c.kubernetes_version;
    Value cl = Value::object();
    cl["id"] = b.cluster_id;
    cl["secret"] = b.cluster_secret;
    cl["controlPlane"] = Value{{"endpoint", c.endpoint}};
    cl["clusterName"] = c.cluster_name;
    Value net = Value::object();
    if (c.cni_preset == "cilium" || c.cni_preset == "none") {
        net["cni"] =
            Value{{"name", "none"}}; // Ichor installs Cilium itself, or the cluster has none
    }
    net["dnsDomain"] = "cluster.local";
    net["podSubnets"] =
        c.pod_subnets.empty() ? Value::array({"10.244.0.0/16"}) : Value(c.pod_subnets);
    net["serviceSubnets"] =
        c.service_subnets.empty() ? Value::array({"10.96.0.0/12"}) : Value(c.service_subnets);
    cl["network"] = std::move(net);
    cl["token"] = b.bootstrap_token;
    Value proxy = Value::object();
    if (c.cni_preset == "cilium") {
        proxy["disabled"] = true; // Cilium replaces kube-proxy
    }
    if (cp) {
        cl["secretboxEncryptionSecret"] = b.secretbox_encryption_secret;
        cl["ca"] = cert_and_key(b.k8s, true);
        cl["aggregatorCA"] = cert_and_key(b.k8s_aggregator, true);
        cl["serviceAccount"] = Value{{"key", b.k8s_service_account.key}};
        cl["apiServer"] = Value{{"image", image("registry.k8s.io/kube-apiserver", k8s)},
                                {"admissionControl", pod_security()},
                                {"auditPolicy", audit_policy()}};
        cl["controllerManager"] =
            Value{{"image", image("registry.k8s.io/kube-controller-manager", k8s)}};
        proxy["image"] = image("registry.k8s.io/kube-proxy", k8s);
        cl["proxy"] = std::move(proxy);
        cl["scheduler"] = Value{{"image", image("registry.k8s.io/kube-scheduler", k8s)}};
    } else {
        cl["ca"] = cert_and_key(b.k8s, false);
        if (!proxy.empty()) {
            cl["proxy"] = std::move(proxy);
        }
    }
    Value registries = Value::object();
    registries["kubernetes"] = Value{{"disabled", true}};
    registries["service"] = Value::object();
    cl["discovery"] = Value{{"enabled", true}, {"registries", std::move(registries)}};
    if (cp) {
        cl["etcd"] = Value{{"ca", cert_and_key(b.etcd, true)}};
    }
    return cl;
}

// RegistryMirrorConfig documents, sorted by name as the generator sorts them. The cluster's
// mirrors have v1alpha1's shape, so the layout table writes them.
std::vector<Value> mirror_documents(const Value& mirrors) {
    namespace layout = machineconfig::layout;
    if (!mirrors.is_object()) {
        return {};
    }
    std::map<std::string, const Value*> sorted;
    for (auto it = mirrors.begin(); it != mirrors.end(); ++it) {
        sorted[it.key()] = &it.value();
    }
    Value v1 = Value::object();
    Value& by_host = v1["machine"]["registries"]["mirrors"];
    by_host = Value::object();
    for (const auto& [host, m] : sorted) {
        by_host[host] = *m;
    }
    return layout::to_documents(
        v1, [](const layout::Document& d) { return d.since == layout::Since::V1_12; });
}

// --- contract 1.14 -----------------------------------------------------------------------------

// A typed document of the v1alpha1 API: apiVersion, kind and, when given, name.
Value typed(const char* kind, const char* name = nullptr) {
    Value d = Value::object();
    d["apiVersion"] = "v1alpha1";
    d["kind"] = kind;
    if (name != nullptr) {
        d["name"] = name;
    }
    return d;
}

// The typed documents hold PEM text where v1alpha1 holds base64 of it; Talos writes the bundle's
// PEM as it is, final newline included.
std::string pem(const std::string& base64) {
    auto decoded = util::base64_decode(base64);
    return decoded ? *decoded : base64;
}

Value issuing_ca(const bundle::CertAndKey& ck) {
    return Value{{"cert", pem(ck.crt)}, {"key", pem(ck.key)}};
}

// The EncryptionConfiguration of KubeEtcdEncryptionConfig: Talos names the secretbox key `key2`
// and writes an aescbc secret as a secretbox key `key1`, so that a configuration regenerated at
// 1.14 decrypts what the legacy path encrypted (config/generate/kubernetes.go).
Value etcd_encryption(const bundle::Bundle& b) {
    Value providers = Value::array();
    for (auto [secret, name] : {std::pair{&b.secretbox_encryption_secret, "key2"},
                                std::pair{&b.aescbc_encryption_secret, "key1"}}) {
        if (!secret->empty()) {
            Value key = Value{{"name", name}, {"secret", *secret}};
            providers.push_back(Value{{"secretbox", Value{{"keys", Value::array({key})}}}});
        }
    }
    Value res = Value::object();
    res["providers"] = std::move(providers);
    res["resources"] = Value::array({"secrets"});
    return Value{{"resources", Value::array({std::move(res)})}};
}

// The v1alpha1 document at 1.14: what no typed document holds.
Value v1alpha1_14(const Input& in, bool cp) {
    const bundle::Bundle& b = *in.bundle;
    Value m = Value::object();
    m["type"] = cp ? "controlplane" : "worker";
    m["token"] = b.trustd_token;
    m["ca"] = cert_and_key(b.os, cp);
    m["certSANs"] = Value::array();
    m["features"] = Value{{"diskQuotaSupport", true}};
    Value cl = Value::object();
    cl["token"] = b.bootstrap_token;
    if (cp) {
        cl["etcd"] = Value{{"ca", cert_and_key(b.etcd, true)}};
    }
    Value v1 = Value::object();
    v1["version"] = "v1alpha1";
    v1["debug"] = false;
    v1["persist"] = true;
    v1["machine"] = std::move(m);
    v1["cluster"] = std::move(cl);
    return v1;
}

// The documents every role gets (config/generate worker.go and init.go, up to the Kubernetes
// ones), with the registry mirrors where the generator puts them.
void machine_documents_14(std::vector<Value>& docs, const Input& in) {
    const bundle::Bundle& b = *in.bundle;
    Value disc = typed("DiscoveryServiceConfig", "default");
    disc["endpoint"] = "https://discovery.talos.dev/";
    docs.push_back(std::move(disc));
    Value id = typed("DiscoveryIdentityConfig");
    id["clusterID"] = b.cluster_id;
    id["clusterSecret"] = b.cluster_secret;
    docs.push_back(std::move(id));
    if (!in.install.disk.empty()) { // the document needs a disk selector
        Value inst = typed("UnattendedInstallConfig");
        inst["installer"] = Value{{"image", in.install.image}};
        inst["provisioning"] = Value{
            {"diskSelector", Value{{"match", "disk.dev_path == \"" + in.install.disk + "\""}}},
            {"wipe", in.install.wipe}};
        docs.push_back(std::move(inst));
    }
    Value resolver = typed("ResolverConfig");
    resolver["hostDNS"] = Value{{"enabled", true}, {"forwardKubeDNSToHost", true}};
    docs.push_back(std::move(resolver));
    Value ephemeral = typed("VolumeConfig", "EPHEMERAL");
    ephemeral["mount"] = Value{{"secure", true}};
    docs.push_back(std::move(ephemeral));
    Value trim = typed("FilesystemTrimConfig");
    trim["interval"] = "168h0m0s";
    docs.push_back(std::move(trim));
    Value security = typed("SecurityProfileConfig");
    security["workloadIsolation"] = true;
    docs.push_back(std::move(security));
    for (auto& d : mirror_documents(in.cluster->registry_mirrors)) {
        docs.push_back(std::move(d));
    }
    Value hostname = typed("HostnameConfig");
    hostname["auto"] = "stable";
    docs.push_back(std::move(hostname));
}

// generateKubernetesUniversalConfigs of config/generate/kubernetes.go.
void kubernetes_documents_14(std::vector<Value>& docs, const Input& in, bool cp) {
    const ClusterSpec& c = *in.cluster;
    const std::string& k8s = c.kubernetes_version;
    Value cluster = typed("KubeClusterConfig");
    cluster["clusterName"] = c.cluster_name;
    cluster["endpoint"] = c.endpoint;
    docs.push_back(std::move(cluster));
    Value node = typed("KubeNodeConfig");
    if (cp) {
        node["labels"] = Value{{"node-role.kubernetes.io/control-plane", ""},
                               {"node.kubernetes.io/exclude-from-external-load-balancers", ""}};
        node["taints"] = Value{{"node-role.kubernetes.io/control-plane", "NoSchedule"}};
    }
    docs.push_back(std::move(node));
    Value kubelet = typed("KubeletConfig");
    kubelet["image"] = image("ghcr.io/siderolabs/kubelet", k8s);
    kubelet["defaultRuntimeSeccompProfileEnabled"] = true;
    docs.push_back(std::move(kubelet));
    Value net = typed("KubeNetworkConfig");
    net["dnsDomain"] = "cluster.local";
    net["podSubnets"] =
        c.pod_subnets.empty() ? Value::array({"10.244.0.0/16"}) : Value(c.pod_subnets);
    net["serviceSubnets"] =
        c.service_subnets.empty() ? Value::array({"10.96.0.0/12"}) : Value(c.service_subnets);
    docs.push_back(std::move(net));
    Value ca = typed("KubeAPIServerCAConfig");
    if (cp) {
        ca["issuingCA"] = issuing_ca(in.bundle->k8s);
    } else {
        ca["acceptedCAs"] = Value::array({pem(in.bundle->k8s.crt)}); // trust, no key
    }
    docs.push_back(std::move(ca));
    Value prism = typed("KubePrismConfig");
    prism["port"] = 7445;
    docs.push_back(std::move(prism));
}

// generateKubernetesControlplaneConfigs of config/generate/kubernetes.go, with Ichor's CNI and
// kube-proxy settings: no KubeFlannelCNIConfig for presets cilium and none (from 1.14 the CNI
// is that document), kube-proxy disabled under Ichor's Cilium.
void control_plane_documents_14(std::vector<Value>& docs, const Input& in) {
    const bundle::Bundle& b = *in.bundle;
    const ClusterSpec& c = *in.cluster;
    const std::string& k8s = c.kubernetes_version;
    Value aggregator = typed("KubeAggregatorCAConfig");
    aggregator["issuingCA"] = issuing_ca(b.k8s_aggregator);
    docs.push_back(std::move(aggregator));
    for (auto& plugin : pod_security()) {
        Value admission = typed("KubeAdmissionControlConfig");
        admission["name"] = plugin["name"];
        admission["configuration"] = plugin["configuration"];
        docs.push_back(std::move(admission));
    }
    Value audit = typed("KubeAuditPolicyConfig");
    audit["configuration"] = audit_policy();
    docs.push_back(std::move(audit));
    Value authn = typed("KubeAuthenticationConfig");
    Value conditions = Value::array();
    for (const char* path : {"/livez", "/readyz", "/healthz"}) {
        conditions.push_back(Value{{"path", path}});
    }
    authn["configuration"] =
        Value{{"anonymous", Value{{"conditions", std::move(conditions)}, {"enabled", true}}},
              {"jwt", Value::array()}};
    docs.push_back(std::move(authn));
    for (auto [name, type] : {std::pair{"node", "Node"}, std::pair{"rbac", "RBAC"}}) {
        Value authz = typed("KubeAuthorizerConfig", name);
        authz["type"] = type;
        docs.push_back(std::move(authz));
    }
    Value encryption = typed("KubeEtcdEncryptionConfig");
    encryption["config"] = etcd_encryption(b);
    docs.push_back(std::move(encryption));
    Value sa = typed("KubeServiceAccountConfig");
    sa["issuer"] = Value{{"privateKey", pem(b.k8s_service_account.key)}, {"issuerURL", c.endpoint}};
    docs.push_back(std::move(sa));
    Value api = typed("KubeAPIServerConfig");
    api["image"] = image("registry.k8s.io/kube-apiserver", k8s);
    docs.push_back(std::move(api));
    Value cm = typed("KubeControllerManagerConfig");
    cm["image"] = image("registry.k8s.io/kube-controller-manager", k8s);
    docs.push_back(std::move(cm));
    Value sched = typed("KubeSchedulerConfig");
    sched["image"] = image("registry.k8s.io/kube-scheduler", k8s);
    docs.push_back(std::move(sched));
    Value proxy = typed("KubeProxyConfig");
    if (c.cni_preset == "cilium") {
        proxy["enabled"] = false; // Cilium replaces kube-proxy
    }
    proxy["image"] = image("registry.k8s.io/kube-proxy", k8s);
    docs.push_back(std::move(proxy));
    if (c.cni_preset != "cilium" && c.cni_preset != "none") {
        Value flannel = typed("KubeFlannelCNIConfig");
        flannel["backendType"] = "vxlan";
        flannel["backendPort"] = 4789;
        docs.push_back(std::move(flannel));
    }
    Value coredns = typed("KubeCoreDNSConfig");
    coredns["enabled"] = true;
    docs.push_back(std::move(coredns));
}

// Contract 1.14 as machinery v1.14.1's generator writes it (config/generate), in its order.
std::vector<Value> generate_14(const Input& in, bool cp) {
    std::vector<Value> docs;
    docs.push_back(v1alpha1_14(in, cp));
    machine_documents_14(docs, in);
    kubernetes_documents_14(docs, in, cp);
    if (cp) {
        control_plane_documents_14(docs, in);
    }
    return docs;
}

std::string str_at(const Value& v, std::string_view path) {
    return doc::get_string(v, path);
}

int layer_rank(const std::string& layer) {
    if (layer == "cluster") {
        return 0;
    }
    return layer == "role" ? 1 : 2;
}

} // namespace

Result<ClusterSpec> parse_cluster(const Value& tc) {
    ClusterSpec c;
    c.name = str_at(tc, "metadata.name");
    c.ns = str_at(tc, "metadata.namespace");
    const Value* spec = doc::find_path(tc, "spec");
    if (c.name.empty() || spec == nullptr || !spec->is_object()) {
        return config_error("the TalosCluster has no metadata.name or spec");
    }
    auto field = [&](std::string_view path) { return str_at(*spec, path); };
    const objects::ClusterView view(tc);
    c.cluster_name = view.cluster_name().empty() ? c.name : view.cluster_name();
    c.talos_version = view.talos_version();
    std::string k8s = view.kubernetes_version();
    c.kubernetes_version = k8s.starts_with('v') ? k8s.substr(1) : k8s;
    c.endpoint = view.endpoint();
    c.version_contract = field("versionContract");
    if (c.version_contract.empty()) {
        c.version_contract = minor_of(c.talos_version);
    }
    if (const Value* n = doc::find_path(*spec, "controlPlane.count");
        n != nullptr && n->is_number_integer()) {
        c.control_plane_count = n->get<int>();
    }
    if (std::string preset = field("cni.preset"); !preset.empty()) {
        c.cni_preset = preset;
    }
    if (const Value* l = doc::find_path(*spec, "cni.cilium.inlineManifests");
        l != nullptr && l->is_array()) {
        for (const auto& v : *l) {
            if (v.is_string()) {
                c.cilium_manifests.push_back(v.get<std::string>());
            }
        }
    }
    if (const Value* m = doc::find_path(*spec, "registries.mirrors");
        m != nullptr && m->is_object()) {
        c.registry_mirrors = *m;
    }
    for (auto [into, path] : {std::pair{&c.pod_subnets, "network.podSubnets"},
                              std::pair{&c.service_subnets, "network.serviceSubnets"}}) {
        if (const Value* l = doc::find_path(*spec, path); l != nullptr && l->is_array()) {
            for (const auto& v : *l) {
                if (v.is_string()) {
                    into->push_back(v.get<std::string>());
                }
            }
        }
    }
    for (auto [value, name] : {std::pair{&c.talos_version, "spec.talosVersion"},
                               std::pair{&c.kubernetes_version, "spec.kubernetesVersion"},
                               std::pair{&c.endpoint, "spec.endpoint"}}) {
        if (value->empty()) {
            return config_error("TalosCluster " + c.name + " has no " + name);
        }
    }
    return c;
}

namespace {

// The controller's order: layer cluster, role, machine; within a layer by spec.order, then by
// metadata.name. Stable: patches alike keep the list's order.
void in_apply_order(std::vector<const Value*>& selected) {
    auto order = [](const Value* p) { return static_cast<long long>(PatchView(*p).order()); };
    std::stable_sort(selected.begin(), selected.end(), [&](const Value* a, const Value* b) {
        int la = layer_rank(PatchView(*a).layer());
        int lb = layer_rank(PatchView(*b).layer());
        if (la != lb) {
            return la < lb;
        }
        if (order(a) != order(b)) {
            return order(a) < order(b);
        }
        return str_at(*a, "metadata.name") < str_at(*b, "metadata.name");
    });
}

std::vector<Value> copies(const std::vector<const Value*>& selected) {
    std::vector<Value> out;
    out.reserve(selected.size());
    for (const Value* p : selected) {
        out.push_back(*p);
    }
    return out;
}

} // namespace

std::vector<const Value*> select_patches(const std::vector<Value>& patches,
                                         const std::string& cluster, const std::string& role,
                                         const std::string& machine) {
    std::vector<const Value*> out;
    for (const auto& p : patches) {
        if (PatchView(p).selects(cluster, role, machine)) {
            out.push_back(&p);
        }
    }
    in_apply_order(out);
    return out;
}

std::vector<Value> patches_for(const std::vector<Value>& patches, const std::string& cluster,
                               const std::string& role, const std::string& machine) {
    return copies(select_patches(patches, cluster, role, machine));
}

PatchIndex::PatchIndex(const std::vector<Value>& patches) : m_patches(&patches) {
    for (std::size_t i = 0; i < patches.size(); ++i) {
        const PatchView v(patches[i]);
        const std::string layer = v.layer();
        std::string role = v.role();
        std::string machine = v.machine();
        // Only where the rule cannot select the patch for another key: a role layer selects by
        // its role alone, a machine layer by its (non-empty) machine alone. A key that is empty
        // or not text can select an unnamed role: asked every time.
        if (layer == objects::k_layer_role && !role.empty()) {
            m_by_role[std::move(role)].push_back(i);
        } else if (layer == objects::k_layer_machine && !machine.empty()) {
            m_by_machine[std::move(machine)].push_back(i);
        } else {
            m_others.push_back(i);
        }
    }
}

std::vector<const Value*> PatchIndex::select(const std::string& cluster, const std::string& role,
                                             const std::string& machine) const {
    std::vector<std::size_t> candidates = m_others;
    auto add = [&](const auto& by, const std::string& key) {
        if (auto it = by.find(key); it != by.end()) {
            candidates.insert(candidates.end(), it->second.begin(), it->second.end());
        }
    };
    add(m_by_role, role);
    add(m_by_machine, machine);
    std::sort(candidates.begin(), candidates.end()); // the list's order, as select_patches sees it
    std::vector<const Value*> out;
    for (std::size_t i : candidates) {
        const Value& p = (*m_patches)[i];
        if (PatchView(p).selects(cluster, role, machine)) {
            out.push_back(&p);
        }
    }
    in_apply_order(out);
    return out;
}

std::vector<Value> PatchIndex::patches_for(const std::string& cluster, const std::string& role,
                                           const std::string& machine) const {
    return copies(select(cluster, role, machine));
}

std::string contract_of(const Input& in) {
    if (!in.contract.empty()) {
        return in.contract;
    }
    return in.cluster == nullptr ? std::string() : in.cluster->version_contract;
}

Result<std::vector<Value>> generate(const Input& in) {
    const std::string contract = contract_of(in);
    if (!known_contract(contract)) {
        return config_error("version contract \"" + contract + "\" of TalosCluster " +
                                (in.cluster ? in.cluster->name : std::string()) +
                                " is not one this render knows (1.12, 1.13, 1.14)",
                            vocab::code::k_unsupported_contract);
    }
    bool cp = in.role == "controlplane" || in.role == "init";
    if (contract == "1.14") {
        return generate_14(in, cp);
    }
    Value v1 = Value::object();
    v1["version"] = "v1alpha1";
    v1["debug"] = false;
    v1["persist"] = true;
    v1["machine"] = machine_section(in, contract, cp);
    v1["cluster"] = cluster_section(in, cp);
    std::vector<Value> docs;
    docs.push_back(std::move(v1));
    for (auto& d : mirror_documents(in.cluster->registry_mirrors)) {
        docs.push_back(std::move(d));
    }
    docs.push_back(
        Value{{"apiVersion", "v1alpha1"}, {"kind", "HostnameConfig"}, {"auto", "stable"}});
    return docs;
}

namespace {

// A patch's text parsed, kept for the next render that reads the same text: a cluster's and a
// role's patch are one text for every machine they select, and a plan renders each machine
// several times (the drift, the layering's verify, the node check). parse_patch is a function of
// the text alone, and its YAML parse the most of a patch's cost. A few texts are kept per thread,
// the least recently used going first, up to k_kept_bytes of text in all; a larger text, and a
// text that does not parse, is parsed each time.
Result<std::shared_ptr<const Patch>> parsed_patch(const std::string& text) {
    constexpr std::size_t k_kept = 16;
    constexpr std::size_t k_kept_bytes = 256 * 1024;
    struct Kept {
        std::string text;
        std::shared_ptr<const Patch> patch;
        std::uint64_t used = 0;
    };
    thread_local std::vector<Kept> kept;
    thread_local std::uint64_t clock = 0;
    thread_local std::size_t bytes = 0;
    for (auto& k : kept) {
        if (k.text == text) {
            k.used = ++clock;
            return k.patch;
        }
    }
    auto p = parse_patch(text, "spec.patch");
    if (!p) {
        return p.error();
    }
    auto patch = std::make_shared<const Patch>(std::move(*p));
    if (text.size() > k_kept_bytes / k_kept) {
        return patch;
    }
    while (!kept.empty() && (kept.size() >= k_kept || bytes + text.size() > k_kept_bytes)) {
        auto oldest = std::min_element(
            kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.used < b.used; });
        bytes -= oldest->text.size();
        kept.erase(oldest);
    }
    kept.push_back(Kept{text, patch, ++clock});
    bytes += text.size();
    return patch;
}

} // namespace

Result<std::vector<Value>> render(const Input& in) {
    auto docs = generate(in);
    if (!docs) {
        return docs;
    }
    for (const Value* p : select_patches(in.patches, in.cluster->name, in.role, in.machine)) {
        const std::string name = str_at(*p, "metadata.name");
        auto parsed = parsed_patch(PatchView(*p).patch());
        if (!parsed) {
            return parsed.error().wrap("TalosConfigPatch " + name);
        }
        std::shared_ptr<const Patch> patch = std::move(*parsed);
        if (PatchView(*p).secret_values_field() != nullptr) {
            auto values = secret_values(*p);
            if (!values) {
                return values.error().wrap("TalosConfigPatch " + name);
            }
            Patch resolved = *patch; // the kept parse is shared: the values go into a copy
            if (auto st = resolve_secret_values(resolved, *values, in.secrets); !st) {
                return st.error().wrap("TalosConfigPatch " + name);
            }
            patch = std::make_shared<const Patch>(std::move(resolved));
        }
        if (auto st = apply_patch(*docs, *patch); !st) {
            return st.error().wrap("TalosConfigPatch " + name);
        }
    }
    return docs;
}

Result<std::vector<SecretValue>> secret_values(const Value& p) {
    std::vector<SecretValue> out;
    const Value* sv = PatchView(p).secret_values_field();
    if (sv == nullptr || sv->is_null()) {
        return out;
    }
    auto bad = [](size_t i, const std::string& why) {
        return make_error(ErrorKind::Findings,
                          "spec.secretValues[" + std::to_string(i) + "]: " + why, "",
                          vocab::code::k_patch_does_not_apply);
    };
    if (!sv->is_array()) {
        return bad(0, "not a list");
    }
    for (size_t i = 0; i < sv->size(); ++i) {
        const Value& e = (*sv)[i];
        if (!e.is_object()) {
            return bad(i, "not a mapping");
        }
        SecretValue v;
        v.secret = doc::get_string(e, "secretRef.name");
        v.key = doc::get_string(e, "secretRef.key");
        v.kind = doc::get_string(e, "kind");
        v.name = doc::get_string(e, "name");
        v.digest = doc::get_string(e, "digest");
        const Value* path = doc::find_path(e, "path");
        if (v.secret.empty() || v.key.empty()) {
            return bad(i, "secretRef needs a name and a key");
        }
        if (path == nullptr || !path->is_array() || path->empty()) {
            return bad(i, "path must be a list of keys");
        }
        for (const auto& k : *path) {
            if (!k.is_string()) {
                return bad(i, "path must be a list of keys");
            }
            v.path.push_back(k.get<std::string>());
        }
        out.push_back(std::move(v));
    }
    return out;
}

namespace {

bool identity_is(const Value& d, const SecretValue& v) {
    if (!d.is_object()) {
        return false;
    }
    if (v.kind.empty() || v.kind == "v1alpha1") {
        return !d.contains("kind");
    }
    return d.value("kind", "") == v.kind && d.value("name", "") == v.name;
}

bool set_at(Value& root, const std::vector<std::string>& path, const std::string& value) {
    Value* at = &root;
    for (size_t i = 0; i < path.size(); ++i) {
        const bool last = i + 1 == path.size();
        if (at->is_array()) {
            const std::string& k = path[i];
            if (k.empty() || k.find_first_not_of("0123456789") != std::string::npos ||
                std::stoul(k) >= at->size()) {
                return false;
            }
            at = &(*at)[std::stoul(k)];
        } else {
            if (!at->is_object()) {
                return false;
            }
            if (!last && !at->contains(path[i])) {
                (*at)[path[i]] = Value::object();
            }
            at = &(*at)[path[i]];
        }
    }
    *at = value;
    return true;
}

} // namespace

Status resolve_secret_values(Patch& patch, const std::vector<SecretValue>& values,
                             const SecretLookup& lookup) {
    for (const auto& v : values) {
        std::optional<std::string> value = v.digest;
        if (lookup) {
            value = lookup(v.secret, v.key);
        }
        if (!value || value->empty()) {
            return make_error(ErrorKind::Findings,
                              "spec.secretValues: Secret " + v.secret + " has no key " + v.key,
                              "kubectl get secret " + v.secret,
                              vocab::code::k_secret_value_missing);
        }
        Patch::Step* target = nullptr;
        for (auto& step : patch.steps) {
            if (!step.is_delete && identity_is(step.document, v)) {
                target = &step;
            }
        }
        if (target == nullptr || !set_at(target->document, v.path, *value)) {
            return make_error(ErrorKind::Findings,
                              "spec.secretValues: the patch has no document " +
                                  (v.kind.empty() ? std::string("v1alpha1") : v.kind) +
                                  (v.name.empty() ? "" : " " + v.name) + " with " +
                                  util::join(v.path, "."),
                              "", vocab::code::k_secret_value_missing);
        }
    }
    return ok_status();
}

} // namespace ichor::render
