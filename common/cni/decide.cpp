#include "common/cni/decide.h"

#include "common/cni/preflight.h"
#include "common/doc/vocabulary.h"
#include "common/util/strings.h"

#include <algorithm>

namespace ichor::cni {

namespace {

// E7 on Talos 1.13 and earlier (reference §1.4): the planned outage removed flannel, but its CNI
// file is still in /etc/cni/net.d, so the Nodes report Ready and pods that start get flannel's
// configuration without flannel. Ichor cannot tell that file from a CNI it does not know, so it
// does not install over it: the operator removes the file, and the Nodes go NotReady for the
// network, which is a cluster without a CNI.
Error refuse_leftover(const Detection& d) {
    return make_error(
        ErrorKind::Findings,
        "cni: no CNI runs and every control plane has cluster.network.cni.name: none, but " +
            std::to_string(d.leftover_nodes.size()) + " Node(s) that flannel ran on are Ready (" +
            util::join(d.leftover_nodes, ", ") +
            "): on Talos v1.13 and earlier /etc/cni lives on EPHEMERAL, so flannel's "
            "/etc/cni/net.d/10-flannel.conflist survived the reboot and the container runtime "
            "still reports the network ready. Remove that file from every node (or wipe "
            "EPHEMERAL), so that the Nodes are NotReady for the network only, then adopt again; "
            "see the adopt guide, 'Moving from flannel'.",
        "on each node: kubectl debug node/NODE -n kube-system --profile=sysadmin --image=busybox "
        "-- rm /host/etc/cni/net.d/10-flannel.conflist",
        vocab::code::k_cni_leftover_config);
}

Error refuse_non_cilium(const Detection& d) {
    return make_error(ErrorKind::Findings,
                      "cni: the cluster's CNI is " + d.summary() +
                          ", not Cilium: rerun with --cni-unmanaged to adopt the cluster and "
                          "leave its CNI as it is. " +
                          std::string(k_no_migration),
                      "rerun with --cni-unmanaged", vocab::code::k_cni_not_cilium);
}

} // namespace

std::string_view action_name(CniAction a) {
    switch (a) {
    case CniAction::Takeover:
        return "takeover";
    case CniAction::Install:
        return "install";
    case CniAction::Unmanaged:
        return "unmanaged";
    }
    return "?";
}

std::string_view source_name(ValuesSource s) {
    switch (s) {
    case ValuesSource::None:
        return "none";
    case ValuesSource::Flag:
        return "--cilium-values";
    case ValuesSource::Record:
        return "the release record";
    }
    return "?";
}

Result<CniPlan> decide(const Detection& d, const CniFlags& flags) {
    CniPlan plan;
    if (flags.cni_unmanaged) {
        if (flags.cilium_values) {
            return make_error(ErrorKind::Usage,
                              "--cilium-values cannot be used with --cni-unmanaged: Ichor renders "
                              "no Cilium for an unmanaged CNI",
                              "drop --cilium-values", vocab::code::k_cilium_values_unmanaged);
        }
        plan.action = CniAction::Unmanaged;
        plan.preset = "unmanaged";
        plan.notes.push_back("the CNI (" + d.summary() +
                             ") is left as the nodes have it; spec.cni.preset: unmanaged is "
                             "immutable");
        return plan;
    }
    if (d.cni == Cni::None) {
        plan.action = CniAction::Install;
        plan.preset = "cilium";
        if (flags.cilium_values) {
            plan.source = ValuesSource::Flag;
            plan.values = flags.values.is_object() ? flags.values : doc::Value::object();
        }
        plan.notes.push_back("the cluster has no CNI: Ichor installs its pinned Cilium, and the "
                             "Nodes become Ready when it runs");
        return plan;
    }
    if (!d.leftover_nodes.empty()) {
        return refuse_leftover(d);
    }
    if (d.cni != Cni::Cilium) {
        if (flags.cilium_values) {
            return make_error(ErrorKind::Usage,
                              "--cilium-values: the cluster's CNI is " + d.summary() +
                                  ", not Cilium. " + std::string(k_no_migration),
                              "drop --cilium-values", vocab::code::k_cilium_values_not_cilium);
        }
        return refuse_non_cilium(d);
    }
    if (auto ipam = check_ipam(d); !ipam.ok()) {
        return ipam.error();
    }
    plan.action = CniAction::Takeover;
    plan.preset = "cilium";
    if (d.release && d.release->has_values()) {
        if (flags.cilium_values) {
            return make_error(ErrorKind::Usage, std::string(k_release_has_values),
                              "drop --cilium-values", vocab::code::k_release_has_values);
        }
        plan.source = ValuesSource::Record;
        plan.values = d.release->config;
    } else if (flags.cilium_values) {
        plan.source = ValuesSource::Flag;
        plan.values = flags.values.is_object() ? flags.values : doc::Value::object();
    }
    plan.notes.push_back("the takeover restarts the Cilium agents (the only step of the adoption "
                         "that restarts anything)");
    for (const auto& m : d.manifests) {
        bool is_inline = std::find(d.inline_manifests.begin(), d.inline_manifests.end(), m) !=
                         d.inline_manifests.end();
        if (is_inline) {
            plan.notes.push_back(
                "the Talos inline manifest " + m +
                " delivers Cilium and the next talosctl upgrade-k8s would apply it again over "
                "Ichor's: Ichor's render removes it from the control planes (class B, "
                "CiliumInlineManifest; recorded in spec.cni.cilium.inlineManifests)");
        } else {
            plan.notes.push_back("the Talos manifest " + m +
                                 " delivers Cilium and the next talosctl upgrade-k8s would apply "
                                 "it again: Ichor's render leaves it out, and a node that has it "
                                 "is blocked (class C) until it is removed");
        }
    }
    plan.inline_manifests = d.inline_manifests;
    return plan;
}

} // namespace ichor::cni
