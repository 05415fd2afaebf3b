#include "common/cni/detect.h"

#include "common/util/strings.h"

#include <algorithm>
#include <set>

namespace ichor::cni {

namespace {

using doc::Value;

// A CNI workload recognised by its DaemonSet name or its pod label (reference §1.1).
struct Signature {
    std::string_view cni;  // the name the detection reports
    std::string_view name; // DaemonSet name
    std::string_view label_key;
    std::string_view label_value;
};

constexpr Signature k_daemonsets[] = {
    {"cilium", "cilium", "k8s-app", "cilium"},
    {"flannel", "kube-flannel", "k8s-app", "flannel"},
    {"flannel", "kube-flannel-ds", "app", "flannel"},
    {"calico", "calico-node", "k8s-app", "calico-node"},
    {"canal", "canal", "k8s-app", "canal"},
    {"weave-net", "weave-net", "name", "weave-net"},
    {"kube-router", "kube-router", "k8s-app", "kube-router"},
    {"antrea", "antrea-agent", "component", "antrea-agent"},
    {"kube-ovn", "kube-ovn-cni", "app", "kube-ovn-cni"},
    {"kindnet", "kindnet", "app", "kindnet"},
    {"aws-vpc-cni", "aws-node", "k8s-app", "aws-node"},
};

// ConfigMaps only a CNI's install creates.
constexpr std::pair<std::string_view, std::string_view> k_configmaps[] = {
    {"cilium", "cilium-config"},
    {"flannel", "kube-flannel-cfg"},
    {"calico", "calico-config"},
};

std::string object_name(std::string_view kind, const Value& o) {
    std::string ns = doc::get_string(o, "metadata.namespace");
    std::string name = doc::get_string(o, "metadata.name");
    return std::string(kind) + " " + (ns.empty() ? name : ns + "/" + name);
}

std::string label(const Value& o, std::string_view key) {
    const Value* labels = doc::find_path(o, "metadata.labels");
    if (labels == nullptr || !labels->is_object()) {
        return {};
    }
    auto it = labels->find(std::string(key));
    return it != labels->end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Signature* match_daemonset(const Value& ds) {
    std::string name = doc::get_string(ds, "metadata.name");
    for (const auto& s : k_daemonsets) {
        if (name == s.name) {
            return &s;
        }
    }
    for (const auto& s : k_daemonsets) {
        if (label(ds, s.label_key) == s.label_value) {
            return &s;
        }
    }
    return nullptr;
}

// The field managers of an object's managedFields.
std::set<std::string> managers(const Value& o) {
    std::set<std::string> out;
    if (const Value* mf = doc::find_path(o, "metadata");
        mf != nullptr && mf->contains("managedFields")) {
        for (const auto& m : (*mf)["managedFields"]) {
            if (m.is_object() && m.contains("manager") && m["manager"].is_string()) {
                out.insert(m["manager"].get<std::string>());
            }
        }
    }
    return out;
}

bool has_annotation(const Value& o, std::string_view key) {
    const Value* a = doc::find_path(o, "metadata.annotations");
    return a != nullptr && a->is_object() && a->contains(std::string(key));
}

// An annotation whose value is Talos's manifest inventory marker (reference §1.1).
bool talos_inventory(const Value& o) {
    const Value* a = doc::find_path(o, "metadata.annotations");
    if (a == nullptr || !a->is_object()) {
        return false;
    }
    return std::any_of(a->begin(), a->end(), [](const Value& v) {
        return v.is_string() && v.get<std::string>() == "talos-bootstrap-manifests-inventory";
    });
}

struct Found {
    std::vector<std::string> cnis; // in order of first evidence, no duplicates
    std::vector<Evidence> evidence;
    void add(std::string_view cni, Evidence e) {
        if (std::find(cnis.begin(), cnis.end(), cni) == cnis.end()) {
            cnis.emplace_back(cni);
        }
        evidence.push_back(std::move(e));
    }
};

// The CNIs a manifest text delivers (its DaemonSets), or none when it does not parse.
std::vector<std::string> manifest_cnis(std::string_view text) {
    std::vector<std::string> out;
    auto docs = doc::parse_documents(text, "inline manifest");
    if (!docs.ok()) {
        return out;
    }
    for (const auto& d : *docs) {
        if (d.is_object() && d.value("kind", "") == "DaemonSet") {
            if (const Signature* s = match_daemonset(d)) {
                if (std::find(out.begin(), out.end(), s->cni) == out.end()) {
                    out.emplace_back(s->cni);
                }
            }
        }
    }
    return out;
}

bool url_names(std::string_view url, std::string_view cni) {
    return util::to_lower(url).find(cni) != std::string::npos;
}

struct PlaneFacts {
    std::string cni_name; // flannel, custom, none
    std::vector<std::string> urls;
};

// Reads one control plane's CNI settings and manifests into `found`.
// The plane's CNI name (and its CNI URLs), as Talos reads it at the plane's version.
void read_cni_name(const ControlPlane& cp, const Value* network, const std::string& where,
                   Found& found, PlaneFacts& f) {
    if (cp.config.typed("KubeFlannelCNIConfig") != nullptr) {
        f.cni_name = "flannel";
        found.add("flannel", {where, "KubeFlannelCNIConfig", "present"});
    } else if (network != nullptr) {
        f.cni_name = doc::get_string(*network, "cni.name", "flannel");
        bool set = doc::find_path(*network, "cni.name") != nullptr;
        if (f.cni_name == "flannel") {
            found.add("flannel", {where, "cluster.network.cni.name",
                                  set ? "flannel" : "(unset: Talos's default, flannel)"});
        }
        if (const Value* urls = doc::find_path(*network, "cni.urls"); urls && urls->is_array()) {
            for (const auto& u : *urls) {
                if (u.is_string()) {
                    f.urls.push_back(u.get<std::string>());
                }
            }
        }
    } else {
        f.cni_name = cp.talos_1_14 ? "none" : "flannel";
        if (!cp.talos_1_14) {
            found.add("flannel",
                      {where, "cluster.network", "(absent: Talos before 1.14 runs flannel)"});
        }
    }
}

PlaneFacts read_plane(const ControlPlane& cp, Found& found, std::vector<std::string>& manifests,
                      std::vector<std::string>& cilium_inline) {
    PlaneFacts f;
    std::string where = "node " + cp.node + " machine configuration";
    const Value* v1 = cp.config.v1alpha1();
    const Value* cluster = v1 != nullptr ? doc::find_path(*v1, "cluster") : nullptr;
    const Value* network = cluster != nullptr ? doc::find_path(*cluster, "network") : nullptr;
    read_cni_name(cp, network, where, found, f);
    auto inline_manifest = [&](const std::string& name, const std::string& field,
                               std::string_view text) {
        for (const auto& cni : manifest_cnis(text)) {
            found.add(cni, {where, field, "manifest " + name + " holds the " + cni + " DaemonSet"});
            if (std::find(manifests.begin(), manifests.end(), name) == manifests.end()) {
                manifests.push_back(name);
            }
            if (cni == "cilium" && std::find(cilium_inline.begin(), cilium_inline.end(), name) ==
                                       cilium_inline.end()) {
                cilium_inline.push_back(name);
            }
        }
    };
    if (cluster != nullptr) {
        if (const Value* im = doc::find_path(*cluster, "inlineManifests"); im && im->is_array()) {
            for (std::size_t i = 0; i < im->size(); ++i) {
                inline_manifest(doc::get_string((*im)[i], "name"),
                                "cluster.inlineManifests[" + std::to_string(i) + "].contents",
                                doc::get_string((*im)[i], "contents"));
            }
        }
        if (const Value* em = doc::find_path(*cluster, "extraManifests"); em && em->is_array()) {
            for (const auto& u : *em) {
                if (u.is_string()) {
                    f.urls.push_back(u.get<std::string>());
                }
            }
        }
    }
    for (const auto& d : cp.config.documents) {
        std::string kind = d.is_object() ? d.value("kind", "") : "";
        if (kind == "KubeInlineManifestConfig") {
            std::string name = doc::get_string(d, "name");
            inline_manifest(name, "KubeInlineManifestConfig " + name + " manifest",
                            doc::get_string(d, "manifest"));
        } else if (kind == "KubeExternalManifestConfig") {
            f.urls.push_back(doc::get_string(d, "url"));
        }
    }
    for (const auto& url : f.urls) {
        for (std::string_view cni : {"cilium", "calico", "flannel"}) {
            if (url_names(url, cni)) {
                found.add(cni, {where, "extra manifest URL", url});
                if (std::find(manifests.begin(), manifests.end(), url) == manifests.end()) {
                    manifests.push_back(url);
                }
            }
        }
    }
    return f;
}

// Node readiness: {ready, not ready for the network, not ready otherwise}.
struct NodeCounts {
    int ready = 0;
    int network = 0;
    int other = 0;
};

NodeCounts count_nodes(const std::vector<Value>& nodes, std::vector<Evidence>& evidence) {
    NodeCounts n;
    for (const auto& node : nodes) {
        const Value* conds = doc::find_path(node, "status.conditions");
        std::string status = "Unknown";
        std::string message;
        if (conds != nullptr && conds->is_array()) {
            for (const auto& c : *conds) {
                if (c.value("type", "") == "Ready") {
                    status = c.value("status", "Unknown");
                    message = c.value("message", "");
                }
            }
        }
        if (status == "True") {
            ++n.ready;
            evidence.push_back({object_name("Node", node), "status.conditions[Ready]", "True"});
        } else if (message.find("NetworkPluginNotReady") != std::string::npos) {
            ++n.network;
            evidence.push_back({object_name("Node", node), "status.conditions[Ready].message",
                                "NetworkPluginNotReady"});
        } else {
            ++n.other;
            evidence.push_back(
                {object_name("Node", node), "status.conditions[Ready]", status + ": " + message});
        }
    }
    return n;
}

bool before_1_14(const std::vector<ControlPlane>& planes) {
    return !planes.empty() && std::none_of(planes.begin(), planes.end(),
                                           [](const ControlPlane& p) { return p.talos_1_14; });
}

// The Ready Nodes that flannel ran on: its kube subnet manager annotates each Node
// (flannel.alpha.coreos.com/...), and nothing removes the annotations when flannel goes.
std::vector<std::string> flannel_ran(const std::vector<Value>& nodes,
                                     std::vector<Evidence>& evidence) {
    std::vector<std::string> out;
    for (const auto& node : nodes) {
        const Value* a = doc::find_path(node, "metadata.annotations");
        bool ready = false;
        if (const Value* conds = doc::find_path(node, "status.conditions");
            conds != nullptr && conds->is_array()) {
            for (const auto& c : *conds) {
                ready =
                    ready || (c.value("type", "") == "Ready" && c.value("status", "") == "True");
            }
        }
        if (!ready || a == nullptr || !a->is_object()) {
            continue;
        }
        for (auto it = a->begin(); it != a->end(); ++it) {
            if (it.key().starts_with("flannel.alpha.coreos.com/")) {
                out.push_back(doc::get_string(node, "metadata.name"));
                evidence.push_back({object_name("Node", node), "metadata.annotations",
                                    it.key() + " (flannel ran on this node)"});
                break;
            }
        }
    }
    return out;
}

void cilium_install(Detection& d, const ClusterObjects& objects, const Value* agent) {
    std::vector<const Value*> cilium_objects;
    if (agent != nullptr) {
        cilium_objects.push_back(agent);
    }
    for (const auto& dep : objects.deployments) {
        if (doc::get_string(dep, "metadata.name") == "cilium-operator") {
            cilium_objects.push_back(&dep);
        }
    }
    if (d.release) {
        d.evidence.push_back(
            {"Secret " + d.release->namespace_name + "/" + d.release->secret_name, "data.release",
             "release " + d.release->name + " revision " + std::to_string(d.release->revision) +
                 ", chart " + d.release->chart_name + " " + d.release->chart_version + ", " +
                 (d.release->has_values() ? "with values" : "no values")});
        d.install = CiliumInstall::HelmRecord;
        for (const Value* o : cilium_objects) {
            for (const auto& m : managers(*o)) {
                if (m == "cilium" || m == "cilium-cli") {
                    d.install = CiliumInstall::CiliumCli;
                    d.evidence.push_back({object_name(o->value("kind", ""), *o),
                                          "metadata.managedFields[].manager", m});
                }
            }
        }
        return;
    }
    if (!d.manifests.empty()) {
        d.install = CiliumInstall::InlineManifest;
        return;
    }
    for (const Value* o : cilium_objects) {
        auto ms = managers(*o);
        if (ms.count("talos") != 0 || talos_inventory(*o)) {
            d.install = CiliumInstall::InlineManifest;
            d.evidence.push_back({object_name(o->value("kind", ""), *o),
                                  "metadata.managedFields[].manager", "talos"});
            return;
        }
    }
    for (const Value* o : cilium_objects) {
        if (has_annotation(*o, "kubectl.kubernetes.io/last-applied-configuration")) {
            d.install = CiliumInstall::ManifestApply;
            d.evidence.push_back({object_name(o->value("kind", ""), *o), "metadata.annotations",
                                  "kubectl.kubernetes.io/last-applied-configuration"});
            return;
        }
    }
    d.install = CiliumInstall::Unknown;
}

} // namespace

std::string_view cni_name(Cni c) {
    switch (c) {
    case Cni::Cilium:
        return "cilium";
    case Cni::Flannel:
        return "flannel";
    case Cni::Calico:
        return "calico";
    case Cni::Other:
        return "other";
    case Cni::None:
        return "none";
    case Cni::Several:
        return "several";
    }
    return "?";
}

std::string_view install_name(CiliumInstall i) {
    switch (i) {
    case CiliumInstall::HelmRecord:
        return "helm";
    case CiliumInstall::CiliumCli:
        return "the cilium CLI";
    case CiliumInstall::InlineManifest:
        return "a Talos manifest (helm template)";
    case CiliumInstall::ManifestApply:
        return "kubectl apply (helm template)";
    case CiliumInstall::Unknown:
        return "an unknown method (no release record)";
    }
    return "?";
}

std::string Detection::summary() const {
    switch (cni) {
    case Cni::None:
        return "no CNI";
    case Cni::Several:
        return "several CNIs: " + name;
    case Cni::Cilium: {
        std::string s = "cilium, installed by " + std::string(install_name(install));
        if (release) {
            s += " (release record " + release->secret_name + " " +
                 (release->has_values() ? "with values" : "without values") + ")";
        }
        return s;
    }
    default:
        return name;
    }
}

// The CNIs' DaemonSets: each a piece of evidence; Cilium's agent, or nullptr.
const Value* scan_daemonsets(const ClusterObjects& objects, Found& found) {
    const Value* agent = nullptr;
    for (const auto& ds : objects.daemonsets) {
        if (const Signature* s = match_daemonset(ds)) {
            bool by_name = doc::get_string(ds, "metadata.name") == s->name;
            found.add(s->cni,
                      {object_name("DaemonSet", ds),
                       by_name ? "metadata.name" : "metadata.labels." + std::string(s->label_key),
                       by_name ? std::string(s->name) : std::string(s->label_value)});
            if (s->cni == "cilium" && agent == nullptr) {
                agent = &ds;
            }
        }
    }
    return agent;
}

// The CNIs' ConfigMaps: each a piece of evidence; Cilium's configuration, or nullptr.
const Value* scan_configmaps(const ClusterObjects& objects, Found& found) {
    const Value* cilium_config = nullptr;
    for (const auto& cm : objects.configmaps) {
        std::string name = doc::get_string(cm, "metadata.name");
        for (const auto& [cni, cm_name] : k_configmaps) {
            if (name == cm_name) {
                found.add(cni, {object_name("ConfigMap", cm), "metadata.name", name});
                if (cni == "cilium") {
                    cilium_config = &cm;
                }
            }
        }
    }
    return cilium_config;
}

// No CNI's object found: flannel's leftovers, another CNI, or none at all.
Detection without_cni(Detection d, const ClusterObjects& objects,
                      const std::vector<ControlPlane>& planes, bool all_none, bool any_custom) {
    NodeCounts n = count_nodes(objects.nodes, d.evidence);
    if (!any_custom && all_none && n.ready > 0 && before_1_14(planes)) {
        d.leftover_nodes = flannel_ran(objects.nodes, d.evidence);
    }
    if (!d.leftover_nodes.empty()) {
        d.cni = Cni::Other;
        d.name = "none, with flannel's CNI configuration left on the nodes";
        return d;
    }
    if (any_custom || n.ready > 0 || n.other > 0 || (!all_none && !planes.empty())) {
        d.cni = Cni::Other;
        d.name = any_custom ? "custom (cluster.network.cni.urls)" : "unrecognised";
        return d;
    }
    d.cni = Cni::None;
    d.name = "none";
    return d;
}

Result<Detection> detect(const ClusterObjects& objects, const std::vector<ControlPlane>& planes,
                         const RecordLimits& limits) {
    Found found;
    Detection d;
    const Value* agent = scan_daemonsets(objects, found);
    const Value* cilium_config = scan_configmaps(objects, found);
    bool all_none = !planes.empty();
    bool any_custom = false;
    for (const auto& cp : planes) {
        PlaneFacts f = read_plane(cp, found, d.manifests, d.inline_manifests);
        all_none = all_none && f.cni_name == "none";
        any_custom = any_custom || f.cni_name == "custom";
        if (f.cni_name != "flannel") {
            d.evidence.push_back({"node " + cp.node + " machine configuration",
                                  "cluster.network.cni.name", f.cni_name});
        }
    }
    auto release = current_release(objects.secrets, "cilium", limits);
    if (!release.ok()) {
        return release.error();
    }
    d.release = std::move(*release);
    if (d.release &&
        std::find(found.cnis.begin(), found.cnis.end(), "cilium") == found.cnis.end()) {
        found.add("cilium", {"Secret " + d.release->namespace_name + "/" + d.release->secret_name,
                             "type", "helm.sh/release.v1 of chart cilium"});
    }
    d.evidence.insert(d.evidence.begin(), found.evidence.begin(), found.evidence.end());
    d.name = util::join(found.cnis, ", ");
    if (found.cnis.size() > 1) {
        d.cni = Cni::Several;
        return d;
    }
    if (found.cnis.empty()) {
        return without_cni(std::move(d), objects, planes, all_none, any_custom);
    }
    const std::string& only = found.cnis.front();
    d.cni = only == "cilium"    ? Cni::Cilium
            : only == "flannel" ? Cni::Flannel
            : only == "calico"  ? Cni::Calico
                                : Cni::Other;
    if (d.cni != Cni::Cilium) {
        return d;
    }
    d.namespace_name = agent != nullptr ? doc::get_string(*agent, "metadata.namespace") : "";
    if (cilium_config != nullptr) {
        d.ipam_mode = doc::get_string(*cilium_config, "data.ipam");
        d.evidence.push_back({object_name("ConfigMap", *cilium_config), "data.ipam", d.ipam_mode});
    }
    cilium_install(d, objects, agent);
    return d;
}

} // namespace ichor::cni
