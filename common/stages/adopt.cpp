// The adoption's flow (adopt.h): both inputs through inspect, trustcheck, plan and the node check,
// then consent, hold apply and hold release, over the seams alone. The real seams are in
// adopt_world.cpp.
#include "common/stages/adopt.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/status.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/stages/trust.h"
#include "common/util/platform.h"
#include "common/util/strings.h"

#include <tuple>

namespace ichor::stages {

namespace {

using doc::Value;
using objects::MachineView;

std::string code_of(const Value& result) {
    return result["tags"].value(std::string(vocab::k_tag_code), "");
}

// The names of the plan's TalosMachine items, in its order.
std::vector<std::string> machine_names(const doc::ResourceList& plan) {
    std::vector<std::string> names;
    for (const auto& i : plan.items) {
        if (i.value("kind", "") == "TalosMachine") {
            names.push_back(doc::get_string(i, "metadata.name"));
        }
    }
    return names;
}

// The release's zero-drift read: the credential, the endpoint and the call timeout of `nodes`,
// the reach every other read of the adoption has (before, the whole-cluster release and the
// --add-machine rerun read the nodes directly even when the nodes were reached through an
// endpoint).
InspectOptions release_reach(const AdoptNodes& nodes) {
    const InspectOptions all = nodes.reach({});
    InspectOptions io;
    io.context = all.context;
    io.talosconfig_path = all.talosconfig_path;
    io.call_timeout_ms = all.call_timeout_ms;
    io.endpoint = all.endpoint;
    return io;
}

ReleaseOptions release_over(const AdoptWorld& w, const std::string& cluster,
                            std::vector<std::string> machines, const bundle::Bundle& bundle,
                            const Value& talos_cluster, const AdoptOptions& o) {
    ReleaseOptions ro;
    ro.objects = w.objects;
    ro.cluster = cluster;
    ro.machines = std::move(machines);
    ro.inspect = release_reach(*w.nodes);
    ro.read_node = w.nodes->read_node(ro.inspect);
    ro.bundle = &bundle;
    ro.talos_cluster = &talos_cluster;
    ro.timeout_ms = o.timeout_ms;
    ro.clock = w.clock;
    ro.report = w.report;
    return ro;
}

ApplyOptions apply_over(const AdoptWorld& w, const AdoptOptions& o, const bundle::Bundle* bundle) {
    ApplyOptions ao;
    ao.objects = w.objects;
    ao.backup_dir = o.backup_dir;
    ao.now_rfc3339 = w.clock->now_rfc3339();
    ao.report = w.report;
    ao.bundle = bundle;
    // Both adoptions read the nodes as hold apply does: up to --concurrency at once.
    ao.read_concurrency = o.concurrency;
    ao.read_configs = w.nodes->configs_reader();
    ao.write_concurrency = o.concurrency;
    ao.writers = w.writers;
    return ao;
}

// Before consent, each node confirms its machine's configuration (a dry run, nothing applied).
NodeCheckOptions node_check_over(const AdoptWorld& w, std::string cluster,
                                 const Value* talos_cluster, const bundle::Bundle* bundle,
                                 std::vector<Value> patches, InspectOptions io) {
    NodeCheckOptions nc{std::move(cluster),
                        w.objects->ns(),
                        talos_cluster,
                        bundle,
                        std::move(patches),
                        std::move(io),
                        {}};
    nc.dry_run = w.nodes->dry_run();
    nc.read_config = w.nodes->node_config();
    return nc;
}

// ---- a whole cluster ----

// The first control plane among the Inspections, else null.
const Value* first_control_plane(const doc::ResourceList& list) {
    for (const auto& item : list.items) {
        const inspection::View v(item);
        if (v.is_inspection() && (v.role() == "controlplane" || v.role() == "init")) {
            return &item;
        }
    }
    return nullptr;
}

// cluster.discovery.enabled in the control plane's configuration (Talos's default is on).
bool discovery_enabled(const Value& cp) {
    const Value* config = inspection::View(cp).config();
    if (config == nullptr) {
        return false;
    }
    for (const auto& d : *config) {
        if (d.contains("kind")) {
            continue;
        }
        const Value* e = doc::find_path(d, "cluster.discovery.enabled");
        return e != nullptr && e->is_boolean() && e->get<bool>();
    }
    return false;
}

// The control planes' configurations, as the Inspections read them.
std::vector<cni::ControlPlane> control_planes(const doc::ResourceList& list) {
    std::vector<cni::ControlPlane> out;
    for (const auto& item : list.items) {
        const inspection::View v(item);
        if (!v.is_inspection() || (v.role() != "controlplane" && v.role() != "init") ||
            v.config() == nullptr) {
            continue;
        }
        cni::ControlPlane cp;
        cp.node = v.node();
        cp.config.documents.assign(v.config()->begin(), v.config()->end());
        const std::string ver = v.talos_version();
        cp.talos_1_14 = !ver.starts_with("v1.12") && !ver.starts_with("v1.13") &&
                        !ver.starts_with("1.12") && !ver.starts_with("1.13");
        out.push_back(std::move(cp));
    }
    return out;
}

int planned_control_planes(const doc::ResourceList& list) {
    int n = 0;
    for (const auto& i : list.items) {
        n += i.value("kind", "") == "TalosMachine" && MachineView(i).is_control_plane();
    }
    return n;
}

// What the whole-cluster plan leaves for the writes.
struct Whole {
    bundle::Bundle bundle;
    Value cluster;            // the TalosCluster as planned (for the release's zero-drift check)
    bool cni_install = false; // no CNI: Ichor installs Cilium; the Nodes must be Ready first
};

// The bundle: the file, else recovered read-only from a control plane (the first by default).
Result<std::string> whole_bundle(const ClusterToAdopt& in, const Value* cp, const AdoptWorld& w,
                                 bundle::Bundle& out) {
    BundleSource src;
    src.file = in.bundle_file;
    if (src.file.empty()) {
        src.recover_from = !in.recover_from.empty() ? in.recover_from
                           : cp != nullptr          ? inspection::View(*cp).node()
                                                    : std::string();
        src.recover_to = in.recover_to;
    }
    if (src.file.empty() && src.recover_from.empty()) {
        // no control plane: plan_cluster refuses it by name; a bundle of no one is not needed
        out = bundle::Bundle{};
    } else {
        Reporter* r = w.report;
        auto b = w.nodes->load_bundle(src, nullptr, [r](std::string_view m) { r->warning(m); });
        if (!b) {
            return b.error();
        }
        out = *b;
    }
    return src.file.empty() ? "recovered from " + src.recover_from : "from " + src.file;
}

// A control plane its node rejects refuses the whole cluster, as a blocked one does.
void refuse_without_control_plane(doc::ResourceList& list, Outcome& planned) {
    Value kept = Value::array();
    for (auto& i : list.items) {
        if (i.value("kind", "") == "Inspection") {
            kept.push_back(std::move(i));
        }
    }
    list.items = std::move(kept);
    list.add_result(doc::Severity::Error,
                    "a control plane's node rejected its configuration (see its results "
                    "above), and a cluster is not adopted without all its control planes; " +
                        std::string(vocab::k_nothing_written) +
                        "; hint: fix what the node names, then plan again",
                    std::string(vocab::code::k_control_plane_blocked));
    planned.stopped += planned.done;
    planned.done = 0;
}

// The node's own dry run of each planned machine: a control plane it refuses refuses the cluster.
Outcome checked_on_nodes(Outcome planned, doc::ResourceList& list, const AdoptOptions& o,
                         const AdoptWorld& w, Whole& whole, const std::string& name,
                         const InspectOptions& io) {
    const int cps = planned_control_planes(list);
    planned = with_node_check(
        planned, node_check(list, node_check_over(w, name, &whole.cluster, &whole.bundle, {}, io)));
    if (!planned.error && planned_control_planes(list) < cps) {
        refuse_without_control_plane(list, planned);
    }
    if (auto st = keep_stage(o.keep_stages, "4-node-check.yaml", list); !st && !planned.error) {
        return failed(st.error());
    }
    return planned;
}

// The cluster's plan over the list that inspect and trustcheck made (plan_cluster): what it reads
// of the cluster's Kubernetes API and of Talos discovery lives only while it plans, so none of it
// is held through the node check.
Outcome plan_over_cluster(const ClusterToAdopt& in, const AdoptWorld& w, Whole& whole,
                          const Value* cp, const std::string& name,
                          const std::string& bundle_source, doc::ResourceList& list) {
    const std::string& ns = w.objects->ns();
    ClusterPlanOptions po;
    po.cluster = in.cluster;
    po.ns = ns;
    po.bundle = &whole.bundle;
    po.bundle_source = bundle_source;
    auto objects = w.cluster->cni_objects();
    if (!objects) {
        return failed(objects.error());
    }
    po.cni = decide_cni(*objects, control_planes(list), in.cni, in.accept_cilium_diff);
    whole.cni_install = po.cni.no_cni && po.cni.refusal.empty();
    // Only what the plan reads of each Node, and the rest of the CNI's objects let go: 256 Nodes
    // were 4 MB of the plan's peak (bench/HISTORY.md, "the plan's peak").
    for (auto& n : objects->nodes) {
        po.kube_nodes.push_back(plan_node_fields(n));
    }
    *objects = cni::ClusterObjects{};
    std::tie(po.ichor_api_served, po.ichor_api_missing) = w.cluster->ichor_api();
    Value existing;
    if (po.ichor_api_served) {
        auto c = w.objects->get("talosclusters", ns, name);
        if (c) {
            existing = *c;
            po.existing_cluster = &existing;
        } else if (c.error().code != kube::reason::k_not_found) {
            return failed(c.error().wrap("reading TalosCluster " + name));
        }
    }
    if (cp != nullptr && discovery_enabled(*cp)) {
        auto m = w.nodes->members(*cp);
        if (!m) {
            return failed(m.error().wrap("reading Talos discovery's members"));
        }
        po.members = std::move(*m);
    }
    return plan_cluster(list, po);
}

Outcome plan_whole_cluster(const ClusterToAdopt& in, const AdoptOptions& o, const AdoptWorld& w,
                           Whole& whole, doc::ResourceList& list) {
    const std::string& ns = w.objects->ns();
    const InspectOptions io = w.nodes->reach(in.nodes);
    w.report->status("reading " + std::to_string(io.addresses.size()) + " node(s)");
    w.nodes->inspect(list, io);
    w.report->end_status();
    // The inspection's connections and replies are gone; their pages, scattered through the loop
    // threads' arenas, would otherwise stay resident under the plan's peak (bench/HISTORY.md,
    // "the plan's peak").
    util::platform::release_free_memory();
    if (auto st = keep_stage(o.keep_stages, "1-inspect.yaml", list); !st) {
        return failed(st.error());
    }
    const Value* cp = first_control_plane(list);
    std::string name = in.cluster;
    if (name.empty() && cp != nullptr) {
        name = inspection::View(*cp).cluster_name();
    }
    if (name.empty()) {
        name = "unnamed";
    }
    auto bundle_source = whole_bundle(in, cp, w, whole.bundle);
    if (!bundle_source) {
        return failed(bundle_source.error());
    }
    check_trust(list, {&whole.bundle, name, ns});
    if (auto st = keep_stage(o.keep_stages, "2-trustcheck.yaml", list); !st) {
        return failed(st.error());
    }
    Outcome planned = plan_over_cluster(in, w, whole, cp, name, *bundle_source, list);
    if (planned.error) {
        return planned;
    }
    for (const auto& item : list.items) {
        if (item.value("kind", "") == "TalosCluster") {
            whole.cluster = item;
        }
    }
    if (auto st = keep_stage(o.keep_stages, "3-plan.yaml", list); !st) {
        return failed(st.error());
    }
    if (!o.node_check || planned.done == 0) {
        return planned;
    }
    // The plan's scratch (each machine's renders, facts and captures, the Kubernetes reads) is
    // freed; its pages would otherwise stay resident under the node check's own, whose loop
    // threads allocate in arenas of their own (bench/HISTORY.md, "the realistic plan's CPU").
    util::platform::release_free_memory();
    return checked_on_nodes(std::move(planned), list, o, w, whole, name, io);
}

// Waits until every Node is Ready (no CNI: Ichor's Cilium is being installed).
Status wait_nodes_ready(const AdoptWorld& w, std::int64_t timeout_ms) {
    const std::int64_t deadline = w.clock->monotonic_ms() + timeout_ms;
    std::vector<std::string> waiting;
    do {
        auto nodes = w.cluster->nodes();
        if (!nodes) {
            return nodes.error();
        }
        waiting.clear();
        for (const auto& n : *nodes) {
            if (condition_status(n, vocab::k_condition_ready) != "True") {
                waiting.push_back(doc::get_string(n, "metadata.name"));
            }
        }
        if (waiting.empty()) {
            w.report->step("cni: Ichor's Cilium runs; every Node is Ready");
            return ok_status();
        }
        w.report->status("cni: waiting for Ichor's Cilium: " + util::join(waiting, ", ") +
                         " not Ready");
        w.clock->sleep_ms(500);
    } while (w.clock->monotonic_ms() < deadline);
    return make_error(ErrorKind::Unreachable,
                      "cni: the Nodes did not become Ready for Ichor's Cilium within " +
                          util::format_duration_ms(timeout_ms) + ": " + util::join(waiting, ", "),
                      "kubectl -n kube-system get pods -l k8s-app=cilium; rerun adopt to resume "
                      "(the machines stay held)",
                      vocab::code::k_cni_not_ready);
}

Outcome write_whole_cluster(const ClusterToAdopt& in, const AdoptOptions& o, const AdoptWorld& w,
                            const Whole& whole, const doc::ResourceList& plan,
                            const Outcome& planned, Adopted& adopted) {
    const std::vector<std::string> names = machine_names(plan);
    const std::string cluster = doc::get_string(whole.cluster, "metadata.name");
    const std::string what =
        "adopt cluster " + cluster + ": create the bundle Secret, TalosCluster " + cluster +
        ", its patches and " + std::to_string(names.size()) + " held TalosMachine(s) (" +
        util::join(names, ", ") + ") in namespace " + w.objects->ns() +
        ", then release them one by one after a live zero-drift check";
    std::vector<std::string> lines = consent_lines(plan);
    for (const auto& r : plan.results) { // what the CNI takeover does is consented to as well
        const std::string code = code_of(r);
        if ((code == vocab::code::k_cni_plan || code == vocab::code::k_cilium_values) &&
            r["tags"].value(std::string(vocab::k_tag_class), "") != "B") {
            lines.push_back(r.value("message", ""));
        }
    }
    if (auto st = w.consent(what, lines); !st) {
        return failed(st.error());
    }
    // The blocked workers' results stay in the report; hold apply writes what the plan creates.
    doc::ResourceList applied = plan;
    Value kept = Value::array();
    for (auto& r : applied.results) {
        if (r.value("severity", "") != "error") {
            kept.push_back(r);
        }
    }
    applied.results = kept;
    Outcome apply = hold_apply(applied, apply_over(w, o, &whole.bundle));
    if (apply.error) {
        w.report->end_status();
        return apply;
    }
    if (whole.cni_install) {
        // Ichor's Cilium goes in once the TalosCluster exists (the ichor-cni Job); a hold is
        // released only onto a network that works.
        if (auto st = wait_nodes_ready(w, o.timeout_ms); !st) {
            w.report->end_status();
            return failed(st.error());
        }
    }
    ReleaseOptions ro = release_over(w, cluster, names, whole.bundle, whole.cluster, o);
    ro.parallel = in.parallel;
    doc::ResourceList& out = adopted.list;
    Outcome release = hold_release(out, ro);
    w.report->end_status();
    if (release.error) {
        return release;
    }
    for (const auto& r : plan.results) {
        if (r.value("severity", "") == "error") {
            out.results.push_back(r); // the blocked workers, named again at the end
        }
    }
    for (auto& r : applied.results) {
        out.results.push_back(r);
    }
    note_stages_run(out, applied.stages_run);
    adopted.write = true;
    release.stopped += apply.stopped + planned.stopped;
    return release;
}

Outcome adopt_whole(const ClusterToAdopt& in, const AdoptOptions& o, const AdoptWorld& w,
                    Adopted& out) {
    Whole whole;
    doc::ResourceList list;
    Outcome planned = plan_whole_cluster(in, o, w, whole, list);
    if (planned.error) {
        return planned;
    }
    if (o.plan_only || planned.done == 0) {
        out.list = std::move(list);
        out.write = true;
        out.plan = true;
        if (!o.plan_only) {
            planned.done = 0; // refused: the plan's results say why; nothing was written
        }
        return planned;
    }
    return write_whole_cluster(in, o, w, whole, list, planned, out);
}

// ---- machines to add ----

struct Added {
    bundle::Bundle bundle;
    std::vector<Value> machines; // the namespace's TalosMachines, as the plan read them
};

// inspect, trustcheck, drift: the plan, exactly as the pipe of the three tools writes it. The
// outcome is the plan's; an error stops the run.
Outcome plan_machines(const MachinesToAdd& in, const AdoptOptions& o, const AdoptWorld& w,
                      Added& added, doc::ResourceList& list) {
    std::vector<talos::Address> addresses;
    for (const auto& text : in.addresses) {
        auto a = talos::parse_address(text);
        if (!a) {
            return failed(a.error());
        }
        addresses.push_back(*a);
    }
    const std::string& ns = w.objects->ns();
    const InspectOptions io = w.nodes->reach(std::move(addresses));
    w.nodes->inspect(list, io);
    Status st = keep_stage(o.keep_stages, "1-inspect.yaml", list);
    check_trust(list, {&added.bundle, in.cluster, ns});
    st = st ? keep_stage(o.keep_stages, "2-trustcheck.yaml", list) : st;
    auto patches = w.objects->list("talosconfigpatches");
    auto machines =
        patches ? w.objects->list("talosmachines") : Result<std::vector<Value>>(patches.error());
    if (!st || !machines) {
        return failed(!st ? st.error() : machines.error());
    }
    added.machines = *machines;
    Outcome planned = plan(list, {in.cluster, ns, true, &in.talos_cluster, &added.bundle, *patches,
                                  std::move(*machines)});
    if (planned.error) {
        return planned;
    }
    if (auto kst = keep_stage(o.keep_stages, "3-plan.yaml", list); !kst) {
        return failed(kst.error());
    }
    if (!o.node_check) {
        return planned;
    }
    planned = with_node_check(
        planned, node_check(list, node_check_over(w, in.cluster, &in.talos_cluster, &added.bundle,
                                                  std::move(*patches), io)));
    if (auto kst = keep_stage(o.keep_stages, "4-node-check.yaml", list); !kst && !planned.error) {
        return failed(kst.error());
    }
    return planned;
}

// The machines of this cluster that the plan skipped as already adopted and that still carry the
// hold: an earlier run was interrupted between its write and its release. A rerun releases them
// after the same zero-drift check (ADR 0128 decision 1 step 3, "idempotent rerun").
std::vector<std::string> left_held(const MachinesToAdd& in, const Added& added,
                                   const doc::ResourceList& plan) {
    std::vector<std::string> names;
    for (const auto& item : plan.items) {
        const std::string uuid = util::to_lower(doc::get_string(item, "status.identity.uuid"));
        if (item.value("kind", "") != "Inspection" || uuid.empty()) {
            continue;
        }
        for (const auto& m : added.machines) {
            if (const MachineView v(m); util::to_lower(v.uuid()) == uuid &&
                                        v.cluster() == in.cluster && v.is_approved() && v.held()) {
                names.push_back(doc::get_string(m, "metadata.name"));
            }
        }
    }
    return names;
}

// The plan's own findings about the nodes nothing is written for (skipped, refused, blocked),
// carried into the final document so that each is named where the outcome is reported.
void carry_stopped(const doc::ResourceList& plan, doc::ResourceList& out) {
    for (const auto& r : plan.results) {
        if (r.value("severity", "") == "error" || code_of(r) == vocab::code::k_already_adopted) {
            out.results.push_back(r);
        }
    }
    note_stages_run(out, plan.stages_run);
}

Outcome release_only(const MachinesToAdd& in, const AdoptOptions& o, const AdoptWorld& w,
                     const Added& added, const doc::ResourceList& plan,
                     const std::vector<std::string>& held, Adopted& adopted) {
    Outcome release;
    if (!held.empty()) {
        w.report->step("Release " + util::join(held, ", ") +
                       ", held by an earlier run, after the zero-drift check");
        release = hold_release(
            adopted.list, release_over(w, in.cluster, held, added.bundle, in.talos_cluster, o));
        w.report->end_status();
        if (release.error) {
            adopted.list = {};
            return release;
        }
    }
    carry_stopped(plan, adopted.list);
    adopted.write = true;
    return release;
}

Outcome write_machines(const MachinesToAdd& in, const AdoptOptions& o, const AdoptWorld& w,
                       const Added& added, const doc::ResourceList& plan,
                       const std::vector<std::string>& held, Adopted& adopted) {
    std::vector<std::string> names = machine_names(plan);
    const std::string what = "create " + std::to_string(names.size()) + " held TalosMachine(s) (" +
                             util::join(names, ", ") + ") and their patches in namespace " +
                             w.objects->ns();
    if (auto st = w.consent(what, consent_lines(plan)); !st) {
        return failed(st.error());
    }
    doc::ResourceList applied = plan;
    Outcome apply = hold_apply(applied, apply_over(w, o, nullptr));
    if (apply.error) {
        w.report->end_status();
        return apply;
    }
    names.insert(names.end(), held.begin(), held.end());
    doc::ResourceList& out = adopted.list;
    Outcome release =
        hold_release(out, release_over(w, in.cluster, names, added.bundle, in.talos_cluster, o));
    w.report->end_status();
    if (release.error) {
        out = {};
        return release;
    }
    carry_stopped(plan, out);
    for (auto& r : applied.results) {
        out.results.push_back(r);
    }
    note_stages_run(out, applied.stages_run);
    adopted.write = true;
    // The adoption's outcome: the machines released, and every machine that stopped in either
    // step (refused or blocked by the plan, or a conflict at apply; a failed check or wait at
    // release): some released and some stopped is partial (exit 5).
    release.stopped += apply.stopped;
    return release;
}

// The plan already refuses the whole run in a result of its own (NothingWritten, NothingToAdopt):
// a second "nothing was written" line would say the same thing again.
bool refused_whole(const doc::ResourceList& plan) {
    for (const auto& r : plan.results) {
        const std::string code = code_of(r);
        if (r.value("severity", "") == "error" &&
            (code == vocab::code::k_nothing_written || code == vocab::code::k_nothing_to_adopt)) {
            return true;
        }
    }
    return false;
}

Outcome add_machines(const MachinesToAdd& in, const AdoptOptions& o, const AdoptWorld& w,
                     Adopted& out) {
    Added added;
    Reporter* r = w.report;
    auto b = w.nodes->load_bundle(in.bundle, &in.talos_cluster,
                                  [r](std::string_view m) { r->warning(m); });
    if (!b) {
        return failed(b.error());
    }
    added.bundle = *b;
    doc::ResourceList plan;
    Outcome planned = plan_machines(in, o, w, added, plan);
    if (planned.error) {
        return planned;
    }
    auto show_plan = [&out, &plan] {
        out.list = plan;
        out.write = true;
        out.plan = true;
    };
    if (o.plan_only || refused_whole(plan)) {
        show_plan();
        if (!o.plan_only) {
            planned.done = 0; // nothing was written, as the plan's own refusal says
        }
        return planned;
    }
    // Class C blocks that machine, not the run: the writable machines go on, and each refused or
    // blocked one is named and counted (exit 5). A machine already adopted is skipped, and one an
    // interrupted run left held is released now (a rerun converges and exits 0).
    const std::vector<std::string> held = left_held(in, added, plan);
    if (planned.done == 0 && held.empty() && planned.stopped > 0) {
        show_plan();
        return failed(make_error(ErrorKind::Findings,
                                 "every machine is refused or blocked (see the results above); " +
                                     std::string(vocab::k_nothing_written),
                                 "kubectl ichor adopt ... --plan, then fix what the results name",
                                 std::string(vocab::code::k_nothing_written)));
    }
    if (planned.done == 0) {
        Outcome rerun = release_only(in, o, w, added, plan, held, out);
        rerun.skipped += planned.skipped;
        rerun.stopped += planned.stopped;
        return rerun;
    }
    return write_machines(in, o, w, added, plan, held, out);
}

} // namespace

Outcome adopt(const std::variant<ClusterToAdopt, MachinesToAdd>& input, const AdoptOptions& options,
              const AdoptWorld& world, Adopted& out) {
    if (const auto* whole = std::get_if<ClusterToAdopt>(&input)) {
        return adopt_whole(*whole, options, world, out);
    }
    return add_machines(std::get<MachinesToAdd>(input), options, world, out);
}

} // namespace ichor::stages
