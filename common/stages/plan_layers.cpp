// The layers of a whole-cluster plan: each machine's class A changes placed in the cluster, role
// or machine layer, the plan's results grouped by layer, and the check that the layers render
// every machine back to its live configuration.
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
#include "common/stages/plan_cluster.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>
#include <set>

namespace ichor::stages::cluster_plan {

using objects::MachineView;

using inspection::View;

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
            a.push_back(MachineView(*p.machine).address());
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
        add_patch(out, p, name, "machine", machine, own, {MachineView(*p.machine).address()},
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
        machine_of[MachineView(*p.machine).address()] = p.input.machine;
        role_of[MachineView(*p.machine).address()] = p.input.role;
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
    const render::PatchIndex index(patches);
    for (const auto& p : planned) {
        render::Input in = p.input;
        in.patches = index.patches_for(in.cluster->name, in.role, in.machine);
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

} // namespace ichor::stages::cluster_plan
