#include "common/stages/plan_cluster.h"

#include "common/cni/values.h"
#include "common/doc/vocabulary.h"
#include "common/drift/drift.h"
#include "common/inspection/view.h"
#include "common/render/render.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>
#include <set>

namespace ichor::stages {

using doc::Value;
using inspection::View;

namespace {

namespace member = inspection::field::member;

// One node of the cluster, as the plan sees it.
struct Node {
    const Value* item = nullptr;
    std::string address; // as given
    std::string hostname;
    std::string role; // controlplane or worker
    Value facts;      // drift::normalize of its configuration
};

struct Refusals {
    doc::ResourceList& list;
    int count = 0;
    void add(const std::string& message, const std::string& code, const std::string& hint,
             const Value* ref = nullptr) {
        Value tags = Value::object();
        if (!hint.empty()) {
            tags[std::string(vocab::k_tag_hint)] = hint;
        }
        list.add_result(doc::Severity::Error, message + (hint.empty() ? "" : "; hint: " + hint),
                        code, ref, tags);
        ++count;
    }
};

const Value* at(const Value& v, std::string_view dotted) {
    return doc::find_path(v, std::string(dotted));
}

std::string text_at(const Value& v, std::string_view dotted) {
    const Value* x = at(v, dotted);
    return x != nullptr && x->is_string() ? x->get<std::string>() : std::string();
}

std::string minor_of(const std::string& version) {
    auto parts = util::split(version.starts_with('v') ? version.substr(1) : version, '.');
    return parts.size() >= 2 ? parts[0] + "." + parts[1] : std::string();
}

std::string addresses_of(const std::vector<const Node*>& nodes) {
    std::vector<std::string> out;
    for (const auto* n : nodes) {
        out.push_back(n->address);
    }
    return util::join(out, ", ");
}

std::string node_list_flag(const std::vector<Node>& nodes) {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
        out.push_back(n.address);
    }
    return util::join(out, ",");
}

// Nodes that could not be read as configured members of a cluster stop the whole cluster: an
// adoption must see every machine it takes over.
bool read_nodes(doc::ResourceList& list, std::vector<Node>& nodes, Refusals& refuse) {
    for (const auto& item : list.items) {
        const View v(item);
        if (!v.is_inspection()) {
            continue;
        }
        Node n;
        n.item = &item;
        n.address = v.node();
        n.hostname = v.hostname();
        const std::string role = v.role();
        n.role = role == "controlplane" || role == "init" ? "controlplane"
                 : role == "worker" || role == "join"     ? "worker"
                                                          : std::string();
        if (v.mode() != inspection::field::mode::k_configured || v.config() == nullptr ||
            v.config()->empty()) {
            refuse.add(n.address + ": was not read as a configured node (mode " +
                           (v.mode().empty() ? std::string("unknown") : v.mode()) +
                           "); a whole-cluster adoption reads every node with the cluster's "
                           "os:admin talosconfig",
                       "NodeNotRead", "kubectl ichor inspect " + n.address + " --talosconfig FILE",
                       &item);
            nodes.push_back(std::move(n));
            continue;
        }
        std::vector<Value> docs(v.config()->begin(), v.config()->end());
        n.facts = drift::normalize(docs);
        nodes.push_back(std::move(n));
    }
    return !nodes.empty();
}

void check_identity(const std::vector<Node>& nodes, Refusals& refuse) {
    std::map<std::string, std::vector<const Node*>> by_id;
    std::map<std::string, std::vector<const Node*>> by_version;
    int control_planes = 0;
    for (const auto& n : nodes) {
        const View v(*n.item);
        by_id[v.cluster_id()].push_back(&n);
        by_version[v.talos_version()].push_back(&n);
        control_planes += n.role == "controlplane";
    }
    if (control_planes == 0) {
        refuse.add("no control plane among the nodes given (" + node_list_flag(nodes) +
                       "): a cluster is adopted from its control planes and workers together",
                   "NoControlPlane",
                   "name every node of the cluster: kubectl ichor adopt --nodes CP1,CP2,W1,... "
                   "--cni-unmanaged --plan");
    }
    if (by_id.size() > 1) {
        std::vector<std::string> groups;
        for (const auto& [id, ns] : by_id) {
            groups.push_back("cluster ID " + (id.empty() ? std::string("(none)") : id) + ": " +
                             addresses_of(ns));
        }
        refuse.add("the nodes belong to " + std::to_string(by_id.size()) +
                       " clusters: " + util::join(groups, "; "),
                   "ClusterIDs", "adopt each cluster on its own: kubectl ichor adopt --nodes ...");
    }
    if (by_version.size() > 1) {
        std::vector<std::string> groups;
        for (const auto& [ver, ns] : by_version) {
            groups.push_back((ver.empty() ? std::string("unknown") : ver) + " on " +
                             addresses_of(ns));
        }
        refuse.add("the nodes run more than one Talos version: " + util::join(groups, "; "),
                   "TalosVersions",
                   "upgrade every node to one version first (talosctl upgrade --nodes ...), "
                   "then adopt");
    }
    for (const auto& [ver, ns] : by_version) {
        const std::string minor = minor_of(ver);
        const auto dot = minor.find('.');
        const int m = dot == std::string::npos ? -1 : std::atoi(minor.c_str() + dot + 1);
        if (!minor.starts_with("1.") || m < 0) {
            refuse.add("Talos version \"" + ver + "\" of " + addresses_of(ns) +
                           " is unknown to this release (it knows v1.12, v1.13 and v1.14)",
                       "UnknownTalosVersion", "upgrade kubectl-ichor");
        } else if (m < 12) {
            refuse.add(addresses_of(ns) + ": run" + (ns.size() == 1 ? "s" : "") + " Talos " + ver +
                           "; adoption needs Talos v1.12 or later",
                       "TalosTooOld",
                       "talosctl upgrade --nodes " + addresses_of(ns) +
                           " --image ghcr.io/siderolabs/installer:v1.12.11");
        } else if (supported_kubernetes(m).first == 0) {
            refuse.add("Talos version \"" + ver + "\" of " + addresses_of(ns) +
                           " is unknown to this release (it knows v1.12, v1.13 and v1.14)",
                       "UnknownTalosVersion", "upgrade kubectl-ichor");
        }
    }
    for (const auto& n : nodes) {
        const Value* cas = at(*n.item, inspection::field::k_accepted_cas.dotted);
        if (cas != nullptr && cas->is_array() && !cas->empty()) {
            refuse.add(
                n.address + ": a Talos CA rotation is under way (machine.acceptedCAs holds " +
                    std::to_string(cas->size()) +
                    " CA(s) besides machine.ca); the bundle would not stay valid",
                "CARotation", "finish the rotation first (talosctl rotate-ca), then adopt", n.item);
        }
    }
}

// The etcd members every control plane lists must be exactly the control planes given, each
// healthy, with quorum.
void check_etcd(const std::vector<Node>& nodes, Refusals& refuse) {
    std::vector<const Node*> cps;
    for (const auto& n : nodes) {
        if (n.role == "controlplane") {
            cps.push_back(&n);
        }
    }
    if (cps.empty()) {
        return;
    }
    std::set<std::string> cp_hosts;
    for (const auto* n : cps) {
        cp_hosts.insert(n->hostname);
    }
    const Value* members = nullptr;
    std::vector<const Node*> unhealthy;
    for (const auto* n : cps) {
        const View v(*n->item);
        if (!v.etcd_problem().empty()) {
            unhealthy.push_back(n);
            refuse.add(n->address + ": its etcd member is not healthy (" + v.etcd_problem() + ")",
                       "EtcdUnhealthy",
                       "talosctl -n " + n->address + " service etcd; adopt once it is healthy",
                       n->item);
        } else if (members == nullptr && v.etcd_members() != nullptr) {
            members = v.etcd_members();
        }
    }
    if (members == nullptr) {
        refuse.add("etcd has no quorum: no control plane answered the etcd member list (" +
                       addresses_of(cps) + ")",
                   "NoQuorum", "talosctl -n " + cps.front()->address + " etcd members");
        return;
    }
    std::set<std::string> member_hosts;
    std::vector<std::string> strangers;
    for (const auto& m : *members) {
        const std::string host = m.value(member::k_hostname, "");
        member_hosts.insert(host);
        if (cp_hosts.count(host) == 0) {
            std::string urls;
            if (m.contains(member::k_peer_urls) && m[member::k_peer_urls].is_array() &&
                !m[member::k_peer_urls].empty()) {
                urls = " (" + m[member::k_peer_urls][0].get<std::string>() + ")";
            }
            strangers.push_back(host + urls);
        }
    }
    std::vector<const Node*> outside;
    for (const auto* n : cps) {
        if (member_hosts.count(n->hostname) == 0) {
            outside.push_back(n);
        }
    }
    if (!strangers.empty()) {
        refuse.add("etcd has members that are not among the control planes given: " +
                       util::join(strangers, ", "),
                   "EtcdMembers",
                   "name every control plane with --nodes, or remove the stale member: "
                   "talosctl -n " +
                       cps.front()->address + " etcd remove-member ID");
    }
    if (!outside.empty()) {
        refuse.add("control plane(s) " + addresses_of(outside) + " are not etcd members",
                   "EtcdMembers", "talosctl -n " + outside.front()->address + " etcd members");
    }
    const std::size_t total = member_hosts.size();
    std::size_t healthy = 0;
    for (const auto* n : cps) {
        healthy += member_hosts.count(n->hostname) != 0 &&
                   std::find(unhealthy.begin(), unhealthy.end(), n) == unhealthy.end();
    }
    if (total > 0 && healthy <= total / 2) {
        refuse.add("etcd has no quorum: " + std::to_string(healthy) + " of " +
                       std::to_string(total) + " members are healthy",
                   "NoQuorum", "restore etcd before adopting (talosctl etcd status)");
    }
}

std::string condition_of(const Value& obj, const std::string& type) {
    const Value* c = at(obj, "status.conditions");
    if (c == nullptr || !c->is_array()) {
        return {};
    }
    for (const auto& cond : *c) {
        if (cond.value("type", "") == type) {
            return cond.value("status", "");
        }
    }
    return {};
}

const Value* kube_node_of(const Node& n, const KubeNodeIndex& kube_nodes) {
    return kube_nodes.find(n.hostname, n.address);
}

void check_kubernetes(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                      Refusals& refuse) {
    if (!o.ichor_api_served) {
        refuse.add("the Ichor API is not served by the cluster's Kubernetes API (" +
                       (o.ichor_api_missing.empty() ? std::string("no ichor.maesh.dev/v1alpha1")
                                                    : o.ichor_api_missing) +
                       ")",
                   "IchorAPINotServed",
                   "install Ichor's CRDs first: kubectl apply -f deploy/crds/ (from the Ichor "
                   "release), or install Ichor with its Helm chart");
    }
    const KubeNodeIndex kube_nodes(o.kube_nodes);
    for (const auto& n : nodes) {
        const Value* k = kube_node_of(n, kube_nodes);
        if (k == nullptr) {
            refuse.add(n.address + " (" + n.hostname +
                           "): the cluster's Kubernetes API has no Node for it",
                       "NoKubernetesNode",
                       "check that the kubeconfig is this cluster's: kubectl get nodes -o wide",
                       n.item);
        } else if (condition_of(*k, "Ready") != "True" &&
                   !(o.cni.no_cni && network_not_ready(*k))) {
            refuse.add(n.address + ": Node " + text_at(*k, "metadata.name") +
                           " is NotReady; a cluster is adopted healthy",
                       "NodeNotReady", "kubectl describe node " + text_at(*k, "metadata.name"),
                       n.item);
        }
    }
}

// Above discovery's cap its Member list is partial: the nodes given are compared with the
// Kubernetes Node list instead (check_kubernetes found a Node for each node given; here every Node
// must be one of them). Says so in the plan (MembersCapped).
void check_nodes_instead(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                         doc::ResourceList& list, Refusals& refuse) {
    list.add_result(doc::Severity::Info,
                    "Talos discovery lists " + std::to_string(o.members->size()) +
                        " member(s), at its cap (" + std::to_string(k_discovery_member_cap) +
                        " members, " + std::to_string(k_discovery_endpoint_cap) +
                        " endpoints each), so its list may be partial: the nodes given were "
                        "compared with the Kubernetes Node list instead",
                    "MembersCapped");
    std::set<const Value*> matched;
    const KubeNodeIndex kube_nodes(o.kube_nodes);
    for (const auto& n : nodes) {
        matched.insert(kube_node_of(n, kube_nodes));
    }
    std::vector<std::string> missing;
    for (const auto& k : o.kube_nodes) {
        if (matched.count(&k) == 0) {
            missing.push_back(text_at(k, "metadata.name"));
        }
    }
    if (!missing.empty()) {
        refuse.add("the cluster's Kubernetes API lists Node(s) missing from the nodes given: " +
                       util::join(missing, ", "),
                   "NodesMissing",
                   "name every node of the cluster: kubectl ichor adopt --nodes " +
                       node_list_flag(nodes) + ",...");
    }
}

// Discovery's members must be exactly the nodes given (Omni only compares the counts).
void check_members(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                   doc::ResourceList& list, Refusals& refuse) {
    if (!o.members) {
        return;
    }
    if (members_capped(*o.members)) {
        check_nodes_instead(nodes, o, list, refuse);
        return;
    }
    std::set<std::string> given;
    for (const auto& n : nodes) {
        given.insert(n.address);
    }
    std::set<std::string> member_addresses;
    std::vector<std::string> missing;
    for (const auto& m : *o.members) {
        bool listed = false;
        for (const auto& a : m.addresses) {
            member_addresses.insert(a);
            listed = listed || given.count(a) != 0;
        }
        if (!listed) {
            missing.push_back(m.hostname + " (" + util::join(m.addresses, ", ") + ")");
        }
    }
    std::vector<std::string> strangers;
    for (const auto& a : given) {
        if (member_addresses.count(a) == 0) {
            strangers.push_back(a);
        }
    }
    if (!missing.empty()) {
        refuse.add("Talos discovery lists member(s) missing from the nodes given: " +
                       util::join(missing, ", "),
                   "MembersMissing",
                   "name every node of the cluster: kubectl ichor adopt --nodes " +
                       node_list_flag(nodes) + ",...");
    }
    if (!strangers.empty()) {
        refuse.add("address(es) " + util::join(strangers, ", ") +
                       " are not members of the cluster by Talos discovery",
                   "NotMembers", "talosctl get members; drop them from --nodes");
    }
}

// The CNI's results: what was found and from which evidence, decide's notes or refusal, and a
// takeover's preflight gate (docs/stream.md, "Plan of a cluster").
void check_cni(const ClusterCni& c, doc::ResourceList& list, Refusals& refuse) {
    if (!c.summary.empty()) {
        list.add_result(doc::Severity::Info,
                        "cni: detected " + c.summary +
                            (c.evidence.empty()
                                 ? std::string()
                                 : " (evidence: " + util::join(c.evidence, "; ") + ")"),
                        "CniDetected");
    }
    if (!c.refusal.empty()) {
        refuse.add(c.refusal, c.refusal_code.empty() ? "CniRefused" : c.refusal_code,
                   c.refusal_hint);
        return;
    }
    if (c.preset.empty()) {
        refuse.add("the CNI of the cluster is not decided", "CNIUndecided",
                   "rerun with --cni-unmanaged (spec.cni.preset: unmanaged, immutable)");
        return;
    }
    for (const auto& n : c.notes) {
        Value tags = Value::object();
        if (n.find("(class B)") != std::string::npos) {
            tags[std::string(vocab::k_tag_class)] = "B"; // the user consents to it
        }
        list.add_result(doc::Severity::Info, "cni: " + n, "CniPlan", nullptr, tags);
    }
    if (!c.values_source.empty() && c.values_source != "none") {
        list.add_result(
            doc::Severity::Info,
            "cni: spec.cni.cilium.values from " + c.values_source + ": " +
                (c.values.is_object() && !c.values.empty() ? c.values.dump() : std::string("{}")),
            "CiliumValues");
    }
    if (!c.preflight) {
        return;
    }
    const std::size_t first = list.results.size();
    cni::add_results(list, *c.preflight,
                     c.accept_diff ? doc::Severity::Warning : doc::Severity::Error);
    std::size_t diffs = 0;
    for (std::size_t i = first; i < list.results.size(); ++i) {
        Value& r = list.results[i];
        if (r["tags"].value(std::string(vocab::k_tag_code), "") != "CiliumDiff") {
            continue;
        }
        ++diffs;
        if (c.accept_diff) {
            r["tags"][std::string(vocab::k_tag_class)] = "B"; // listed for consent
        }
    }
    if (diffs == 0) {
        list.add_result(doc::Severity::Info,
                        "cni: the preflight finds no difference between the live Cilium and "
                        "Ichor's render with these values",
                        "CiliumPreflight");
    } else if (!c.accept_diff) {
        refuse.add("cni: the live Cilium differs from Ichor's render in " + std::to_string(diffs) +
                       " value(s) (above); " + std::string(vocab::k_nothing_written),
                   "CiliumDiffRefused",
                   "set them in a values file (--cilium-values FILE), or accept the "
                   "differences with --accept-cilium-diff");
    }
}

bool valid_name(const std::string& s) {
    if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

Value string_list(const Value* v) {
    Value out = Value::array();
    if (v != nullptr && v->is_array()) {
        for (const auto& x : *v) {
            if (x.is_string()) {
                out.push_back(x);
            }
        }
    }
    return out;
}

// The version the kubelet image names ("v1.34.4"), else the Node's kubelet version.
std::string kubernetes_version(const Node& cp, const std::vector<Value>& kube_nodes) {
    std::string image = text_at(cp.facts, "machine.kubelet.image");
    if (auto colon = image.rfind(':');
        colon != std::string::npos && image.find('/', colon) == std::string::npos) {
        return image.substr(colon + 1);
    }
    const Value* k = kube_node_of(cp, KubeNodeIndex(kube_nodes));
    return k != nullptr ? text_at(*k, "status.nodeInfo.kubeletVersion") : std::string();
}

Value make_cluster(const std::string& name, const std::vector<Node>& nodes, const Node& cp,
                   const ClusterPlanOptions& o) {
    const View v(*cp.item);
    Value c = Value::object();
    c["apiVersion"] = std::string(doc::k_ichor_api);
    c["kind"] = "TalosCluster";
    c["metadata"]["name"] = name;
    c["metadata"]["namespace"] = o.ns;
    c["metadata"]["labels"][std::string(vocab::k_label_cluster)] = name;
    Value& spec = c["spec"];
    if (v.cluster_name() != name) {
        spec["clusterName"] = v.cluster_name();
    }
    spec["talosVersion"] = v.talos_version();
    std::string k8s = kubernetes_version(cp, o.kube_nodes);
    spec["kubernetesVersion"] = k8s.empty() || k8s.starts_with('v') ? k8s : "v" + k8s;
    spec["endpoint"] = v.endpoint();
    spec["versionContract"] =
        v.version_contract().empty() ? minor_of(v.talos_version()) : v.version_contract();
    int cps = 0;
    Value addresses = Value::array();
    for (const auto& n : nodes) {
        cps += n.role == "controlplane";
        addresses.push_back(n.address);
    }
    spec["controlPlane"]["count"] = cps;
    Value pods = string_list(at(cp.facts, "cluster.network.podSubnets"));
    Value services = string_list(at(cp.facts, "cluster.network.serviceSubnets"));
    if (!pods.empty()) {
        spec["network"]["podSubnets"] = pods;
    }
    if (!services.empty()) {
        spec["network"]["serviceSubnets"] = services;
    }
    // Registry mirrors that every node has alike are the cluster's; any other is class A drift
    // of the nodes that have it.
    const Value* mirrors = at(nodes.front().facts, "machine.registries.mirrors");
    bool common = mirrors != nullptr && mirrors->is_object() && !mirrors->empty();
    for (const auto& n : nodes) {
        const Value* m = at(n.facts, "machine.registries.mirrors");
        common = common && m != nullptr && *m == *mirrors;
    }
    if (common) {
        spec["registries"]["mirrors"] = *mirrors;
    }
    spec["discovery"]["addresses"] = addresses;
    spec["cni"]["preset"] = o.cni.preset;
    if (o.cni.values.is_object() && !o.cni.values.empty()) {
        spec["cni"]["cilium"]["values"] = o.cni.values;
    }
    if (!o.cni.inline_manifests.empty()) {
        spec["cni"]["cilium"]["inlineManifests"] = Value(o.cni.inline_manifests);
    }
    spec["secretsBundleRef"] = Value{{"name", bundle_secret_name(name)}, {"key", "bundle.yaml"}};
    return c;
}

Value make_secret(const std::string& name, const ClusterPlanOptions& o) {
    Value s = Value::object();
    s["apiVersion"] = "v1";
    s["kind"] = "Secret";
    s["metadata"]["name"] = bundle_secret_name(name);
    s["metadata"]["namespace"] = o.ns;
    s["metadata"]["labels"][std::string(vocab::k_label_cluster)] = name;
    s["metadata"]["annotations"][std::string(vocab::k_annotation_bundle_source)] = o.bundle_source;
    s["type"] = "Opaque";
    return s;
}

// "1.13" against "1.12": negative, zero or positive.
int compare_minors(const std::string& a, const std::string& b) {
    auto parse = [](const std::string& v) {
        auto parts = util::split(v, '.');
        return std::pair{parts.empty() ? 0 : std::atoi(parts[0].c_str()),
                         parts.size() < 2 ? 0 : std::atoi(parts[1].c_str())};
    };
    auto x = parse(a);
    auto y = parse(b);
    return x < y ? -1 : (x == y ? 0 : 1);
}

// The version contract the cluster's configuration was generated with: of the contracts this
// release renders, from the node's shape (machineconfig's probe: "1.12+" or one version) up to
// its Talos minor, the one whose render of the first control plane differs least from it; a tie
// goes to the newer.
std::string probe_contract(const Value& cluster_obj, const Node& cp, const ClusterPlanOptions& o) {
    const View v(*cp.item);
    const std::string talos_minor = minor_of(v.talos_version());
    const std::string probed = v.version_contract();
    std::vector<std::string> candidates;
    for (auto c : render::k_contracts) {
        const std::string k(c);
        const bool from_probe =
            probed.empty() || probed == k ||
            (probed.ends_with('+') && compare_minors(k, probed.substr(0, probed.size() - 1)) >= 0);
        if (from_probe && compare_minors(k, talos_minor) <= 0) {
            candidates.push_back(k);
        }
    }
    if (candidates.empty()) {
        return talos_minor;
    }
    std::string best = candidates.back();
    std::size_t fewest = SIZE_MAX;
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        Value tc = cluster_obj;
        tc["spec"]["versionContract"] = *it;
        auto spec = render::parse_cluster(tc);
        if (!spec) {
            continue;
        }
        render::Input in{&*spec, o.bundle, "controlplane", "", {}, "", {}};
        in.install.disk = v.install_disk();
        in.install.image = v.install_image();
        in.install.wipe = v.install_wipe();
        auto rendered = render::render(in);
        if (!rendered) {
            continue;
        }
        const std::size_t n = drift::diff(cp.facts, drift::normalize(*rendered)).size();
        if (n < fewest) {
            fewest = n;
            best = *it;
        }
    }
    return best;
}

// ---- Layers ---------------------------------------------------------------------------------

struct Planned {
    const Value* machine = nullptr; // the planned TalosMachine
    const Node* node = nullptr;
    render::Input input;
    const Value* live_facts = nullptr; // the node's (Node::facts), not a copy
    Value rendered_facts;
    std::vector<Value> rendered; // the documents, so that a capture goes where Talos holds it
    std::vector<drift::Change> class_a;
    std::set<std::string> others; // dotted paths of the class B (and consented) findings
    drift::Context ctx;           // the cluster's, with the node's Talos minor
};

drift::Context node_context(drift::Context ctx, const Node& n) {
    const std::string v = View(*n.item).talos_version();
    auto parts = util::split(v.starts_with('v') ? v.substr(1) : v, '.');
    if (parts.size() >= 2 && !parts[1].empty() &&
        std::all_of(parts[1].begin(), parts[1].end(),
                    [](char ch) { return ch >= '0' && ch <= '9'; })) {
        ctx.talos_minor = std::stoi(parts[1]);
    }
    return ctx;
}

std::string key_of(const drift::Change& c) {
    return c.dotted + "\x1f" + c.current.dump() + "\x1f" + c.proposed.dump();
}

Value make_patch(const std::string& name, const std::string& cluster, const std::string& layer,
                 const std::string& target, const std::string& text, const std::string& ns) {
    Value p = Value::object();
    p["apiVersion"] = std::string(doc::k_ichor_api);
    p["kind"] = "TalosConfigPatch";
    p["metadata"]["name"] = name;
    p["metadata"]["namespace"] = ns;
    p["metadata"]["labels"][std::string(vocab::k_label_cluster)] = cluster;
    p["spec"]["cluster"] = cluster;
    p["spec"]["layer"] = layer;
    if (layer == "role") {
        p["spec"]["role"] = target;
    } else if (layer == "machine") {
        p["spec"]["machine"] = target;
    }
    p["spec"]["order"] = 0;
    p["spec"]["patch"] = text;
    return p;
}

// The class A changes of every machine, placed where a person would write them: a change equal
// on every machine in the cluster layer, one equal on every machine of a role in that role's
// layer, the rest on the machine. A layer needs two machines or more to share a change.
struct Layering {
    std::vector<Value> patches;
    std::vector<Value> secrets;                  // the patches' credentials (credentials.h)
    std::vector<std::string> lines;              // what went where, for the plan's result
    std::map<std::string, std::string> where;    // machine + "\x1f" + dotted -> patch name
    std::map<std::string, std::string> layer_of; // patch name -> cluster, role or machine
    int cluster_patches = 0;
    int role_patches = 0;
    int machine_patches = 0;
};

// How many machines, of the cluster and of each role, share each class A change.
struct Shares {
    std::map<std::string, int> everywhere;                     // key -> machines
    std::map<std::string, std::map<std::string, int>> by_role; // role -> key -> machines
    std::map<std::string, int> role_size;
    int total = 0;

    explicit Shares(const std::vector<Planned>& planned) : total(static_cast<int>(planned.size())) {
        for (const auto& p : planned) {
            role_size[p.input.role]++;
            for (const auto& c : p.class_a) {
                everywhere[key_of(c)]++;
                by_role[p.input.role][key_of(c)]++;
            }
        }
    }
    bool in_cluster(const drift::Change& c) const {
        auto it = everywhere.find(key_of(c));
        return total >= 2 && it != everywhere.end() && it->second == total;
    }
    bool in_role(const std::string& role, const drift::Change& c) const {
        auto size = role_size.find(role);
        auto counts = by_role.find(role);
        if (size == role_size.end() || size->second < 2 || counts == by_role.end()) {
            return false;
        }
        auto it = counts->second.find(key_of(c));
        return it != counts->second.end() && it->second == size->second;
    }
};

std::string describe(const std::vector<drift::Change>& cs) {
    std::vector<std::string> paths;
    for (const auto& c : cs) {
        paths.push_back(c.dotted);
    }
    return util::join(paths, ", ");
}

std::vector<std::string> addresses_in(const std::vector<Planned>& planned,
                                      const std::string& role) {
    std::vector<std::string> a;
    for (const auto& p : planned) {
        if (role.empty() || p.input.role == role) {
            a.push_back(text_at(*p.machine, "spec.address"));
        }
    }
    return a;
}

// One layer's patch, captured from the machine `f` (every machine of the layer has the changes),
// with its credentials Secret when it carries any.
void add_patch(Layering& out, const Planned& f, const std::string& name, const std::string& layer,
               const std::string& target, const std::vector<drift::Change>& changes,
               const std::vector<std::string>& nodes, const std::string& cluster,
               const std::string& ns) {
    std::vector<Value> live;
    if (const Value* docs = View(*f.node->item).config(); docs != nullptr && docs->is_array()) {
        live.assign(docs->begin(), docs->end());
    }
    drift::Capture cap = drift::capture(changes, *f.live_facts, f.rendered_facts, f.rendered, live);
    Value patch = make_patch(name, cluster, layer, target, cap.text, ns);
    if (Value sec = attach_credentials(patch, cap.secrets, nodes); !sec.is_null()) {
        out.secrets.push_back(std::move(sec));
    }
    out.patches.push_back(std::move(patch));
    out.layer_of[name] = layer;
}

Layering layer(const std::vector<Planned>& planned, const std::string& cluster,
               const std::string& ns) {
    Layering out;
    const Shares shares(planned);
    // cluster layer: from the first machine that has the changes (all do)
    std::vector<drift::Change> cluster_changes;
    std::map<std::string, std::vector<drift::Change>> role_changes;
    std::map<std::string, const Planned*> role_first;
    for (const auto& p : planned) {
        role_first.try_emplace(p.input.role, &p);
    }
    for (const auto& c : planned.empty() ? std::vector<drift::Change>{} : planned.front().class_a) {
        if (shares.in_cluster(c)) {
            cluster_changes.push_back(c);
        }
    }
    for (const auto& [role, first] : role_first) {
        for (const auto& c : first->class_a) {
            if (!shares.in_cluster(c) && shares.in_role(role, c)) {
                role_changes[role].push_back(c);
            }
        }
    }
    if (!cluster_changes.empty()) {
        std::string name = cluster + "-adopted";
        add_patch(out, planned.front(), name, "cluster", "", cluster_changes,
                  addresses_in(planned, ""), cluster, ns);
        out.lines.push_back(name + " (cluster layer): " + describe(cluster_changes));
        out.cluster_patches++;
        for (const auto& p : planned) {
            for (const auto& c : cluster_changes) {
                out.where[p.input.machine + "\x1f" + c.dotted] = name;
            }
        }
    }
    for (const auto& [role, changes] : role_changes) {
        std::string name = cluster + "-" + role + "s-adopted";
        add_patch(out, *role_first[role], name, "role", role, changes, addresses_in(planned, role),
                  cluster, ns);
        out.lines.push_back(name + " (role " + role + "): " + describe(changes));
        out.role_patches++;
        for (const auto& p : planned) {
            for (const auto& c : changes) {
                if (p.input.role == role) {
                    out.where[p.input.machine + "\x1f" + c.dotted] = name;
                }
            }
        }
    }
    for (const auto& p : planned) {
        std::vector<drift::Change> own;
        for (const auto& c : p.class_a) {
            if (!shares.in_cluster(c) && !shares.in_role(p.input.role, c)) {
                own.push_back(c);
            }
        }
        if (own.empty()) {
            continue;
        }
        std::string machine = text_at(*p.machine, "metadata.name");
        std::string name = machine + "-adopted";
        add_patch(out, p, name, "machine", machine, own, {text_at(*p.machine, "spec.address")},
                  cluster, ns);
        out.lines.push_back(name + " (machine " + machine + "): " + describe(own));
        out.machine_patches++;
        for (const auto& c : own) {
            out.where[machine + "\x1f" + c.dotted] = name;
        }
    }
    return out;
}

// One class A change captured into a cluster or role patch, for all the nodes that have it.
struct CaptureGroup {
    Value result;
    std::vector<std::string> nodes;
    std::string layer;
    std::string role;
};

// "ADDRESS: PATH: the node has X, ..." -> "each node has X, ..." (the path and scope are put
// before it once the group is complete)
std::string for_all_nodes(const std::string& body, const std::string& node,
                          const std::string& path) {
    std::string rest = body.substr(std::min(body.size(), node.size() + 2));
    const std::string head = path + ": ";
    if (rest.starts_with(head)) {
        rest = rest.substr(head.size());
    }
    if (rest.starts_with("the node does not set it")) {
        rest = "no node sets it" + rest.substr(24);
    } else if (rest.starts_with("the node ")) {
        rest = "each node " + rest.substr(9);
    }
    return rest;
}

// "PATH on all 6 nodes: each node has X, ...; captured into TalosConfigPatch P (cluster layer)"
Value grouped_result(CaptureGroup& g, const std::string& lead) {
    const std::string path = text_at(g.result, "field.path");
    const std::string n = g.nodes.size() == 2 ? "both" : "all " + std::to_string(g.nodes.size());
    const std::string scope = g.layer == "cluster" ? n + " nodes" : n + " " + g.role + " nodes";
    std::string message = g.result.value("message", "");
    const auto at_lead = message.rfind(lead);
    const auto name_end = message.find(';', at_lead + lead.size());
    const std::string layer_text =
        g.layer == "cluster" ? " (cluster layer)" : " (role layer, " + g.role + ")";
    message.insert(name_end == std::string::npos ? message.size() : name_end, layer_text);
    g.result["message"] = path + " on " + scope + ": " + message;
    g.result["tags"][std::string(vocab::k_tag_nodes)] = util::join(g.nodes, ",");
    return std::move(g.result);
}

// The class A results name the machine's own capture; with layers they name the patch each
// change went into, and a change that went into a cluster or role patch is one result for all
// its nodes (its tag ichor.maesh.dev/nodes lists them; the values are the same on each, which is
// what put it in that layer), so that a setting on twelve nodes is one line, not twelve.
void group_captures(doc::ResourceList& list, const std::vector<Planned>& planned,
                    const Layering& layers) {
    std::map<std::string, std::string> machine_of; // address -> machine
    std::map<std::string, std::string> role_of;    // address -> role
    for (const auto& p : planned) {
        machine_of[text_at(*p.machine, "spec.address")] = p.input.machine;
        role_of[text_at(*p.machine, "spec.address")] = p.input.role;
    }
    const std::string lead = "; captured into TalosConfigPatch ";
    std::map<std::string, CaptureGroup> groups; // patch + "\x1f" + path
    std::vector<std::string> order;
    Value kept = Value::array();
    for (auto& r : list.results) {
        if (r["tags"].value(std::string(doc::k_tag_class), "") != "A") {
            kept.push_back(std::move(r));
            continue;
        }
        const std::string node = r["tags"].value(std::string(doc::k_tag_node), "");
        const std::string path = text_at(r, "field.path");
        auto m = machine_of.find(node);
        auto w = m == machine_of.end() ? layers.where.end()
                                       : layers.where.find(m->second + "\x1f" + path);
        std::string message = r.value("message", "");
        const auto at_lead = message.rfind(lead);
        if (w == layers.where.end() || at_lead == std::string::npos) {
            kept.push_back(std::move(r));
            continue;
        }
        // the note after the patch's name (a manifest's), kept
        const auto after = message.find(';', at_lead + lead.size());
        const std::string note = after == std::string::npos ? "" : message.substr(after);
        const std::string body = message.substr(0, at_lead);
        auto layer = layers.layer_of.find(w->second);
        if (layer == layers.layer_of.end() || layer->second == "machine") {
            r["message"] = body + lead + w->second + note;
            kept.push_back(std::move(r));
            continue;
        }
        const std::string key = w->second + "\x1f" + path;
        auto [g, fresh] = groups.try_emplace(key);
        if (fresh) {
            order.push_back(key);
            g->second.layer = layer->second;
            g->second.role = role_of[node];
            g->second.result = std::move(r);
            g->second.result["message"] =
                for_all_nodes(body, node, path) + lead + w->second + note; // scope added below
            g->second.result["tags"].erase(std::string(doc::k_tag_node));
            g->second.result.erase("resourceRef");
        }
        g->second.nodes.push_back(node);
    }
    for (const auto& key : order) {
        kept.push_back(grouped_result(groups[key], lead));
    }
    list.results = std::move(kept);
}

// Render every machine again with all the layers: no class A may remain, and nothing else may
// move. The problems, one per machine, or none.
std::vector<std::string> verify(const std::vector<Planned>& planned,
                                const std::vector<Value>& patches) {
    std::vector<std::string> problems;
    for (const auto& p : planned) {
        render::Input in = p.input;
        in.patches = patches;
        auto again = render::render(in);
        if (!again) {
            problems.push_back(in.machine + ": " + again.error().message);
            continue;
        }
        std::vector<std::string> left;
        for (const auto& c : drift::diff(*p.live_facts, drift::normalize(*again))) {
            auto v = drift::classify(c, p.ctx);
            if (v.cls == drift::Class::Ignored || p.others.count(c.dotted) != 0) {
                continue;
            }
            left.push_back(c.dotted);
        }
        if (!left.empty()) {
            problems.push_back(in.machine + ": " + util::join(left, ", "));
        }
    }
    return problems;
}

bool is_kind(const Value& item, std::string_view kind) {
    return item.value("kind", "") == kind && item.value("apiVersion", "") == doc::k_ichor_api;
}

// The earlier plan's own items (a plan planned again gives the same list).
void drop_planned(doc::ResourceList& list) {
    Value kept = Value::array();
    for (auto& item : list.items) {
        const bool ours =
            is_kind(item, "TalosMachine") || is_kind(item, "TalosConfigPatch") ||
            is_kind(item, "TalosCluster") || is_plan_basis(item) ||
            (item.value("kind", "") == "Secret" && item.value("apiVersion", "") == "v1");
        if (!ours) {
            kept.push_back(std::move(item));
        }
    }
    list.items = std::move(kept);
}

Outcome refused(const std::vector<Node>& nodes) {
    Outcome out;
    out.stopped = static_cast<int>(nodes.size());
    return out;
}

// The cluster-wide checks, before anything is rendered: the first control plane and the cluster's
// name, or nullptr when something refuses the cluster.
const Node* check_cluster(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                          doc::ResourceList& list, Refusals& refuse, std::string& name) {
    check_identity(nodes, refuse);
    check_etcd(nodes, refuse);
    check_kubernetes(nodes, o, refuse);
    check_members(nodes, o, list, refuse);
    const Node* cp = nullptr;
    for (const auto& n : nodes) {
        if (n.role == "controlplane" && cp == nullptr) {
            cp = &n;
        }
    }
    name = o.cluster;
    if (name.empty() && cp != nullptr) {
        name = View(*cp->item).cluster_name();
    }
    if (cp != nullptr && !valid_name(name)) {
        refuse.add("the cluster's name \"" + name +
                       "\" is not a valid TalosCluster name (a DNS-1123 label)",
                   "InvalidClusterName", "name the TalosCluster: --cluster NAME");
    }
    check_cni(o.cni, list, refuse);
    return refuse.count > 0 ? nullptr : cp;
}

// What plan() made of each machine, as --add-machine plans it, and the nodes it left out.
struct MachinePlans {
    doc::ResourceList items;            // the TalosMachines, patches, Secrets and plan basis
    std::vector<const Value*> machines; // the TalosMachines in items
    std::vector<const Node*> left_out;
    std::map<std::string, const Node*> by_uuid; // the last node of each UUID, as the scan found
};

// Each machine's drift against the new cluster (trust, versions, role, install fields, classes),
// one machine-layer capture each. False when a control plane is left out: its machines cannot be
// released without it, and nothing is written.
bool plan_machines(doc::ResourceList& list, const std::vector<Node>& nodes, const PlanOptions& po,
                   Refusals& refuse, MachinePlans& out, Outcome& failure) {
    out.items.items = list.items;
    Outcome planned = plan(out.items, po);
    if (planned.error) {
        failure = std::move(planned);
        return false;
    }
    // Its copies of the Inspections are read no more (`nodes` points into `list`): freed before
    // the layering, which holds every machine's render (on 1,000 nodes, tens of MB).
    Value kept = Value::array();
    for (auto& item : out.items.items) {
        if (!View(item).is_inspection()) {
            kept.push_back(std::move(item));
        }
    }
    out.items.items = std::move(kept);
    std::set<std::string> planned_uuids;
    for (const auto& item : out.items.items) {
        if (is_kind(item, "TalosMachine")) {
            out.machines.push_back(&item);
            planned_uuids.insert(util::to_lower(text_at(item, "spec.identity.uuid")));
        }
    }
    for (const auto& n : nodes) {
        std::string uuid = util::to_lower(View(*n.item).uuid());
        if (planned_uuids.count(uuid) == 0) {
            out.left_out.push_back(&n);
        }
        out.by_uuid[std::move(uuid)] = &n;
    }
    for (auto& r : out.items.results) {
        const std::string code = r["tags"].value(std::string(vocab::k_tag_code), "");
        if (code == "Plan" || code == "NothingToAdopt") {
            continue; // the per-machine summary; this plan has its own
        }
        list.results.push_back(r);
    }
    failure = refused(nodes);
    bool cp_blocked = false;
    for (const auto* n : out.left_out) {
        if (n->role == "controlplane") {
            cp_blocked = true;
            refuse.add(n->address + ": control plane " + n->hostname +
                           " is refused or blocked (see its results above), and a cluster is "
                           "not adopted "
                           "without all its control planes; " +
                           std::string(vocab::k_nothing_written),
                       "ControlPlaneBlocked", "change the node as its results say, then plan again",
                       n->item);
        }
    }
    return !cp_blocked;
}

// Each planned machine's render and its class A findings, the input of the layering.
std::vector<Planned> planned_work(const MachinePlans& mp, const render::ClusterSpec& spec,
                                  const ClusterPlanOptions& o) {
    drift::Context ctx{!spec.registry_mirrors.is_null(), spec.cni_preset, spec.cilium_manifests};
    std::vector<Planned> work;
    for (const Value* m : mp.machines) {
        Planned p;
        p.machine = m;
        if (auto it = mp.by_uuid.find(util::to_lower(text_at(*m, "spec.identity.uuid")));
            it != mp.by_uuid.end()) {
            p.node = it->second;
        }
        p.input.cluster = &spec;
        p.input.bundle = o.bundle;
        p.input.role = text_at(*m, "spec.role");
        p.input.machine = text_at(*m, "metadata.name");
        p.input.install.disk = text_at(*m, "spec.install.disk");
        p.input.install.image = text_at(*m, "spec.install.image");
        const Value* wipe = at(*m, "spec.install.wipe");
        p.input.install.wipe = wipe != nullptr && wipe->is_boolean() && wipe->get<bool>();
        auto rendered = render::render(p.input);
        if (p.node == nullptr || !rendered) {
            continue; // plan() already rendered it; cannot differ
        }
        p.live_facts = &p.node->facts;
        p.rendered_facts = drift::normalize(*rendered);
        p.rendered = std::move(*rendered);
        p.ctx = node_context(ctx, *p.node);
        for (auto& c : drift::diff(*p.live_facts, p.rendered_facts)) {
            auto v = drift::classify(c, p.ctx);
            if (v.cls == drift::Class::A) {
                p.class_a.push_back(std::move(c));
            } else if (v.cls != drift::Class::Ignored) {
                p.others.insert(c.dotted);
            }
        }
        work.push_back(std::move(p));
    }
    return work;
}

// The layered patches when they render every machine back to its live configuration, else the
// machines' own captures (each verified by plan(): always right, only less tidy).
void choose_patches(doc::ResourceList& list, const std::vector<Planned>& work,
                    const MachinePlans& mp, const std::string& name, const std::string& ns,
                    std::vector<Value>& patches, std::vector<Value>& credentials) {
    Layering layers = layer(work, name, ns);
    std::vector<std::string> problems = verify(work, layers.patches);
    if (!problems.empty()) {
        for (const auto& item : mp.items.items) {
            if (is_kind(item, "TalosConfigPatch")) {
                patches.push_back(item);
            } else if (is_credentials_secret(item)) {
                credentials.push_back(item);
            }
        }
        list.add_result(doc::Severity::Warning,
                        "the layered patches did not render every machine back to its live "
                        "configuration (" +
                            util::join(problems, "; ") +
                            "); one machine-layer patch per machine instead",
                        "LayersDidNotVerify");
        return;
    }
    patches = std::move(layers.patches);
    credentials = std::move(layers.secrets);
    group_captures(list, work, layers);
    if (layers.lines.empty()) {
        return;
    }
    auto count = [](int n, const char* what) {
        return std::to_string(n) + " " + what + (n == 1 ? "" : "es");
    };
    list.add_result(doc::Severity::Info,
                    "class A drift in " + count(layers.cluster_patches, "cluster-layer patch") +
                        ", " + count(layers.role_patches, "role-layer patch") + ", " +
                        count(layers.machine_patches, "machine-layer patch") + ": " +
                        util::join(layers.lines, "; "),
                    "Layers");
}

bool is_control_plane(const Value* m) {
    return text_at(*m, "spec.role") == "controlplane";
}

// The objects to create, in the order hold apply writes them: the bundle Secret, the cluster, the
// credentials before the patches that reference them, the control planes' machines first, and
// what the plan was made from (hold apply's stale check).
std::vector<Value> objects_in_order(Value cluster_obj, std::vector<Value> credentials,
                                    std::vector<Value> patches, const MachinePlans& mp,
                                    const std::string& name, const ClusterPlanOptions& o) {
    std::vector<Value> created;
    created.push_back(make_secret(name, o));
    created.push_back(std::move(cluster_obj));
    for (auto& c : credentials) {
        created.push_back(std::move(c));
    }
    for (auto& p : patches) {
        created.push_back(std::move(p));
    }
    std::vector<const Value*> ordered = mp.machines;
    std::stable_sort(ordered.begin(), ordered.end(), [](const Value* a, const Value* b) {
        return is_control_plane(a) > is_control_plane(b);
    });
    for (const Value* m : ordered) {
        created.push_back(*m);
    }
    for (const auto& item : mp.items.items) {
        if (is_plan_basis(item)) {
            created.push_back(item);
        }
    }
    return created;
}

// An existing TalosCluster of this name is a rerun only when this plan wrote it.
bool check_rerun(doc::ResourceList& list, const std::vector<Value>& created,
                 const std::string& name, const ClusterPlanOptions& o, Refusals& refuse) {
    if (o.existing_cluster == nullptr) {
        return true;
    }
    doc::ResourceList probe;
    probe.items = Value(created);
    const std::string digest = plan_digest(probe);
    const Value* a = at(*o.existing_cluster, "metadata.annotations");
    const std::string theirs = a != nullptr && a->is_object()
                                   ? a->value(std::string(vocab::k_annotation_plan_digest), "")
                                   : std::string();
    if (theirs != digest) {
        refuse.add("TalosCluster " + name + " already exists in namespace " + o.ns +
                       (theirs.empty() ? " and was not written by an adoption"
                                       : " from an adoption with another plan"),
                   "ClusterExists",
                   "add machines to it with kubectl ichor adopt --cluster " + name +
                       " --add-machine ADDRESS; an earlier adoption left held is removed with "
                       "kubectl ichor hold abort --cluster " +
                       name + "; or name another cluster with --cluster");
        return false;
    }
    list.add_result(doc::Severity::Info,
                    "TalosCluster " + name +
                        " exists from this plan: the adoption resumes (objects already "
                        "written are skipped, held machines are released)",
                    "Resume");
    return true;
}

void summarize(doc::ResourceList& list, const MachinePlans& mp, std::size_t patches,
               const std::string& name, const ClusterPlanOptions& o) {
    const auto cps = static_cast<std::size_t>(
        std::count_if(mp.machines.begin(), mp.machines.end(), is_control_plane));
    std::string summary = "plan: adopt cluster " + name + " (" + std::to_string(cps) +
                          " control plane(s), " + std::to_string(mp.machines.size() - cps) +
                          " worker(s)), " + std::to_string(patches) +
                          " TalosConfigPatch(es), the bundle " + o.bundle_source + " as Secret " +
                          bundle_secret_name(name) + ", spec.cni.preset " + o.cni.preset +
                          (o.cni.action.empty() ? std::string() : " (" + o.cni.action + ")");
    if (!mp.left_out.empty()) {
        summary += "; " + std::to_string(mp.left_out.size()) +
                   " worker(s) refused or blocked and left out: " + addresses_of(mp.left_out);
    }
    list.add_result(doc::Severity::Info, summary, "Plan");
}

Outcome nothing_to_adopt(doc::ResourceList& list) {
    list.add_result(doc::Severity::Error,
                    "no Inspection in the input: nothing to adopt; hint: kubectl ichor "
                    "adopt --talosconfig FILE --nodes ADDR,...",
                    "NothingToAdopt");
    Outcome out;
    out.stopped = 0;
    out.error =
        make_error(ErrorKind::Usage, "no node to adopt", "--nodes ADDR,...", "NothingToAdopt");
    return out;
}

// The phases of a whole-cluster plan: read the Inspections, check the cluster, build its
// TalosCluster, plan each machine, layer their captures, order the objects, check a rerun.
Outcome plan_whole(doc::ResourceList& list, const ClusterPlanOptions& o) {
    if (o.bundle == nullptr) {
        return failed(
            make_error(ErrorKind::Config, "plan_cluster: no secrets bundle", "", "NoBundle"));
    }
    drop_planned(list);
    Refusals refuse{list};
    std::vector<Node> nodes;
    if (!read_nodes(list, nodes, refuse)) {
        return nothing_to_adopt(list);
    }
    if (refuse.count > 0) {
        return refused(nodes); // a node that could not be read: nothing else can be judged
    }
    std::string name;
    const Node* cp = check_cluster(nodes, o, list, refuse, name);
    if (cp == nullptr) {
        return refused(nodes);
    }
    Value cluster_obj = make_cluster(name, nodes, *cp, o);
    cluster_obj["spec"]["versionContract"] = probe_contract(cluster_obj, *cp, o);
    auto spec = render::parse_cluster(cluster_obj);
    if (!spec) {
        refuse.add("the TalosCluster built from " + cp->address +
                       " cannot be rendered: " + spec.error().message,
                   "ClusterUnreadable", "kubectl ichor inspect " + cp->address + " -o yaml");
        return refused(nodes);
    }
    MachinePlans mp;
    Outcome failure;
    PlanOptions po{name, o.ns, false, &cluster_obj, o.bundle, {}, {}};
    if (!plan_machines(list, nodes, po, refuse, mp, failure)) {
        return failure;
    }
    std::vector<Value> patches;
    std::vector<Value> credentials;
    choose_patches(list, planned_work(mp, *spec, o), mp, name, o.ns, patches, credentials);
    const std::size_t patch_count = patches.size();
    std::vector<Value> created = objects_in_order(std::move(cluster_obj), std::move(credentials),
                                                  std::move(patches), mp, name, o);
    if (!check_rerun(list, created, name, o, refuse)) {
        return refused(nodes);
    }
    summarize(list, mp, patch_count, name, o);
    for (auto& c : created) {
        list.items.push_back(std::move(c));
    }
    Outcome out;
    out.done = static_cast<int>(mp.machines.size());
    out.stopped = static_cast<int>(mp.left_out.size());
    return out;
}

} // namespace

bool members_capped(const std::vector<DiscoveryMember>& members) {
    return members.size() >= static_cast<std::size_t>(k_discovery_member_cap) ||
           std::any_of(members.begin(), members.end(), [](const DiscoveryMember& m) {
               return m.addresses.size() >= static_cast<std::size_t>(k_discovery_endpoint_cap);
           });
}

bool network_not_ready(const Value& node) {
    const Value* c = at(node, "status.conditions");
    if (c == nullptr || !c->is_array()) {
        return false;
    }
    for (const auto& cond : *c) {
        if (cond.value("type", "") == "Ready") {
            return cond.value("status", "") == "False" &&
                   cond.value("message", "").find("NetworkPluginNotReady") != std::string::npos;
        }
    }
    return false;
}

ClusterCni decide_cni(const cni::ClusterObjects& objects,
                      const std::vector<cni::ControlPlane>& planes, const cni::CniFlags& flags,
                      bool accept_diff) {
    ClusterCni out;
    out.accept_diff = accept_diff;
    auto refused = [&out](const Error& e) {
        out.refusal = e.message;
        out.refusal_code = e.code;
        out.refusal_hint = e.hint;
        return out;
    };
    auto d = cni::detect(objects, planes);
    if (!d) {
        return refused(d.error());
    }
    out.summary = d->summary();
    for (const auto& e : d->evidence) {
        out.evidence.push_back(e.object + " " + e.field + "=" + e.value);
    }
    auto plan = cni::decide(*d, flags);
    if (!plan) {
        return refused(plan.error());
    }
    out.preset = plan->preset;
    out.action = std::string(cni::action_name(plan->action));
    out.values_source = std::string(cni::source_name(plan->source));
    out.notes = plan->notes;
    out.inline_manifests = plan->inline_manifests;
    out.no_cni = plan->action == cni::CniAction::Install;
    if (plan->action != cni::CniAction::Unmanaged) {
        out.values = cni::split_owned(plan->values).values;
    }
    if (plan->action == cni::CniAction::Takeover) {
        out.preflight = cni::preflight(cni::live_cilium(objects, d->namespace_name), plan->values);
    }
    return out;
}

std::string bundle_secret_name(const std::string& cluster) {
    return cluster + "-secrets";
}

Outcome plan_cluster(doc::ResourceList& list, const ClusterPlanOptions& o) {
    return run_stage("drift", list, [&] { return plan_whole(list, o); });
}

} // namespace ichor::stages
