#include "common/stages/trust.h"

#include "common/inspection/view.h"
#include "common/util/pem.h"
#include "common/util/strings.h"

#include <optional>

namespace ichor::stages {

using doc::Value;

std::string other_cluster_hint(const std::string& address, const std::string& talosconfig,
                               const std::string& cluster) {
    return "kubectl ichor reclaim " + address + " --talosconfig " +
           (talosconfig.empty() ? "FILE" : talosconfig) + " --cluster " + cluster;
}

namespace {

std::string normalise_pem(const std::string& pem) {
    std::string out;
    for (char c : pem) {
        if (c != '\n' && c != '\r' && c != ' ') {
            out += c;
        }
    }
    return out;
}

struct Verdict {
    std::string name;
    std::string message;
    std::string hint;
    std::optional<bool> cluster_id; // the node's cluster ID is the bundle's, once it was compared
    std::optional<bool> talos_ca;   // the same for the Talos API CA
};

namespace f = inspection::field;

Verdict judge(const inspection::View& node, const bundle::Bundle& b, const TrustOptions& o) {
    const std::string address = node.node();
    const std::string mode = node.mode();
    const std::string tls = node.tls_outcome();
    const std::string tc_path = node.talosconfig_path();
    const std::string reclaim = other_cluster_hint(address, tc_path, o.cluster);
    const std::string both =
        " (kubectl ichor adopt --cluster " + o.cluster + " --add-machine " + address +
        " is for a machine in this cluster's PKI; a machine of another cluster is reset and "
        "added with kubectl ichor reclaim)";

    if (mode == f::mode::k_unreachable || mode.empty()) {
        return {std::string(f::verdict::k_unreachable),
                address + ": not checked: the node could not be read (see its inspect result)",
                "kubectl ichor inspect " + address + " --talosconfig FILE"};
    }
    if (mode == f::mode::k_maintenance) {
        return {std::string(f::verdict::k_maintenance),
                address +
                    ": is in maintenance mode (it runs no configuration); it is not adopted: "
                    "it joins cluster \"" +
                    o.cluster + "\" through discovery and approval",
                "add " + address + " to spec.discovery.addresses of TalosCluster " + o.cluster +
                    ", then approve its TalosMachine: kubectl get talosmachines -n " + o.ns};
    }
    if (tls == f::tls::k_unknown_authority) {
        return {std::string(f::verdict::k_unknown_authority),
                address +
                    ": its Talos API certificate is not signed by the CA of the talosconfig: "
                    "it belongs to another cluster, or --talosconfig is the wrong one" +
                    both,
                other_cluster_hint(address, "FILE-OF-ITS-CLUSTER", o.cluster) +
                    " (or, if it is a machine of " + o.cluster +
                    ", inspect it again with a talosconfig of " + o.cluster +
                    ": kubectl ichor credentials " + o.cluster + ")"};
    }
    const std::string id = node.cluster_id();
    const std::string name = node.cluster_name();
    const std::string ca = node.talos_ca();
    bool id_ok = !id.empty() && id == b.cluster_id;
    // The CA is known from the configuration; a reader certificate cannot read that, but a TLS
    // handshake verified against the bundle's CA proves the same, when it was the node's own:
    // through an endpoint the handshake verified was the endpoint's, so only the configuration
    // counts.
    bool ca_ok = false;
    if (!ca.empty()) {
        ca_ok = normalise_pem(ca) == normalise_pem(b.os_ca_pem());
    } else if (tls == f::tls::k_verified && node.via_endpoint().empty()) {
        auto bundle_fp = util::certificate_fingerprint(b.os_ca_pem());
        ca_ok = bundle_fp && *bundle_fp == node.talosconfig_ca_fingerprint();
    }
    if (id.empty()) {
        return {std::string(f::verdict::k_unknown),
                address + ": its cluster ID could not be read, so its membership is unknown",
                "inspect it with an os:admin talosconfig: kubectl ichor credentials " + o.cluster,
                id_ok, ca_ok};
    }
    if (!id_ok || !ca_ok) {
        std::string who = name.empty() ? "another cluster" : "cluster \"" + name + "\"";
        std::string why = !id_ok ? "its cluster ID is not the one of the bundle"
                                 : "it names this cluster's ID but not the bundle's Talos API CA";
        return {std::string(f::verdict::k_other_cluster),
                address + ": belongs to " + who + ", not to \"" + o.cluster + "\" (" + why + "); " +
                    std::string(vocab::k_nothing_written) + both,
                reclaim, id_ok, ca_ok};
    }
    return {std::string(f::verdict::k_member), {}, {}, id_ok, ca_ok};
}

} // namespace

Outcome check_trust(doc::ResourceList& list, const TrustOptions& o) {
    return run_stage("trustcheck", list, [&] {
        Outcome out;
        for (auto& item : list.items) {
            const inspection::View node(item);
            if (!node.is_inspection()) {
                continue;
            }
            Verdict v = judge(node, *o.bundle, o);
            // A trust of an earlier check is replaced, in its place.
            inspection::put(item, f::k_trust) = Value::object();
            inspection::put(item, f::k_trust_verdict) = v.name;
            inspection::put(item, f::k_trust_cluster) = o.cluster;
            if (v.cluster_id) {
                inspection::put(item, f::k_trust_cluster_id) = *v.cluster_id;
                inspection::put(item, f::k_trust_talos_ca) = *v.talos_ca;
            }
            if (v.name != f::verdict::k_member) {
                ++out.stopped;
                Value tags = Value::object();
                tags[std::string(doc::k_tag_node)] = node.address();
                tags[std::string(vocab::k_tag_hint)] = v.hint;
                // The node's own findings from inspect (its unknown authority, its silence)
                // are this verdict's cause: one finding, not two.
                doc::ResourceList one;
                one.add_result(doc::Severity::Error, v.message + "; hint: " + v.hint, v.name, &item,
                               tags);
                add_folded(list, std::move(one.results[0]), node.address(), "inspect");
            }
        }
        return out;
    });
}

} // namespace ichor::stages
