#include "common/stages/trust.h"

#include "common/util/pem.h"
#include "common/util/strings.h"

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
};

Verdict judge(const Value& item, const bundle::Bundle& b, const TrustOptions& o, Value& trust) {
    const std::string address =
        doc::get_string(item, "spec.address", doc::get_string(item, "metadata.name"));
    const Value& st = item.contains("status") ? item["status"] : Value::object();
    const std::string mode = st.value("mode", "");
    const std::string tls = doc::get_string(st, "tls.outcome");
    const std::string tc_path = doc::get_string(item, "spec.talosconfig.path");
    const std::string reclaim = other_cluster_hint(address, tc_path, o.cluster);
    const std::string both =
        " (kubectl ichor adopt --cluster " + o.cluster + " --add-machine " + address +
        " is for a machine in this cluster's PKI; a machine of another cluster is reset and "
        "added with kubectl ichor reclaim)";

    if (mode == "unreachable" || mode.empty()) {
        return {"Unreachable",
                address + ": not checked: the node could not be read (see its inspect result)",
                "kubectl ichor inspect " + address + " --talosconfig FILE"};
    }
    if (mode == "maintenance") {
        return {"Maintenance",
                address +
                    ": is in maintenance mode (it runs no configuration); it is not adopted: "
                    "it joins cluster \"" +
                    o.cluster + "\" through discovery and approval",
                "add " + address + " to spec.discovery.addresses of TalosCluster " + o.cluster +
                    ", then approve its TalosMachine: kubectl get talosmachines -n " + o.ns};
    }
    if (tls == "unknownAuthority") {
        return {"UnknownAuthority",
                address +
                    ": its Talos API certificate is not signed by the CA of the talosconfig: "
                    "it belongs to another cluster, or --talosconfig is the wrong one" +
                    both,
                other_cluster_hint(address, "FILE-OF-ITS-CLUSTER", o.cluster) +
                    " (or, if it is a machine of " + o.cluster +
                    ", inspect it again with a talosconfig of " + o.cluster +
                    ": kubectl ichor credentials " + o.cluster + ")"};
    }
    const std::string id = doc::get_string(st, "facts.clusterID");
    const std::string name = doc::get_string(st, "facts.clusterName");
    const std::string ca = doc::get_string(st, "facts.talosCA");
    bool id_ok = !id.empty() && id == b.cluster_id;
    // The CA is known from the configuration; a reader certificate cannot read that, but a TLS
    // handshake verified against the bundle's CA proves the same.
    bool ca_ok = false;
    if (!ca.empty()) {
        ca_ok = normalise_pem(ca) == normalise_pem(b.os_ca_pem());
    } else if (tls == "verified") {
        auto bundle_fp = util::certificate_fingerprint(b.os_ca_pem());
        ca_ok = bundle_fp && *bundle_fp == doc::get_string(item, "spec.talosconfig.caFingerprint");
    }
    trust["clusterID"] = id_ok;
    trust["talosCA"] = ca_ok;
    if (id.empty()) {
        return {"Unknown",
                address + ": its cluster ID could not be read, so its membership is unknown",
                "inspect it with an os:admin talosconfig: kubectl ichor credentials " + o.cluster};
    }
    if (!id_ok || !ca_ok) {
        std::string who = name.empty() ? "another cluster" : "cluster \"" + name + "\"";
        std::string why = !id_ok ? "its cluster ID is not the one of the bundle"
                                 : "it names this cluster's ID but not the bundle's Talos API CA";
        return {"OtherCluster",
                address + ": belongs to " + who + ", not to \"" + o.cluster + "\" (" + why +
                    "); nothing was written" + both,
                reclaim};
    }
    return {"Member", {}, {}};
}

} // namespace

int check_trust(doc::ResourceList& list, const bundle::Bundle& b, const TrustOptions& o) {
    int refused = 0;
    for (auto& item : list.items) {
        if (item.value("kind", "") != "Inspection" ||
            item.value("apiVersion", "") != doc::k_adopt_api) {
            continue;
        }
        Value trust = Value::object();
        Verdict v = judge(item, b, o, trust);
        Value ordered = Value::object();
        ordered["verdict"] = v.name;
        ordered["cluster"] = o.cluster;
        for (auto it = trust.begin(); it != trust.end(); ++it) {
            ordered[it.key()] = it.value();
        }
        item["status"]["trust"] = std::move(ordered);
        if (v.name != "Member") {
            ++refused;
            Value tags = Value::object();
            tags[std::string(doc::k_tag_node)] = doc::get_string(item, "spec.address");
            tags[std::string(vocab::k_tag_hint)] = v.hint;
            list.add_result(doc::Severity::Error, v.message + "; hint: " + v.hint, v.name, &item,
                            tags);
        }
    }
    return refused;
}

} // namespace ichor::stages
