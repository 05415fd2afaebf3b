#include "common/stages/plan.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/drift/drift.h"
#include "common/inspection/view.h"
#include "common/machineconfig/hardware.h"
#include "common/render/render.h"
#include "common/stages/credentials.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace ichor::stages {

using doc::Value;
using inspection::View;
using objects::MachineView;
using objects::PatchView;

namespace {

constexpr int k_talos_floor_minor = 12;

struct Version {
    int major = 0;
    int minor = 0;
};

std::optional<Version> parse_version(std::string_view v) {
    if (v.starts_with('v')) {
        v.remove_prefix(1);
    }
    auto parts = util::split(v, '.');
    if (parts.size() < 3 || parts[0].empty() || parts[1].empty()) {
        return std::nullopt;
    }
    for (const auto& p : {parts[0], parts[1]}) {
        if (!std::all_of(p.begin(), p.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
            return std::nullopt;
        }
    }
    return Version{std::stoi(parts[0]), std::stoi(parts[1])};
}

struct PlanSummary {
    int writable = 0; // machines with a TalosMachine (and maybe a TalosConfigPatch) in the plan
    int blocked = 0;  // class C drift or a patch that does not apply
    int refused = 0;  // not trusted, Talos version, control-plane count, no configuration
    int skipped = 0;  // already a TalosMachine
};

// What became of one node, before anything goes into the list.
struct NodePlan {
    const Value* inspection = nullptr;
    std::string address;
    std::string outcome; // writable, blocked, refused, skipped
    std::string role;
    std::string name;
    std::vector<std::pair<doc::Severity, Value>> results; // severity, {message, code, tags}
    Value machine;
    Value patch;       // null when there is no class A drift
    Value credentials; // the Secret of the patch's credentials, or null (credentials.h)
};

void add(NodePlan& n, doc::Severity sev, std::string message, std::string_view code,
         Value tags = Value::object()) {
    Value r = Value::object();
    r["message"] = std::move(message);
    r["code"] = std::string(code);
    r["tags"] = std::move(tags);
    n.results.emplace_back(sev, std::move(r));
}

std::string expand(std::string text, const NodePlan& n, const std::string& path,
                   const PlanOptions& o) {
    for (auto [key, value] : {std::pair<std::string, std::string>{"{node}", n.address},
                              {"{path}", path},
                              {"{cluster}", o.cluster},
                              {"{ns}", o.ns}}) {
        for (auto p = text.find(key); p != std::string::npos;
             p = text.find(key, p + value.size())) {
            text.replace(p, key.size(), value);
        }
    }
    return text;
}

std::string brief(const Value& v) {
    std::string s = v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

Value hint_tags(const NodePlan& n, const std::string& hint) {
    Value t = Value::object();
    t[std::string(doc::k_tag_node)] = n.address;
    if (!hint.empty()) {
        t[std::string(vocab::k_tag_hint)] = hint;
    }
    return t;
}

void refuse(NodePlan& n, std::string message, std::string_view code, const std::string& hint) {
    n.outcome = "refused";
    add(n, doc::Severity::Error, message + (hint.empty() ? "" : "; hint: " + hint), code,
        hint_tags(n, hint));
}

// The TalosMachines with the node's UUID; an empty UUID has none.
std::vector<const Value*> machines_with_uuid(const std::vector<Value>& machines,
                                             const std::string& uuid) {
    std::vector<const Value*> out;
    for (const auto& m : machines) {
        if (!uuid.empty() && util::to_lower(MachineView(m).uuid()) == util::to_lower(uuid)) {
            out.push_back(&m);
        }
    }
    return out;
}

// Is the node already an Ichor machine? Only an approved TalosMachine of its UUID makes it one
// (ADR 0128 decision 2, G2; the adopt guide's table): a pending one was made from the node in
// maintenance mode and a rejected one never ran, so for a node that now runs this cluster's
// configuration either is stale. The node is added, and each stale record is named with how to
// remove it (the CLI deletes nothing it did not create).
bool already_adopted(NodePlan& n, const std::string& uuid, const PlanOptions& o) {
    for (const Value* m : machines_with_uuid(o.machines, uuid)) {
        const std::string name = doc::get_string(*m, "metadata.name");
        const std::string approval =
            MachineView(*m).approval(std::string(objects::k_approval_pending));
        if (approval == objects::k_approval_approved) {
            n.outcome = "skipped";
            n.results.clear();
            add(n, doc::Severity::Info,
                n.address + ": UUID " + uuid + " is already TalosMachine " + name + " (cluster " +
                    MachineView(*m).cluster() + "); skipped",
                std::string(vocab::code::k_already_adopted), hint_tags(n, ""));
            return true;
        }
        const std::string hint = "kubectl annotate talosmachine " + name + " -n " + o.ns + " " +
                                 std::string(vocab::k_annotation_allow_delete) +
                                 "=true && kubectl delete talosmachine " + name + " -n " + o.ns;
        add(n, doc::Severity::Warning,
            n.address + ": TalosMachine " + name + " (cluster " + MachineView(*m).cluster() +
                ") has UUID " + uuid + " but is " + approval +
                ", not approved, so the node is added; that record is stale for a node " +
                "that runs a configuration; hint: " + hint,
            vocab::code::k_stale_machine, hint_tags(n, hint));
    }
    return false;
}

// The Kubernetes version the node's kubelet image names ("v1.34.4"), or empty.
std::string kubelet_version(const View& node) {
    const Value* config = node.config();
    if (config == nullptr) {
        return {};
    }
    for (const auto& d : *config) {
        std::string image =
            doc::get_string(d, d.contains("kind") ? "image" : "machine.kubelet.image");
        if (d.contains("kind") && d.value("kind", "") != "KubeletConfig") {
            continue;
        }
        if (auto colon = image.rfind(':');
            colon != std::string::npos && image.find('/', colon) == std::string::npos) {
            return image.substr(colon + 1);
        }
    }
    return {};
}

bool versions_ok(NodePlan& n, const View& node, const render::ClusterSpec& c) {
    const std::string talos = node.talos_version();
    auto v = parse_version(talos);
    if (!v || v->major != 1 ||
        (v->minor >= k_talos_floor_minor && supported_kubernetes(v->minor).first == 0)) {
        refuse(n,
               n.address + ": Talos version \"" + talos +
                   "\" is unknown to this release (it knows v1.12, v1.13 and v1.14)",
               vocab::code::k_unknown_talos_version,
               "upgrade kubectl-ichor, or read the node with kubectl ichor inspect " + n.address);
        return false;
    }
    if (v->minor < k_talos_floor_minor) {
        refuse(n, n.address + ": runs Talos " + talos + "; adoption needs Talos v1.12 or later",
               vocab::code::k_talos_too_old,
               "talosctl upgrade --nodes " + n.address +
                   " --image ghcr.io/siderolabs/installer:v1.12.11");
        return false;
    }
    auto [first, last] = supported_kubernetes(v->minor);
    const std::string range = "1." + std::to_string(first) + " to 1." + std::to_string(last);
    const std::string cluster_k8s = "v" + c.kubernetes_version;
    std::vector<std::pair<std::string, std::string>> pairs = {
        {cluster_k8s, "of TalosCluster " + c.name}};
    if (std::string node_k8s = kubelet_version(node);
        !node_k8s.empty() && node_k8s != cluster_k8s) {
        pairs.emplace_back(node_k8s, "that its kubelet runs");
    }
    for (const auto& [k8s, whose] : pairs) {
        auto k = parse_version(k8s);
        if (!k) {
            continue;
        }
        if (k->major != 1 || k->minor < first || k->minor > last) {
            add(n, doc::Severity::Warning,
                n.address + ": Talos " + talos + " does not support Kubernetes " + k8s + " " +
                    whose + " (it supports " + range +
                    "); the machine is adopted as it runs, and an upgrade "
                    "is refused until the pair is compatible",
                vocab::code::k_unsupported_kubernetes_version, hint_tags(n, ""));
        }
    }
    return true;
}

render::Install install_of(const View& node) {
    render::Install i;
    i.disk = node.install_disk();
    i.image = node.install_image();
    i.wipe = node.install_wipe();
    if (i.disk.empty()) {
        // a v1.14 node names its disk in a CEL match
        std::string sel = node.install_disk_selector();
        const std::string lead = "disk.dev_path == \"";
        if (auto p = sel.find(lead); p != std::string::npos) {
            auto start = p + lead.size();
            i.disk = sel.substr(start, sel.find('"', start) - start);
        }
    }
    return i;
}

// What the render of one machine reads; the drift stage and render_machine build it here alone.
render::Input render_input(const render::ClusterSpec& c, const bundle::Bundle& bundle,
                           const std::string& role, const std::string& machine,
                           const render::Install& install, const std::vector<Value>& patches) {
    return render::Input{&c, &bundle, role, machine, install, "", patches};
}

Value make_patch(const NodePlan& n, const std::string& name, const std::string& text, int order,
                 const PlanOptions& o) {
    Value p = Value::object();
    p["apiVersion"] = std::string(doc::k_ichor_api);
    p["kind"] = "TalosConfigPatch";
    p["metadata"]["name"] = name;
    p["metadata"]["namespace"] = o.ns;
    p["metadata"]["labels"][std::string(vocab::k_label_cluster)] = o.cluster;
    p["spec"]["cluster"] = o.cluster;
    p["spec"]["layer"] = "machine";
    p["spec"]["machine"] = n.name;
    p["spec"]["order"] = order;
    p["spec"]["patch"] = text;
    return p;
}

Value make_machine(const NodePlan& n, const View& node, const render::Install& inst,
                   const PlanOptions& o) {
    Value m = Value::object();
    m["apiVersion"] = std::string(doc::k_ichor_api);
    m["kind"] = "TalosMachine";
    m["metadata"]["name"] = n.name;
    m["metadata"]["namespace"] = o.ns;
    m["metadata"]["labels"][std::string(vocab::k_label_cluster)] = o.cluster;
    m["metadata"]["annotations"][std::string(vocab::k_annotation_hold_apply)] = "true";
    m["spec"]["cluster"] = o.cluster;
    m["spec"]["approval"] = "Approved";
    m["spec"]["role"] = n.role;
    const std::int64_t port = node.port().value_or(50000);
    m["spec"]["address"] = port != 50000 ? n.address + ":" + std::to_string(port) : n.address;
    Value id = Value::object();
    id["uuid"] = node.uuid();
    id["serial"] = node.serial();
    if (const Value* macs = node.macs(); macs != nullptr) {
        id["macs"] = *macs;
    }
    m["spec"]["identity"] = std::move(id);
    m["spec"]["install"] = Value{{"disk", inst.disk}, {"image", inst.image}, {"wipe", inst.wipe}};
    return m;
}

// A machine added with --add-machine that is blocked can still join by a wipe: reclaim resets it
// and it comes back through discovery with nothing of the old configuration (ADR 0128, amendment
// of 2026-11-07). A recorded machine's plan has no such way out.
std::string wipe_hint(const NodePlan& n, const PlanOptions& o) {
    if (!o.add_machine) {
        return {};
    }
    return "; or wipe it and add it afresh (its configuration is lost): kubectl ichor reclaim " +
           n.address + " --talosconfig FILE --cluster " + o.cluster;
}

void drift_results(NodePlan& n, const drift::Analysis& a, const std::string& patch_name,
                   const PlanOptions& o) {
    for (const auto& f : a.findings) {
        const auto& c = f.change;
        std::string hint = expand(f.verdict.hint, n, c.dotted, o);
        Value tags = Value::object();
        tags[std::string(doc::k_tag_class)] = std::string(drift::class_name(f.verdict.cls));
        tags.update(hint_tags(n, hint));
        tags["field"] =
            Value{{"path", c.dotted}, {"currentValue", c.current}, {"proposedValue", c.proposed}};
        std::string what = n.address + ": " + c.dotted + ": " +
                           (c.current.is_null() ? "the node does not set it"
                                                : "the node has " + brief(c.current)) +
                           (c.proposed.is_null() ? ", Ichor does not render it"
                                                 : ", Ichor renders " + brief(c.proposed));
        switch (f.verdict.cls) {
        case drift::Class::A:
            add(n, doc::Severity::Info,
                what + "; captured into TalosConfigPatch " + patch_name +
                    (hint.empty() ? "" : "; " + hint),
                f.verdict.code, tags);
            break;
        case drift::Class::B:
            add(n, doc::Severity::Warning,
                what + "; adopting replaces the node's value (consent needed); hint: " + hint,
                f.verdict.code, tags);
            break;
        default:
            add(n, doc::Severity::Error,
                what + "; this machine is blocked; hint: " + hint + wipe_hint(n, o), f.verdict.code,
                tags);
            n.outcome = "blocked";
        }
    }
}

std::string unique_patch_name(const std::string& machine, const std::vector<Value>& patches) {
    std::set<std::string> taken;
    for (const auto& p : patches) {
        taken.insert(doc::get_string(p, "metadata.name"));
    }
    std::string name = machine + "-adopted";
    for (int i = 2; taken.count(name) != 0; ++i) {
        name = machine + "-adopted-" + std::to_string(i);
    }
    return name;
}

int next_order(const std::vector<Value>& patches, const PlanOptions& o,
               const std::string& machine) {
    int order = 0;
    for (const auto& p : patches) {
        if (const PatchView v(p); v.cluster() == o.cluster &&
                                  v.layer() == objects::k_layer_machine && v.machine() == machine) {
            order = std::max(order, static_cast<int>(v.order()) + 1);
        }
    }
    return order;
}

// Drift of one trusted node: render, diff, classify, capture.
void analyze_node(NodePlan& n, const View& node, const render::ClusterSpec& c,
                  const PlanOptions& o) {
    const Value* config = node.config();
    if (config == nullptr || config->empty()) {
        refuse(
            n,
            n.address +
                ": its Inspection carries no configuration (read it with an os:admin talosconfig)",
            vocab::code::k_no_configuration,
            "kubectl ichor credentials " + o.cluster + " > tc; kubectl ichor inspect " + n.address +
                " --talosconfig tc");
        return;
    }
    render::Install inst = install_of(node);
    render::Input ri = render_input(c, *o.bundle, n.role, n.name, inst, o.patches);
    auto rendered = render::render(ri);
    if (!rendered) {
        n.outcome = "blocked";
        std::string hint =
            "kubectl edit talosconfigpatch -n " + o.ns + " (fix the patch the message names)";
        add(n, doc::Severity::Error,
            n.address + ": " + rendered.error().message +
                "; this machine is blocked; hint: " + hint,
            rendered.error().code.empty() ? vocab::code::k_render_failed : rendered.error().code,
            hint_tags(n, hint));
        return;
    }
    const std::string patch_name = unique_patch_name(n.name, o.patches);
    const int order = next_order(o.patches, o, n.name);
    // The capture is the machine's last patch (next_order), so rendering again with it is the
    // patched documents plus the capture; the other patches are not parsed again.
    auto rerender = [&](const std::string& text) -> Result<std::vector<Value>> {
        std::vector<Value> docs = *rendered;
        if (auto st = render::apply_patch_text(docs, text, "spec.patch"); !st) {
            return st.error().wrap("TalosConfigPatch " + patch_name);
        }
        return docs;
    };
    drift::Context ctx{!c.registry_mirrors.is_null(), c.cni_preset, c.cilium_manifests};
    if (auto v = parse_version(node.talos_version())) {
        ctx.talos_minor = v->minor;
    }
    std::vector<Value> live(config->begin(), config->end());
    drift::Worked worked;
    const Value* live_facts = nullptr;
    if (o.live_facts != nullptr) {
        if (auto f = o.live_facts->find(node.node()); f != o.live_facts->end()) {
            live_facts = f->second;
        }
    }
    drift::Analysis a = drift::analyze(live, *rendered, ctx, rerender,
                                       o.kept != nullptr ? &worked : nullptr, live_facts);
    n.outcome = "writable";
    drift_results(n, a, patch_name, o);
    if (n.outcome != "writable") {
        return;
    }
    n.machine = make_machine(n, node, inst, o);
    if (o.kept != nullptr) {
        auto [k, fresh] = o.kept->try_emplace(doc::get_string(n.machine, "spec.address"));
        k->second = fresh ? KeptWork{std::move(*rendered), std::move(worked)} : KeptWork{};
        k->second.usable = fresh;
    }
    if (!a.capture.empty()) {
        n.patch = make_patch(n, patch_name, a.capture, order, o);
        n.credentials = attach_credentials(n.patch, a.capture_secrets, {n.address});
    }
}

std::string node_role(const std::string& facts_role) {
    if (facts_role == "controlplane" || facts_role == "init") {
        return "controlplane";
    }
    return facts_role == "worker" || facts_role == "join" ? "worker" : std::string();
}

std::vector<Value> documents_of(const Value* list) {
    return list != nullptr ? std::vector<Value>(list->begin(), list->end()) : std::vector<Value>{};
}

// A persistent configuration that is not the running one, semantically (a STAGED apply waiting
// for the reboot, or a TRY window still open): any write now would replace what was staged, so
// the node is refused, naming the paths that differ and the two ways on.
bool staged_ok(NodePlan& n, const View& node) {
    const Value* persistent = node.persistent_config();
    if (persistent == nullptr || node.config() == nullptr) {
        return true;
    }
    auto changes = drift::diff(drift::normalize(documents_of(node.config())),
                               drift::normalize(documents_of(persistent)));
    if (changes.empty()) {
        return true;
    }
    std::vector<std::string> paths;
    for (const auto& c : changes) {
        if (paths.size() == 8) {
            paths.push_back("and " + std::to_string(changes.size() - 8) + " more");
            break;
        }
        paths.push_back(c.dotted);
    }
    refuse(n,
           n.address +
               ": its persistent configuration differs from the one it runs (an apply-config "
               "--mode staged not yet rebooted into, or a --mode try window still open) at " +
               util::join(paths, ", ") +
               "; adopting it now would replace what was staged. Reboot the node into the staged "
               "configuration, or apply the running one again",
           vocab::code::k_staged_config,
           "talosctl -n " + node.address() + " reboot; or talosctl -n " + node.address() +
               " get machineconfig v1alpha1 -o jsonpath='{.spec}' > running.yaml && talosctl -n " +
               node.address() + " apply-config --mode no-reboot -f running.yaml");
    return false;
}

// The install disk and the links the configuration names, against the node's own (issue 22): no
// disk for the install is a refusal (an upgrade or a reinstall would not find it), a link that is
// not there a warning.
bool hardware_ok(NodePlan& n, const View& node) {
    std::vector<machineconfig::Disk> disks;
    if (const Value* list = node.disks(); list != nullptr) {
        namespace k = inspection::field::disk;
        for (const auto& d : *list) {
            machineconfig::Disk x;
            x.dev_path = d.value(k::k_dev_path, "");
            x.size = d.value(k::k_size, std::uint64_t{0});
            x.model = d.value(k::k_model, "");
            x.serial = d.value(k::k_serial, "");
            x.wwid = d.value(k::k_wwid, "");
            x.modalias = d.value(k::k_modalias, "");
            x.uuid = d.value(k::k_uuid, "");
            x.bus_path = d.value(k::k_bus_path, "");
            x.transport = d.value(k::k_transport, "");
            x.rotational = d.value(k::k_rotational, false);
            x.cdrom = d.value(k::k_cdrom, false);
            x.readonly = d.value(k::k_readonly, false);
            disks.push_back(std::move(x));
        }
    }
    std::vector<std::string> links;
    if (const Value* names = node.link_names(); names != nullptr) {
        for (const auto& l : *names) {
            if (l.is_string()) {
                links.push_back(l.get<std::string>());
            }
        }
    }
    bool ok = true;
    for (auto& f : machineconfig::check_hardware(documents_of(node.config()), disks, links)) {
        if (f.kind == machineconfig::HardwareFinding::Kind::InstallDisk) {
            refuse(n, n.address + ": " + f.message, vocab::code::k_install_disk_missing,
                   "talosctl -n " + node.address() +
                       " get disks; then correct machine.install in the node's configuration");
            ok = false;
        } else {
            add(n, doc::Severity::Warning, n.address + ": " + f.message,
                vocab::code::k_unknown_link, hint_tags(n, ""));
        }
    }
    return ok;
}

// Trust, identity, versions and role: whether the node can be planned at all.
void check_node(NodePlan& n, const View& node, const render::ClusterSpec& c, const PlanOptions& o,
                std::set<std::string>& names) {
    const std::string verdict = node.trust_verdict();
    if (verdict.empty()) {
        refuse(n, n.address + ": not trust-checked", vocab::code::k_not_trust_checked,
               "kubectl ichor trustcheck --cluster " + o.cluster +
                   " -f FILE | kubectl ichor drift --cluster " + o.cluster);
        return;
    }
    if (verdict != inspection::field::verdict::k_member) {
        n.outcome = "refused"; // trustcheck's own result says why; it stays in the list
        return;
    }
    if (std::string checked = node.trust_cluster(); checked != o.cluster) {
        refuse(n,
               n.address + ": was trust-checked against cluster \"" + checked + "\", not \"" +
                   o.cluster + "\"",
               vocab::code::k_trusted_for_other_cluster,
               "kubectl ichor trustcheck --cluster " + o.cluster);
        return;
    }
    const std::string uuid = node.uuid();
    if (already_adopted(n, uuid, o)) {
        return;
    }
    if (!versions_ok(n, node, c)) {
        return;
    }
    const bool staged = staged_ok(n, node);
    if (!hardware_ok(n, node) || !staged) { // both: every finding of the node at once
        return;
    }
    n.role = node_role(node.role());
    if (n.role.empty()) {
        refuse(n,
               n.address + ": its role \"" + node.role() + "\" is neither controlplane nor worker",
               vocab::code::k_unknown_role, "");
        return;
    }
    n.name = machine_name(node.hostname(), uuid);
    if (names.count(n.name) != 0) {
        n.name = machine_name("", uuid.empty() ? n.address : uuid);
    }
    names.insert(n.name);
    n.outcome = "ok";
}

void control_plane_count(std::vector<NodePlan>& nodes, const render::ClusterSpec& c,
                         const PlanOptions& o) {
    int existing = 0;
    for (const auto& m : o.machines) {
        if (const MachineView v(m); v.cluster() == c.name && v.is_control_plane() &&
                                    v.approval() != objects::k_approval_rejected) {
            ++existing;
        }
    }
    int total = existing;
    for (auto& n : nodes) {
        if (n.outcome != "ok" || n.role != "controlplane") {
            continue;
        }
        if (total + 1 > c.control_plane_count) {
            const std::string want = std::to_string(total + 1);
            refuse(n,
                   n.address + ": is a control plane, and TalosCluster " + c.name +
                       " would then have " + want +
                       " control planes, more than its spec.controlPlane.count " +
                       std::to_string(c.control_plane_count) + "; " +
                       std::string(vocab::k_nothing_written) + " for it: raise the count first",
                   vocab::code::k_control_plane_count,
                   "kubectl patch taloscluster " + c.name + " -n " + o.ns +
                       " --type merge -p '{\"spec\":{\"controlPlane\":{\"count\":" + want + "}}}'");
            continue;
        }
        ++total;
    }
}

std::string names_of(const std::vector<NodePlan>& nodes, bool writable) {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
        if ((n.outcome == "writable") == writable &&
            (writable || n.outcome == "blocked" || n.outcome == "refused")) {
            out.push_back(writable ? n.name + " (" + n.role + ", " +
                                         n.machine["spec"]["install"].value("disk", "") + ")"
                                   : n.address);
        }
    }
    return util::join(out, ", ");
}

// What the stopped machines are: refused (by the trust check or a pre-write rule), blocked (by
// drift), or both.
std::string stopped_word(const PlanSummary& s) {
    return s.blocked == 0 ? "refused" : s.refused == 0 ? "blocked" : "refused or blocked";
}

void summarize(doc::ResourceList& list, const std::vector<NodePlan>& nodes, const PlanSummary& s,
               const PlanOptions& o) {
    const int stopped = s.blocked + s.refused;
    Value tags = Value::object();
    if (s.writable == 0 && stopped > 0) {
        std::string hint =
            "change each node as its results say, then run kubectl ichor drift --cluster " +
            o.cluster + " again";
        tags[std::string(vocab::k_tag_hint)] = hint;
        if (o.add_machine) {
            list.add_result(doc::Severity::Error,
                            "every machine is " + stopped_word(s) + " (" + names_of(nodes, false) +
                                "); " + std::string(vocab::k_nothing_written) + "; hint: " + hint,
                            std::string(vocab::code::k_nothing_written), nullptr, tags);
        } else {
            list.add_result(doc::Severity::Error,
                            "nothing to adopt: " + names_of(nodes, false) + " " + stopped_word(s) +
                                "; hint: " + hint,
                            std::string(vocab::code::k_nothing_to_adopt), nullptr, tags);
        }
        return;
    }
    if (s.writable == 0) {
        list.add_result(doc::Severity::Info,
                        s.skipped > 0 ? "nothing to adopt: every machine is already a TalosMachine"
                                      : "nothing to adopt: no Inspection in the input",
                        std::string(vocab::code::k_nothing_to_adopt));
        return;
    }
    std::string text = "plan: " + std::to_string(s.writable) +
                       (s.writable == 1 ? " machine" : " machines") +
                       " to adopt: " + names_of(nodes, true);
    if (stopped > 0) {
        text +=
            "; " + std::to_string(stopped) + " " + stopped_word(s) + ": " + names_of(nodes, false);
    }
    list.add_result(doc::Severity::Info, text, std::string(vocab::code::k_plan));
}

bool valid_subdomain(const std::string& s) {
    if (s.empty() || s.size() > 245) {
        return false;
    }
    for (const auto& label : util::split(s, '.')) {
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
            return false;
        }
        for (char ch : label) {
            if (!(std::islower(static_cast<unsigned char>(ch)) ||
                  std::isdigit(static_cast<unsigned char>(ch)) || ch == '-')) {
                return false;
            }
        }
    }
    return true;
}

} // namespace

std::pair<int, int> supported_kubernetes(int talos_minor) {
    // docs.siderolabs.com, "Support Matrix": Talos 1.12 supports Kubernetes 1.30-1.35, Talos 1.13
    // 1.31-1.36; Talos 1.14 is not released and follows the pattern, 1.32-1.37.
    switch (talos_minor) {
    case 12:
        return {30, 35};
    case 13:
        return {31, 36};
    case 14:
        return {32, 37};
    default:
        return {0, 0};
    }
}

std::string machine_name(const std::string& hostname, const std::string& uuid) {
    if (valid_subdomain(hostname)) {
        return hostname;
    }
    std::string id;
    for (char ch : util::to_lower(uuid)) {
        id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
    }
    return "machine-" + (id.empty() ? std::string("unknown") : id);
}

namespace {

// The objects a plan adds (TalosMachine, TalosConfigPatch of the Ichor API, its PlanBasis): an
// earlier plan's.
void drop_planned_objects(doc::ResourceList& list) {
    Value kept = Value::array();
    for (auto& item : list.items) {
        const std::string kind = item.value("kind", "");
        bool planned = (item.value("apiVersion", "") == doc::k_ichor_api &&
                        (kind == "TalosMachine" || kind == "TalosConfigPatch")) ||
                       is_plan_basis(item) || is_credentials_secret(item);
        if (!planned) {
            kept.push_back(std::move(item));
        }
    }
    list.items = std::move(kept);
}

// What the plan was made from (docs/stream.md, "PlanBasis"): the TalosCluster's and the cluster's
// patches' resourceVersions and the configuration digest of each machine it creates.
Value plan_basis(const std::vector<NodePlan>& nodes, const PlanOptions& o) {
    Value b = Value::object();
    b["apiVersion"] = std::string(doc::k_adopt_api);
    b["kind"] = std::string(k_plan_basis_kind);
    b["metadata"]["name"] = o.cluster;
    b["spec"]["talosCluster"] = {
        {"namespace", o.ns},
        {"name", o.cluster},
        {"resourceVersion", doc::get_string(*o.talos_cluster, "metadata.resourceVersion")}};
    Value patches = Value::array();
    for (const auto& p : o.patches) {
        if (PatchView(p).cluster() == o.cluster) {
            patches.push_back(
                {{"name", doc::get_string(p, "metadata.name")},
                 {"resourceVersion", doc::get_string(p, "metadata.resourceVersion")}});
        }
    }
    b["spec"]["patches"] = std::move(patches);
    Value machines = Value::array();
    for (const auto& n : nodes) {
        if (n.outcome == "writable") {
            machines.push_back({{"address", MachineView(n.machine).address()},
                                {"configDigest", View(*n.inspection).config_digest()}});
        }
    }
    b["spec"]["nodes"] = std::move(machines);
    return b;
}

Outcome plan_nodes(doc::ResourceList& list, const PlanOptions& o) {
    auto cluster = render::parse_cluster(*o.talos_cluster);
    if (!cluster) {
        return failed(cluster.error());
    }
    if (std::find(std::begin(render::k_contracts), std::end(render::k_contracts),
                  cluster->version_contract) == std::end(render::k_contracts)) {
        return failed(make_error(
            ErrorKind::Config,
            "TalosCluster " + cluster->name + ": version contract \"" + cluster->version_contract +
                "\" is not one this release renders (1.12, 1.13, 1.14)",
            "kubectl get taloscluster " + cluster->name + " -n " + o.ns + " -o yaml",
            vocab::code::k_unsupported_contract));
    }
    drop_planned_objects(list);
    std::vector<NodePlan> nodes;
    std::set<std::string> names;
    for (const auto& m : o.machines) {
        names.insert(doc::get_string(m, "metadata.name"));
    }
    for (const auto& item : list.items) {
        const View node(item);
        if (!node.is_inspection()) {
            continue;
        }
        NodePlan n;
        n.inspection = &item;
        n.address = node.node();
        check_node(n, node, *cluster, o, names);
        nodes.push_back(std::move(n));
    }
    control_plane_count(nodes, *cluster, o);
    for (auto& n : nodes) {
        if (n.outcome == "ok") {
            analyze_node(n, View(*n.inspection), *cluster, o);
        }
    }
    PlanSummary s;
    std::vector<Value> created;
    for (auto& n : nodes) {
        s.writable += n.outcome == "writable";
        s.blocked += n.outcome == "blocked";
        s.refused += n.outcome == "refused";
        s.skipped += n.outcome == "skipped";
        for (auto& [sev, r] : n.results) { // moved: the node's own are not read again
            list.add_result(sev, std::move(r["message"].get_ref<std::string&>()),
                            std::move(r["code"].get_ref<std::string&>()), n.inspection,
                            std::move(r["tags"]));
        }
        n.results.clear();
        // The patch before its machine: a run killed between the two leaves a patch and no
        // machine, which a rerun plans again with the patch in its render (no class A left), so it
        // converges. The other way round the rerun found a held machine, skipped it, and its
        // zero-drift check failed forever on the patch never written.
        if (n.outcome == "writable") {
            if (!n.credentials.is_null()) {
                created.push_back(std::move(n.credentials)); // before the patch that references it
            }
            if (!n.patch.is_null()) {
                created.push_back(std::move(n.patch));
            }
            created.push_back(n.machine);
        }
    }
    summarize(list, nodes, s, o);
    list.items.push_back(plan_basis(nodes, o));
    for (auto& c : created) {
        list.items.push_back(std::move(c));
    }
    Outcome out;
    out.done = s.writable;
    out.stopped = s.blocked + s.refused;
    out.skipped = s.skipped;
    return out;
}

} // namespace

bool is_plan_basis(const Value& item) {
    return item.value("apiVersion", "") == doc::k_adopt_api &&
           item.value("kind", "") == k_plan_basis_kind;
}

Outcome plan(doc::ResourceList& list, const PlanOptions& o) {
    return run_stage("drift", list, [&] { return plan_nodes(list, o); });
}

Result<std::vector<Value>> render_machine(const Value& machine, const render::ClusterSpec& cluster,
                                          const bundle::Bundle& bundle,
                                          const render::PatchIndex& patches,
                                          const render::SecretLookup& secrets) {
    render::Install inst;
    inst.disk = MachineView(machine).install_disk();
    inst.image = MachineView(machine).install_image();
    inst.wipe = MachineView(machine).install_wipe();
    const std::string role = MachineView(machine).role();
    const std::string name = doc::get_string(machine, "metadata.name");
    render::Input ri = render_input(cluster, bundle, role, name, inst,
                                    patches.patches_for(cluster.name, role, name));
    ri.secrets = secrets;
    return render::render(ri);
}

std::string plan_table(const doc::ResourceList& list, bool /*color*/) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"MACHINE", "ROLE", "ADDRESS", "INSTALL-DISK", "IMAGE", "PATCHES"});
    std::vector<const Value*> patches;
    for (const auto& item : list.items) {
        if (item.value("kind", "") == "TalosConfigPatch") {
            patches.push_back(&item);
        }
    }
    // Every planned patch that selects the machine: its cluster's, its role's and its own.
    auto selecting = [&](const Value& machine) {
        std::vector<std::string> names;
        const MachineView m(machine);
        for (const Value* p : patches) {
            const PatchView v(*p);
            const std::string layer = v.layer();
            if (v.cluster() != m.cluster()) {
                continue;
            }
            // A machine layer naming "" selects an unnamed machine here, unlike PatchView::selects.
            if (layer == objects::k_layer_cluster ||
                (layer == objects::k_layer_role && v.role() == m.role()) ||
                (layer == objects::k_layer_machine && v.machine() == m.name())) {
                names.push_back(doc::get_string(*p, "metadata.name"));
            }
        }
        return names.empty() ? std::string("-") : util::join(names, ",");
    };
    int others = 0;
    for (const auto& item : list.items) {
        if (item.value("kind", "") != "TalosMachine") {
            others += item.value("kind", "") != "TalosConfigPatch" && !is_plan_basis(item);
            continue;
        }
        const std::string name = doc::get_string(item, "metadata.name");
        auto dash = [](std::string s) { return s.empty() ? std::string("-") : s; };
        const MachineView v(item);
        rows.push_back({name, dash(v.role()), dash(v.address()), dash(v.install_disk()),
                        dash(v.install_image()), selecting(item)});
    }
    std::string out = rows.size() > 1 ? util::format_table(rows) : "no machine to create\n";
    if (others > 0) {
        out += "(" + std::to_string(others) + (others == 1 ? " other item" : " other items") +
               " passed through)\n";
    }
    return out;
}

} // namespace ichor::stages
