// The cluster-wide checks of a whole-cluster plan, and the TalosCluster built from its nodes.
#include "common/cni/values.h"
#include "common/doc/vocabulary.h"
#include "common/drift/drift.h"
#include "common/inspection/view.h"
#include "common/render/render.h"
#include "common/stages/cluster_plan.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/stages/plan_cluster.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>
#include <set>

namespace ichor::stages::cluster_plan {

using inspection::View;

namespace member = inspection::field::member;

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
                       vocab::code::k_node_not_read,
                       "kubectl ichor inspect " + n.address + " --talosconfig FILE", &item);
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
                   vocab::code::k_no_control_plane,
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
                   vocab::code::k_cluster_ids,
                   "adopt each cluster on its own: kubectl ichor adopt --nodes ...");
    }
    if (by_version.size() > 1) {
        std::vector<std::string> groups;
        for (const auto& [ver, ns] : by_version) {
            groups.push_back((ver.empty() ? std::string("unknown") : ver) + " on " +
                             addresses_of(ns));
        }
        refuse.add("the nodes run more than one Talos version: " + util::join(groups, "; "),
                   vocab::code::k_talos_versions,
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
                       vocab::code::k_unknown_talos_version, "upgrade kubectl-ichor");
        } else if (m < 12) {
            refuse.add(addresses_of(ns) + ": run" + (ns.size() == 1 ? "s" : "") + " Talos " + ver +
                           "; adoption needs Talos v1.12 or later",
                       vocab::code::k_talos_too_old,
                       "talosctl upgrade --nodes " + addresses_of(ns) +
                           " --image ghcr.io/siderolabs/installer:v1.12.11");
        } else if (supported_kubernetes(m).first == 0) {
            refuse.add("Talos version \"" + ver + "\" of " + addresses_of(ns) +
                           " is unknown to this release (it knows v1.12, v1.13 and v1.14)",
                       vocab::code::k_unknown_talos_version, "upgrade kubectl-ichor");
        }
    }
    for (const auto& n : nodes) {
        const Value* cas = at(*n.item, inspection::field::k_accepted_cas.dotted);
        if (cas != nullptr && cas->is_array() && !cas->empty()) {
            refuse.add(n.address +
                           ": a Talos CA rotation is under way (machine.acceptedCAs holds " +
                           std::to_string(cas->size()) +
                           " CA(s) besides machine.ca); the bundle would not stay valid",
                       vocab::code::k_ca_rotation,
                       "finish the rotation first (talosctl rotate-ca), then adopt", n.item);
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
                       vocab::code::k_etcd_unhealthy,
                       "talosctl -n " + n->address + " service etcd; adopt once it is healthy",
                       n->item);
        } else if (members == nullptr && v.etcd_members() != nullptr) {
            members = v.etcd_members();
        }
    }
    if (members == nullptr) {
        refuse.add("etcd has no quorum: no control plane answered the etcd member list (" +
                       addresses_of(cps) + ")",
                   vocab::code::k_no_quorum,
                   "talosctl -n " + cps.front()->address + " etcd members");
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
                   vocab::code::k_etcd_members,
                   "name every control plane with --nodes, or remove the stale member: "
                   "talosctl -n " +
                       cps.front()->address + " etcd remove-member ID");
    }
    if (!outside.empty()) {
        refuse.add("control plane(s) " + addresses_of(outside) + " are not etcd members",
                   vocab::code::k_etcd_members,
                   "talosctl -n " + outside.front()->address + " etcd members");
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
                   vocab::code::k_no_quorum, "restore etcd before adopting (talosctl etcd status)");
    }
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
                   vocab::code::k_ichor_api_not_served,
                   "install Ichor's CRDs first: kubectl apply -f deploy/crds/ (from the Ichor "
                   "release), or install Ichor with its Helm chart");
    }
    const KubeNodeIndex kube_nodes(o.kube_nodes);
    for (const auto& n : nodes) {
        const Value* k = kube_node_of(n, kube_nodes);
        if (k == nullptr) {
            refuse.add(n.address + " (" + n.hostname +
                           "): the cluster's Kubernetes API has no Node for it",
                       vocab::code::k_no_kubernetes_node,
                       "check that the kubeconfig is this cluster's: kubectl get nodes -o wide",
                       n.item);
        } else if (condition_status(*k, vocab::k_condition_ready) != "True" &&
                   !(o.cni.no_cni && network_not_ready(*k))) {
            refuse.add(n.address + ": Node " + text_at(*k, "metadata.name") +
                           " is NotReady; a cluster is adopted healthy",
                       vocab::code::k_node_not_ready,
                       "kubectl describe node " + text_at(*k, "metadata.name"), n.item);
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
                    vocab::code::k_members_capped);
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
                   vocab::code::k_nodes_missing,
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
                   vocab::code::k_members_missing,
                   "name every node of the cluster: kubectl ichor adopt --nodes " +
                       node_list_flag(nodes) + ",...");
    }
    if (!strangers.empty()) {
        refuse.add("address(es) " + util::join(strangers, ", ") +
                       " are not members of the cluster by Talos discovery",
                   vocab::code::k_not_members, "talosctl get members; drop them from --nodes");
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
                        vocab::code::k_cni_detected);
    }
    if (!c.refusal.empty()) {
        refuse.add(c.refusal, c.refusal_code.empty() ? vocab::code::k_cni_refused : c.refusal_code,
                   c.refusal_hint);
        return;
    }
    if (c.preset.empty()) {
        refuse.add("the CNI of the cluster is not decided", vocab::code::k_cni_undecided,
                   "rerun with --cni-unmanaged (spec.cni.preset: unmanaged, immutable)");
        return;
    }
    for (const auto& n : c.notes) {
        Value tags = Value::object();
        if (n.find("(class B)") != std::string::npos) {
            tags[std::string(vocab::k_tag_class)] = "B"; // the user consents to it
        }
        list.add_result(doc::Severity::Info, "cni: " + n, std::string(vocab::code::k_cni_plan),
                        nullptr, tags);
    }
    if (!c.values_source.empty() && c.values_source != "none") {
        list.add_result(
            doc::Severity::Info,
            "cni: spec.cni.cilium.values from " + c.values_source + ": " +
                (c.values.is_object() && !c.values.empty() ? c.values.dump() : std::string("{}")),
            std::string(vocab::code::k_cilium_values));
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
        if (r["tags"].value(std::string(vocab::k_tag_code), "") != vocab::code::k_cilium_diff) {
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
                        vocab::code::k_cilium_preflight);
    } else if (!c.accept_diff) {
        refuse.add("cni: the live Cilium differs from Ichor's render in " + std::to_string(diffs) +
                       " value(s) (above); " + std::string(vocab::k_nothing_written),
                   vocab::code::k_cilium_diff_refused,
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

namespace {

// Whether the node holds each of its mirrors as a RegistryMirrorConfig document (the layout of
// contracts 1.12 and later, which the render writes), not in v1alpha1's machine.registries.
bool mirrors_as_documents(const Node& n, const Value& mirrors) {
    const Value* docs = View(*n.item).config();
    if (docs == nullptr || !docs->is_array()) {
        return false;
    }
    for (auto it = mirrors.begin(); it != mirrors.end(); ++it) {
        bool found = false;
        for (const auto& d : *docs) {
            found = found || (d.is_object() && d.value("kind", "") == "RegistryMirrorConfig" &&
                              d.value("name", "") == it.key());
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

} // namespace

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
    // Registry mirrors that every node has alike, each as the RegistryMirrorConfig document Ichor
    // renders it in, are the cluster's; any other is class A drift of the nodes that have it, kept
    // in their own layout (docs/drift-rules.md, "Layout moves").
    const Value* mirrors = at(nodes.front().facts, "machine.registries.mirrors");
    bool common = mirrors != nullptr && mirrors->is_object() && !mirrors->empty();
    for (const auto& n : nodes) {
        const Value* m = at(n.facts, "machine.registries.mirrors");
        common = common && m != nullptr && *m == *mirrors && mirrors_as_documents(n, *m);
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

} // namespace ichor::stages::cluster_plan

namespace ichor::stages {

// Kept in step with what the checks above read of a Node (KubeNodeIndex: the name and the
// InternalIP addresses; check_kubernetes and network_not_ready: the conditions;
// kubernetes_version: the kubelet's version).
doc::Value plan_node_fields(const doc::Value& node) {
    using cluster_plan::at;
    if (!node.is_object()) {
        return node;
    }
    doc::Value out = doc::Value::object();
    for (const char* key : {"apiVersion", "kind"}) {
        if (node.contains(key)) {
            out[key] = node[key];
        }
    }
    if (const doc::Value* name = at(node, "metadata.name"); name != nullptr) {
        out["metadata"]["name"] = *name;
    }
    const doc::Value* status = at(node, "status");
    for (const char* key : {"addresses", "conditions", "nodeInfo"}) {
        if (status != nullptr && status->is_object() && status->contains(key)) {
            out["status"][key] = (*status)[key];
        }
    }
    return out;
}

} // namespace ichor::stages
