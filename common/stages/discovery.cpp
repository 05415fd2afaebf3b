#include "common/stages/discovery.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/status.h"
#include "common/stages/trust.h"

namespace ichor::stages {

using doc::Value;
namespace f = inspection::field;

std::string discovery_entry(const talos::Address& a) {
    if (a.port == talos::k_apid_port) {
        return a.host;
    }
    const bool v6 = a.host.find(':') != std::string::npos;
    return (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

namespace {

// The entries of spec.discovery.addresses as they are, and whether one is this address (a CIDR or
// an entry that is not an address is kept and compared as text only).
struct Listed {
    Value entries = Value::array();
    bool present = false;
};

Listed listed(const Value& cluster, const talos::Address& address) {
    Listed l;
    const Value* v = objects::ClusterView(cluster).discovery_addresses();
    if (v == nullptr) {
        return l;
    }
    l.entries = *v;
    for (const auto& e : *v) {
        if (!e.is_string()) {
            continue;
        }
        auto a = talos::parse_address(e.get<std::string>());
        l.present = l.present || (a && a->host == address.host && a->port == address.port);
    }
    return l;
}

Value node_tags(const std::string& node, const std::string& hint = {}) {
    Value t = Value::object();
    t[std::string(doc::k_tag_node)] = node;
    if (!hint.empty()) {
        t[std::string(vocab::k_tag_hint)] = hint;
    }
    return t;
}

// What becomes of a configured machine: discovery does not enrol it; one of two commands does.
void configured(doc::ResourceList& list, const Value& item, const DiscoveryAddOptions& o) {
    const std::string& a = o.address.text;
    const std::string adopt = "kubectl ichor adopt --cluster " + o.cluster + " --add-machine " + a +
                              " --talosconfig " + o.talosconfig;
    const std::string reclaim = other_cluster_hint(a, "FILE", o.cluster);
    const std::string both = "; " + adopt + " applies when it carries this cluster's PKI (its " +
                             "cluster ID and Talos API CA), no reset; " + reclaim +
                             " applies when another cluster configured it (with that cluster's "
                             "talosconfig; a reset, typed UUID)";
    const std::string lead = a + ": runs a configuration, so discovery does not enrol it";
    std::string verdict;
    if (o.bundle != nullptr) {
        doc::ResourceList one;
        one.items.push_back(item);
        check_trust(one, {o.bundle, o.cluster, o.objects->ns()});
        verdict = inspection::View(one.items[0]).trust_verdict();
    }
    if (verdict == f::verdict::k_member) {
        list.add_result(doc::Severity::Warning,
                        lead + "; it carries the PKI of cluster " + o.cluster +
                            ": add it with --add-machine; hint: " + adopt +
                            " (kubectl ichor reclaim is for a machine of another cluster)",
                        vocab::code::k_this_cluster, &item, node_tags(a, adopt));
    } else if (verdict == f::verdict::k_other_cluster ||
               verdict == f::verdict::k_unknown_authority) {
        const std::string whose = inspection::View(item).cluster_name();
        list.add_result(doc::Severity::Warning,
                        lead + "; another cluster configured it" +
                            (whose.empty() ? std::string() : " (\"" + whose + "\")") +
                            ": reset and add it with reclaim; hint: " + reclaim +
                            " (kubectl ichor adopt --add-machine is for a machine of this "
                            "cluster's PKI)",
                        vocab::code::k_other_cluster, &item, node_tags(a, reclaim));
    } else {
        list.add_result(doc::Severity::Warning,
                        lead + " (the trust check could not tell whose it is)" + both,
                        vocab::code::k_configured, &item, node_tags(a));
    }
}

Outcome add(doc::ResourceList& list, const DiscoveryAddOptions& o) {
    const std::string& a = o.address.text;
    IchorObjects& objects = *o.objects;
    auto cluster = objects.get("talosclusters", objects.ns(), o.cluster);
    if (!cluster) {
        if (cluster.error().code == kube::reason::k_not_found) {
            return failed(make_error(ErrorKind::Config,
                                     "TalosCluster \"" + o.cluster +
                                         "\" not found in namespace \"" + objects.ns() + "\"",
                                     "kubectl get talosclusters -A",
                                     vocab::code::k_cluster_not_found));
        }
        return failed(cluster.error());
    }
    Listed l = listed(*cluster, o.address);
    Value now = *cluster;
    if (l.present) {
        list.add_result(doc::Severity::Info,
                        a + ": already in spec.discovery.addresses of TalosCluster " + o.cluster +
                            "; " + std::string(vocab::k_nothing_written),
                        vocab::code::k_already_listed, nullptr, node_tags(a));
    } else {
        l.entries.push_back(discovery_entry(o.address));
        Value patch = Value::object();
        patch["metadata"]["resourceVersion"] =
            doc::get_string(*cluster, "metadata.resourceVersion");
        patch["spec"]["discovery"]["addresses"] = l.entries;
        auto patched = objects.merge_patch("talosclusters", o.cluster, patch);
        if (!patched) {
            return failed(patched.error().wrap("adding " + a + " to TalosCluster " + o.cluster));
        }
        now = *patched;
        list.add_result(doc::Severity::Info,
                        a + ": added to spec.discovery.addresses of TalosCluster " + o.cluster,
                        vocab::code::k_added, nullptr, node_tags(a));
    }
    list.items.push_back(now);
    Value results = Value::array();
    Value item = o.probe(o.address, results);
    list.items.push_back(item);
    const std::string mode = inspection::View(item).mode();
    if (mode == f::mode::k_maintenance) {
        list.add_result(doc::Severity::Info,
                        a + ": is in maintenance mode: discovery records it as a pending "
                            "TalosMachine at its next pass; approve it then",
                        vocab::code::k_maintenance, &item,
                        node_tags(a, "kubectl get talosmachines -n " + objects.ns() + " -w"));
    } else if (mode == f::mode::k_configured) {
        configured(list, item, o);
    } else {
        std::string why;
        for (const auto& r : results) {
            if (r.value("severity", "") == "error") {
                why = r.value("message", "");
                break;
            }
        }
        list.add_result(doc::Severity::Warning,
                        a + ": did not answer" + (why.empty() ? std::string() : " (" + why + ")") +
                            "; discovery probes it at each pass",
                        vocab::code::k_unreachable, &item, node_tags(a));
    }
    Outcome out;
    out.done = 1;
    out.skipped = l.present ? 1 : 0;
    return out;
}

} // namespace

Outcome discovery_add(doc::ResourceList& list, const DiscoveryAddOptions& o) {
    return run_stage("discovery", list, [&] { return add(list, o); });
}

} // namespace ichor::stages
