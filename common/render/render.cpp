#include "common/render/render.h"

#include "common/machineconfig/layout.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>

namespace ichor::render {

using doc::Value;

namespace {

Error config_error(std::string message, std::string code = "BadCluster") {
    return make_error(ErrorKind::Config, std::move(message), "", std::move(code));
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
    c.cluster_name = field("clusterName").empty() ? c.name : field("clusterName");
    c.talos_version = field("talosVersion");
    std::string k8s = field("kubernetesVersion");
    c.kubernetes_version = k8s.starts_with('v') ? k8s.substr(1) : k8s;
    c.endpoint = field("endpoint");
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

std::vector<const Value*> select_patches(const std::vector<Value>& patches,
                                         const std::string& cluster, const std::string& role,
                                         const std::string& machine) {
    std::vector<const Value*> out;
    for (const auto& p : patches) {
        if (str_at(p, "spec.cluster") != cluster) {
            continue;
        }
        const std::string layer = str_at(p, "spec.layer");
        bool applies =
            layer == "cluster" || (layer == "role" && str_at(p, "spec.role") == role) ||
            (layer == "machine" && !machine.empty() && str_at(p, "spec.machine") == machine);
        if (applies) {
            out.push_back(&p);
        }
    }
    auto order = [](const Value* p) {
        const Value* o = doc::find_path(*p, "spec.order");
        return o != nullptr && o->is_number_integer() ? o->get<long long>() : 0LL;
    };
    std::stable_sort(out.begin(), out.end(), [&](const Value* a, const Value* b) {
        int la = layer_rank(str_at(*a, "spec.layer"));
        int lb = layer_rank(str_at(*b, "spec.layer"));
        if (la != lb) {
            return la < lb;
        }
        if (order(a) != order(b)) {
            return order(a) < order(b);
        }
        return str_at(*a, "metadata.name") < str_at(*b, "metadata.name");
    });
    return out;
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
                            "UnsupportedContract");
    }
    bool cp = in.role == "controlplane" || in.role == "init";
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

Result<std::vector<Value>> render_patched(const Input& in) {
    auto docs = generate(in);
    if (!docs) {
        return docs;
    }
    for (const Value* p : select_patches(in.patches, in.cluster->name, in.role, in.machine)) {
        const std::string name = str_at(*p, "metadata.name");
        auto st = apply_patch_text(*docs, str_at(*p, "spec.patch"), "spec.patch");
        if (!st) {
            return st.error().wrap("TalosConfigPatch " + name);
        }
    }
    return docs;
}

std::vector<Value> finish(std::vector<Value> documents, const Input& in) {
    if (contract_of(in) == "1.14") {
        return to_layout14(std::move(documents));
    }
    return documents;
}

Result<std::vector<Value>> render(const Input& in) {
    auto docs = render_patched(in);
    if (!docs) {
        return docs;
    }
    return finish(std::move(*docs), in);
}

} // namespace ichor::render
