#include "common/stages/plan_cluster.h"

#include "common/cni/values.h"
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/drift/drift.h"
#include "common/inspection/view.h"
#include "common/render/render.h"
#include "common/stages/cluster_plan.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace ichor::stages {

using doc::Value;
using inspection::View;
using objects::MachineView;

namespace {

using namespace cluster_plan;

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
                   vocab::code::k_invalid_cluster_name, "name the TalosCluster: --cluster NAME");
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

// plan() over the items of `list`, lent to it and given back, not copied (the Inspections of 256
// nodes are tens of MB): it keeps them first and in order (the planned objects are gone already:
// drop_planned) and appends what it makes, which stays in `out`; `nodes` point to the items again.
Outcome plan_lent(doc::ResourceList& list, std::vector<Node>& nodes, const PlanOptions& po,
                  doc::ResourceList& out) {
    const std::size_t kept = list.items.size();
    std::vector<std::size_t> at;
    for (const auto& n : nodes) {
        at.push_back(static_cast<std::size_t>(n.item - &list.items[0]));
    }
    out.items = std::move(list.items);
    list.items = Value::array();
    Outcome planned = plan(out, po);
    Value made = Value::array();
    for (std::size_t i = 0; i < out.items.size(); ++i) {
        (i < kept ? list.items : made).push_back(std::move(out.items[i]));
    }
    out.items = std::move(made);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].item = &list.items[at[i]];
    }
    return planned;
}

// Each machine's drift against the new cluster (trust, versions, role, install fields, classes),
// one machine-layer capture each. The outcome to stop with when plan() fails or a control plane is
// left out (its machines cannot be released without it, and nothing is written).
std::optional<Outcome> plan_machines(doc::ResourceList& list, std::vector<Node>& nodes,
                                     const PlanOptions& po, Refusals& refuse, MachinePlans& out) {
    Outcome planned = plan_lent(list, nodes, po, out.items);
    if (planned.error) {
        return planned;
    }
    std::set<std::string> planned_uuids;
    for (const auto& item : out.items.items) {
        if (is_kind(item, "TalosMachine")) {
            out.machines.push_back(&item);
            planned_uuids.insert(util::to_lower(MachineView(item).uuid()));
        }
    }
    for (const auto& n : nodes) {
        std::string uuid = util::to_lower(View(*n.item).uuid());
        if (planned_uuids.count(uuid) == 0) {
            out.left_out.push_back(&n);
        }
        out.by_uuid[std::move(uuid)] = &n;
    }
    // Moved, not copied: nothing reads plan()'s results from `out` again, and on a realistic
    // cluster they are thousands of per-machine findings (bench/HISTORY.md, "the plan's peak").
    for (auto& r : out.items.results) {
        const std::string code = r["tags"].value(std::string(vocab::k_tag_code), "");
        if (code == vocab::code::k_plan || code == vocab::code::k_nothing_to_adopt) {
            continue; // the per-machine summary; this plan has its own
        }
        list.results.push_back(std::move(r));
    }
    out.items.results = Value::array();
    bool cp_blocked = false;
    for (const auto* n : out.left_out) {
        if (n->role == "controlplane") {
            cp_blocked = true;
            refuse.add(n->address + ": control plane " + n->hostname +
                           " is refused or blocked (see its results above), and a cluster is "
                           "not adopted "
                           "without all its control planes; " +
                           std::string(vocab::k_nothing_written),
                       std::string(vocab::code::k_control_plane_blocked),
                       "change the node as its results say, then plan again", n->item);
        }
    }
    return cp_blocked ? std::optional<Outcome>(refused(nodes)) : std::nullopt;
}

// Each planned machine's render and its class A findings, the input of the layering. plan() kept
// each writable machine's render and changes (`kept`, by address): they are taken as they are,
// the same input rendered and diffed the same way, when they were found under the context the
// layering classifies with; otherwise the machine is rendered and diffed here.
std::vector<Planned> planned_work(const MachinePlans& mp, const render::ClusterSpec& spec,
                                  const ClusterPlanOptions& o,
                                  std::map<std::string, KeptWork>& kept) {
    drift::Context ctx{!spec.registry_mirrors.is_null(), spec.cni_preset, spec.cilium_manifests};
    std::vector<Planned> work;
    for (const Value* m : mp.machines) {
        Planned p;
        p.machine = m;
        if (auto it = mp.by_uuid.find(util::to_lower(MachineView(*m).uuid()));
            it != mp.by_uuid.end()) {
            p.node = it->second;
        }
        p.input.cluster = &spec;
        p.input.bundle = o.bundle;
        p.input.role = MachineView(*m).role();
        p.input.machine = text_at(*m, "metadata.name");
        p.input.install.disk = MachineView(*m).install_disk();
        p.input.install.image = MachineView(*m).install_image();
        p.input.install.wipe = MachineView(*m).install_wipe();
        if (p.node == nullptr) {
            continue;
        }
        p.live_facts = &p.node->facts;
        p.ctx = node_context(ctx, *p.node);
        std::vector<drift::Change> changes;
        auto k = kept.find(MachineView(*m).address());
        bool reuse = false;
        if (k != kept.end() && k->second.usable) {
            // the same but for install_disk_rendered, which analyze set from the same render
            drift::Context ours = p.ctx;
            ours.install_disk_rendered = k->second.worked.context.install_disk_rendered;
            reuse = ours == k->second.worked.context;
        }
        if (reuse) {
            p.ctx = k->second.worked.context;
            p.rendered = std::move(k->second.rendered);
            p.rendered_facts = std::move(k->second.worked.rendered_facts);
            changes = std::move(k->second.worked.changes);
            kept.erase(k);
        } else {
            auto rendered = render::render(p.input);
            if (!rendered) {
                continue; // plan() already rendered it; cannot differ
            }
            p.rendered_facts = drift::normalize(*rendered);
            p.rendered = std::move(*rendered);
            // as drift::analyze does: a node's diskSelector is class A only where the render has
            // no disk, and the layering and its verify must classify it as the machine's plan did
            p.ctx.install_disk_rendered = drift::renders_install_disk(p.rendered_facts);
            changes = drift::diff(*p.live_facts, p.rendered_facts);
            if (const Value* docs = View(*p.node->item).config();
                docs != nullptr && docs->is_array()) {
                const std::vector<Value> live(docs->begin(), docs->end());
                for (auto& mv : drift::layout_moves(live, p.rendered, changes, p.ctx)) {
                    changes.push_back(std::move(mv));
                }
            }
        }
        for (auto& c : changes) {
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
                        vocab::code::k_layers_did_not_verify);
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
                    vocab::code::k_layers);
}

bool is_control_plane(const Value* m) {
    return MachineView(*m).is_control_plane();
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
                   vocab::code::k_cluster_exists,
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
                    vocab::code::k_resume);
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
    list.add_result(doc::Severity::Info, summary, std::string(vocab::code::k_plan));
}

Outcome nothing_to_adopt(doc::ResourceList& list) {
    list.add_result(doc::Severity::Error,
                    "no Inspection in the input: nothing to adopt; hint: kubectl ichor "
                    "adopt --talosconfig FILE --nodes ADDR,...",
                    std::string(vocab::code::k_nothing_to_adopt));
    Outcome out;
    out.stopped = 0;
    out.error = make_error(ErrorKind::Usage, "no node to adopt", "--nodes ADDR,...",
                           std::string(vocab::code::k_nothing_to_adopt));
    return out;
}

// The phases of a whole-cluster plan: read the Inspections, check the cluster, build its
// TalosCluster, plan each machine, layer their captures, order the objects, check a rerun.
Outcome plan_whole(doc::ResourceList& list, const ClusterPlanOptions& o) {
    if (o.bundle == nullptr) {
        return failed(make_error(ErrorKind::Config, "plan_cluster: no secrets bundle", "",
                                 vocab::code::k_no_bundle));
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
                   vocab::code::k_cluster_unreadable,
                   "kubectl ichor inspect " + cp->address + " -o yaml");
        return refused(nodes);
    }
    MachinePlans mp;
    std::map<std::string, KeptWork> kept;
    // Each node's configuration was normalized by read_nodes; the drift of each machine reads it
    // from there (a node whose address two Inspections give is normalized again).
    std::map<std::string, const Value*> live_facts;
    std::set<std::string> twice;
    for (const auto& n : nodes) {
        if (!n.facts.is_null() && !live_facts.emplace(n.address, &n.facts).second) {
            twice.insert(n.address);
        }
    }
    for (const auto& a : twice) {
        live_facts.erase(a);
    }
    PlanOptions po{name, o.ns, false, &cluster_obj, o.bundle, {}, {}, &kept, &live_facts};
    if (auto stop = plan_machines(list, nodes, po, refuse, mp)) {
        return *stop;
    }
    std::vector<Value> patches;
    std::vector<Value> credentials;
    choose_patches(list, planned_work(mp, *spec, o, kept), mp, name, o.ns, patches, credentials);
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
