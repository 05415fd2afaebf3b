#include "common/stages/node_check.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/machineconfig/layout.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/talos/errors.h"
#include "common/talos/loop.h"
#include "common/talos/loops.h"
#include "common/talos/reach.h"
#include "common/util/strings.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

namespace ichor::stages {

using doc::Value;
using objects::PatchView;

namespace {

constexpr std::string_view k_stage = "node-check";
// The node's answer as it came, beside the message that summarises it.
constexpr std::string_view k_tag_answer = "ichor.maesh.dev/node-answer";

std::vector<std::string> segments(std::string_view path) {
    return util::split(path, '.');
}

// One planned machine and what became of it.
struct Check {
    const Value* machine = nullptr;
    std::string name;
    std::string node; // how the drift stage's results name it (the Inspection's address)
    std::optional<NodeTarget> target;
    std::string config;
    std::string failure; // set when the machine could not be rendered or addressed
    Result<talos::DryRunAnswer> answer = make_error(ErrorKind::Internal, "not asked");
};

// The namespace's patches with the plan's own (a plan's item replaces a patch of its name).
std::vector<Value> all_patches(const doc::ResourceList& plan, const NodeCheckOptions& o) {
    std::map<std::string, Value> by_name;
    std::vector<std::string> order;
    auto put = [&](const Value& p) {
        std::string name = doc::get_string(p, "metadata.name");
        if (by_name.count(name) == 0) {
            order.push_back(name);
        }
        by_name[name] = p;
    };
    for (const auto& p : o.patches) {
        put(p);
    }
    for (const auto& item : plan.items) {
        if (item.value("kind", "") == "TalosConfigPatch") {
            put(item);
        }
    }
    std::vector<Value> out;
    out.reserve(order.size());
    for (const auto& name : order) {
        out.push_back(std::move(by_name[name]));
    }
    return out;
}

// The endpoint `t`'s Inspection was read through (none: directly), to reach it the same way.
Result<std::optional<talos::Address>> recorded_endpoint(const NodeTarget& t) {
    if (t.via_endpoint.empty()) {
        return std::optional<talos::Address>();
    }
    auto e = talos::parse_address(t.via_endpoint);
    if (!e) {
        return e.error();
    }
    return std::optional<talos::Address>(*e);
}

// The default seam: a client with the inspection's credential for each machine, through the
// endpoint when its Inspection was read through one (one channel made now for all, shared by the
// loops: gRPC channels may be).
DryRunNode dry_run_over(const std::vector<Check>& checks, const InspectOptions& io) {
    auto reaches = std::make_shared<std::map<std::string, talos::Reach>>();
    for (const auto& c : checks) {
        if (!c.target || reaches->count(c.target->via_endpoint) != 0) {
            continue;
        }
        if (auto e = recorded_endpoint(*c.target); e) {
            reaches->emplace(c.target->via_endpoint,
                             talos::reach_for(&*io.context, false, *e, io.call_timeout_ms));
        }
    }
    return [reaches](talos::Loop& loop, const NodeTarget& t, const std::string& config,
                     talos::NodeClient::Done<talos::DryRunAnswer> done) {
        auto r = reaches->find(t.via_endpoint);
        if (r == reaches->end()) {
            done(make_error(ErrorKind::Usage, "bad endpoint \"" + t.via_endpoint + "\""));
            return;
        }
        // The client may go once its call is started; the call keeps what it needs.
        r->second.client(t.address).dry_run_configuration(loop, config, std::move(done));
    };
}

// Each machine's dry run on a talos::Loop (one loop per core, up to four, as the inspection
// engine runs them; each keeps its share of the concurrency in flight). Blocking calls on one
// thread per machine in flight cost two thread switches per reply and a malloc arena per thread:
// on 256 nodes the check took more wall and CPU than the inspection, and 10 MB of peak RSS
// (bench/HISTORY.md, "the node check on loops").
void ask_on_loops(std::vector<Check>& checks, const DryRunNode& dry_run, int concurrency) {
    talos::for_each_on_loops(
        concurrency, checks.size(),
        [&](talos::Loop& loop, std::size_t i, const std::function<void()>& done) {
            Check& c = checks[i];
            if (!c.failure.empty()) {
                done();
                return;
            }
            dry_run(loop, *c.target, c.config, [&c, &done](Result<talos::DryRunAnswer> a) {
                c.answer = std::move(a);
                done();
            });
            std::string().swap(c.config); // the request holds its own copy
        });
}

// The node's own words in a rejection: what follows the method in the classified message,
// with Talos's multi-error layout (newlines, tabs) folded into one line.
std::string node_words(const Error& e) {
    std::string_view m = e.message;
    if (auto p = m.find("(ApplyConfiguration): "); p != std::string_view::npos) {
        m.remove_prefix(p + std::string_view("(ApplyConfiguration): ").size());
    }
    std::string out;
    for (char ch : m) {
        bool space = ch == '\n' || ch == '\t' || ch == ' ';
        if (space) {
            if (!out.empty() && out.back() != ' ') {
                out += ' ';
            }
        } else {
            out += ch;
        }
    }
    return std::string(util::trim(out));
}

// The class B paths the plan lists, by node, each once in the plan's order. Read once for all
// machines: the plan carries a result per class A and B fact of every node, and the node check's
// own results, added after this, carry no class.
std::unordered_map<std::string, std::vector<std::string>>
class_b_paths(const doc::ResourceList& plan) {
    std::unordered_map<std::string, std::vector<std::string>> out;
    for (const auto& r : plan.results) {
        const Value* tags = doc::find_path(r, "tags");
        if (tags == nullptr || !tags->is_object()) {
            continue;
        }
        const auto cls = tags->find(doc::k_tag_class);
        const auto node = tags->find(doc::k_tag_node);
        if (cls == tags->end() || node == tags->end() || !cls->is_string() || !node->is_string() ||
            cls->get_ref<const std::string&>() != "B") {
            continue;
        }
        std::string path = doc::get_string(r, "field.path");
        auto& paths = out[node->get<std::string>()];
        if (!path.empty() && std::find(paths.begin(), paths.end(), path) == paths.end()) {
            paths.push_back(std::move(path));
        }
    }
    return out;
}

std::string listed(const std::vector<std::string>& paths) {
    return paths.empty() ? std::string("nothing") : util::join(paths, ", ");
}

Value node_tags(const Check& c) {
    Value t = Value::object();
    t[std::string(doc::k_tag_node)] = c.node;
    return t;
}

std::string patches_hint(const NodeCheckOptions& o) {
    return "kubectl get talosconfigpatches -n " + o.ns + " -l " +
           vocab::cluster_selector(o.cluster);
}

// A node that rejected the render, or could not be asked: the machine is blocked.
void report_failure(doc::ResourceList& plan, const Check& c, const NodeCheckOptions& o,
                    const std::string& who, bool& unreachable) {
    Error e = !c.failure.empty() ? make_error(ErrorKind::Findings, c.failure) : c.answer.error();
    Value tags = node_tags(c);
    if (e.code == talos::code::k_invalid_argument) {
        std::string hint = patches_hint(o) + " (fix the patch the node's words point to)";
        tags[std::string(vocab::k_tag_hint)] = hint;
        plan.add_result(doc::Severity::Error,
                        who + ": the node rejects the rendered configuration: " + node_words(e) +
                            "; this machine is blocked; hint: " + hint,
                        vocab::code::k_node_rejected, c.machine, tags);
        return;
    }
    unreachable = talos::node_gone(e.code);
    std::string hint = unreachable ? "kubectl ichor inspect " + c.node +
                                         " --talosconfig FILE, or skip the check with "
                                         "--no-node-check"
                                   : patches_hint(o);
    tags[std::string(vocab::k_tag_hint)] = hint;
    plan.add_result(doc::Severity::Error,
                    who + ": the node could not check the plan: " + e.message +
                        "; this machine is blocked; hint: " + hint,
                    vocab::code::k_node_check_failed, c.machine, tags);
}

// The items of `a` that no item of `b` names the same fact as.
std::vector<std::string> unmatched(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b, bool a_is_node) {
    std::vector<std::string> out;
    for (const auto& x : a) {
        bool found = std::any_of(b.begin(), b.end(), [&](const std::string& y) {
            return a_is_node ? same_fact(x, y) : same_fact(y, x);
        });
        if (!found) {
            out.push_back(x);
        }
    }
    return out;
}

const std::vector<std::string> k_install = {"machine.install.wipe", "machine.install.disk",
                                            "machine.install.image",
                                            "machine.install.diskSelector"};

// The install settings the node would change that the plan's class B does not list: excused from
// the comparison below, but named, so that the person reads which of theirs the render replaces.
void report_install(doc::ResourceList& plan, const Check& c, const std::string& who,
                    const std::vector<std::string>& changes,
                    const std::vector<std::string>& class_b) {
    std::vector<std::string> install;
    for (const auto& x : unmatched(changes, class_b, true)) {
        if (std::any_of(k_install.begin(), k_install.end(),
                        [&](const std::string& p) { return same_fact(x, p); })) {
            install.push_back(x);
        }
    }
    if (install.empty()) {
        return;
    }
    plan.add_result(doc::Severity::Info,
                    who + ": the render replaces the node's install settings " + listed(install) +
                        " with the TalosMachine's (its disk, image and wipe, read from the node): "
                        "Talos reads them only to install or upgrade, so the running node does "
                        "not change",
                    vocab::code::k_install_replaced, c.machine, node_tags(c));
}

// The node's changes against the plan's class B list: a warning when they disagree.
void compare_with_plan(doc::ResourceList& plan, const Check& c, const NodeCheckOptions& o,
                       const std::string& who, const std::vector<std::string>& changes,
                       const std::vector<std::string>& class_b) {
    // The install fields come from the TalosMachine, which takes them from the node: a change
    // there is the render writing the generator's form of the same value (wipe: false where a
    // hand-written base leaves it out), never one the plan would have to list.
    std::vector<std::string> expected = class_b;
    expected.insert(expected.end(), k_install.begin(), k_install.end());
    const auto node_only = unmatched(changes, expected, true);
    const auto plan_only = unmatched(class_b, changes, false);
    if (node_only.empty() && plan_only.empty()) {
        return;
    }
    Value mt = node_tags(c);
    std::string hint = "kubectl ichor drift --cluster " + o.cluster +
                       " -f PLAN, and report the render or diff the paths name";
    mt[std::string(vocab::k_tag_hint)] = hint;
    std::string detail;
    if (!node_only.empty()) {
        detail += "the node would change " + listed(node_only) + ", which the plan does not list";
    }
    if (!plan_only.empty()) {
        detail += (detail.empty() ? "" : "; ") + std::string("the plan lists ") +
                  listed(plan_only) + " as class B, which the node would not change";
    }
    plan.add_result(doc::Severity::Warning,
                    who + ": the node's changes and the plan's class B disagree (the node: " +
                        listed(changes) + "; the plan: " + listed(class_b) + "): " + detail +
                        "; the render or the diff is wrong; hint: " + hint,
                    std::string(vocab::code::k_node_check_mismatch), c.machine, mt);
}

// The results of one machine; true when the node accepted it.
bool report(doc::ResourceList& plan, const Check& c, const NodeCheckOptions& o,
            const std::vector<std::string>& class_b, bool& unreachable) {
    const std::string who = c.name + " (" + c.node + ")";
    if (!c.failure.empty() || !c.answer) {
        report_failure(plan, c, o, who, unreachable);
        return false;
    }
    const std::vector<std::string> changes = dry_run_changes(c.answer->mode_details);
    Value tags = node_tags(c);
    tags[std::string(k_tag_answer)] = redact_dry_run(c.answer->mode_details);
    std::string text = who + ": the node accepts the rendered configuration; " +
                       (changes.empty() ? std::string("it would change nothing")
                                        : "it would change " + listed(changes));
    for (const auto& w : c.answer->warnings) {
        text += "; the node warns: " + w;
    }
    plan.add_result(doc::Severity::Info, text, vocab::code::k_node_check, c.machine, tags);
    report_install(plan, c, who, changes, class_b);
    compare_with_plan(plan, c, o, who, changes, class_b);
    return true;
}

// Drops the items of the blocked machines: their TalosMachine and machine-layer patches.
void drop_blocked(doc::ResourceList& plan, const std::set<std::string>& blocked) {
    Value kept = Value::array();
    std::set<std::string> dropped_secrets; // the credentials of the patches dropped
    for (const auto& item : plan.items) {
        if (item.value("kind", "") == "TalosConfigPatch" &&
            PatchView(item).layer() == objects::k_layer_machine &&
            blocked.count(PatchView(item).machine()) != 0) {
            dropped_secrets.insert(credentials_secret_name(doc::get_string(item, "metadata.name")));
        }
    }
    for (auto& item : plan.items) {
        const std::string kind = item.value("kind", "");
        bool drop =
            (kind == "TalosMachine" &&
             blocked.count(doc::get_string(item, "metadata.name")) != 0) ||
            (kind == "TalosConfigPatch" && PatchView(item).layer() == objects::k_layer_machine &&
             blocked.count(PatchView(item).machine()) != 0) ||
            (is_credentials_secret(item) &&
             dropped_secrets.count(doc::get_string(item, "metadata.name")) != 0);
        if (!drop) {
            kept.push_back(std::move(item));
        }
    }
    plan.items = std::move(kept);
}

std::string identity_of(const Value& d) {
    if (!d.is_object() || !d.contains("kind")) {
        return "v1alpha1";
    }
    return d.value("kind", "") + "/" + (d.contains("name") ? doc::get_string(d, "name") : "");
}

// The rendered documents in the order the node holds them, the others after them in their own
// order. Talos gives the order of documents no meaning, but its dry run diffs the encoded text,
// where a document in another place reads as a change; a capture appends the documents it writes
// after the generator's, so without this every captured document would.
void in_node_order(std::vector<Value>& docs, const Value* node_docs) {
    if (node_docs == nullptr || !node_docs->is_array()) {
        return;
    }
    std::map<std::string, std::size_t> place;
    for (std::size_t i = 0; i < node_docs->size(); ++i) {
        place.emplace(identity_of((*node_docs)[i]), i);
    }
    std::stable_sort(docs.begin(), docs.end(), [&](const Value& a, const Value& b) {
        auto pa = place.find(identity_of(a));
        auto pb = place.find(identity_of(b));
        const std::size_t ia = pa == place.end() ? place.size() : pa->second;
        const std::size_t ib = pb == place.end() ? place.size() : pb->second;
        return ia < ib;
    });
}

Result<std::string> read_node_config(const NodeTarget& t, const NodeCheckOptions& o) {
    if (o.read_config) {
        return o.read_config(t);
    }
    if (!o.inspect.context) {
        return make_error(ErrorKind::Config, "no talosconfig context to read the node with");
    }
    auto endpoint = recorded_endpoint(t);
    if (!endpoint) {
        return endpoint.error();
    }
    return configs_reader(*o.inspect.context, *endpoint, o.inspect.call_timeout_ms)({t.address},
                                                                                    1)[0];
}

Outcome check_nodes(doc::ResourceList& plan, const NodeCheckOptions& o) {
    if (o.talos_cluster == nullptr || o.bundle == nullptr) {
        return failed(make_error(ErrorKind::Internal, "node check without a cluster or a bundle"));
    }
    if (!o.dry_run && !o.inspect.context) {
        return failed(make_error(ErrorKind::Config, "the node check needs a talosconfig context",
                                 "kubectl ichor credentials " + o.cluster + " > tc"));
    }
    auto cluster = render::parse_cluster(*o.talos_cluster);
    if (!cluster) {
        return failed(cluster.error());
    }
    const std::vector<Value> patches = all_patches(plan, o);
    const render::PatchIndex index(patches);
    const InspectionIndex inspections(plan); // the plan's items do not change below
    std::vector<Check> checks;
    for (const auto& item : plan.items) {
        if (item.value("kind", "") != "TalosMachine") {
            continue;
        }
        Check c;
        c.machine = &item;
        c.name = doc::get_string(item, "metadata.name");
        const std::string address = objects::MachineView(item).address();
        const Value* insp = inspections.find(address);
        c.node = insp != nullptr ? inspection::View(*insp).node() : address;
        auto addr = talos::parse_address(address);
        if (!addr) {
            c.failure = "spec.address: " + addr.error().message;
        } else {
            c.target = NodeTarget{*addr, insp != nullptr ? inspection::View(*insp).via_endpoint()
                                                         : std::string()};
        }
        render::SecretLookup secrets;
        if (c.failure.empty() && carries_credentials(patches)) {
            auto config = read_node_config(*c.target, o);
            if (!config) {
                c.failure = "reading its configuration for the credentials its patches carry: " +
                            config.error().message;
            } else {
                secrets = lookup_in_config(patches, *config);
            }
        }
        if (!c.failure.empty()) {
            // not addressed, or its configuration not read: nothing to render
        } else if (auto docs = render_machine(item, *cluster, *o.bundle, index, secrets); !docs) {
            c.failure = docs.error().message;
        } else {
            if (insp != nullptr) {
                in_node_order(*docs, inspection::View(*insp).config());
            }
            c.config = doc::to_yaml_stream(*docs);
        }
        checks.push_back(std::move(c));
    }
    if (checks.empty()) {
        return {};
    }
    ask_on_loops(checks, o.dry_run ? o.dry_run : dry_run_over(checks, o.inspect),
                 o.inspect.concurrency);
    Outcome out;
    std::set<std::string> blocked;
    const auto class_b = class_b_paths(plan);
    const std::vector<std::string> none;
    for (const auto& c : checks) {
        bool unreachable = false;
        const auto listed_b = class_b.find(c.node);
        if (report(plan, c, o, listed_b != class_b.end() ? listed_b->second : none, unreachable)) {
            ++out.done;
        } else {
            ++out.stopped;
            out.unreachable += unreachable ? 1 : 0;
            blocked.insert(c.name);
        }
    }
    drop_blocked(plan, blocked);
    return out;
}

} // namespace

namespace {

// One line of the diff of a dry run's answer, with what the context shows of where it is.
struct DiffLine {
    char tag = ' ';                // ' ' context, '+' added, '-' removed; 0: not a diff line
    std::vector<std::string> path; // its parents as far as the hunk shows, and its own key
    bool under_secret = false;     // a parent is a secret (or a `config` block): the whole line
    bool secret_key = false;       // its own key is a secret's (or `config`): its value
    std::size_t indent = 0;
    std::string key;
};

std::string unquote(std::string key) {
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') &&
        key.back() == key.front()) {
        return key.substr(1, key.size() - 2);
    }
    return key;
}

// Reads the lines of the unified diff after "Config diff:" (Talos's encoding: four spaces per
// level, a list item "- " under its key); `each(line, text)` sees every line of `details`, in
// order, the lines before the diff with tag 0.
template <class Each> void walk_diff(std::string_view details, Each&& each) {
    const std::string_view lead = "Config diff:\n\n";
    const auto start = details.find(lead);
    // A line's parents are on its own side of the diff: an added line's among the lines the
    // configuration after the change keeps (context and added), a removed line's among those
    // before it (context and removed); a context line is on both.
    std::vector<DiffLine> before;
    std::vector<DiffLine> after;
    bool in_diff = false;
    bool in_hunk = false;
    std::size_t offset = 0;
    for (const auto& line : util::split(details, '\n')) {
        DiffLine d;
        d.tag = 0;
        const bool diff_started = start != std::string_view::npos && offset >= start + lead.size();
        offset += line.size() + 1;
        in_diff = in_diff || diff_started;
        if (in_diff && line.starts_with("@@")) {
            before.clear();
            after.clear();
            in_hunk = true;
        } else if (in_hunk && !line.empty() &&
                   (line[0] == ' ' || line[0] == '+' || line[0] == '-')) {
            std::string_view body = std::string_view(line).substr(1);
            const std::size_t indent = body.find_first_not_of(' ');
            if (body == "---") {
                before.clear(); // the next document
                after.clear();
            } else if (indent != std::string_view::npos) {
                d.tag = line[0];
                d.indent = indent;
                std::string_view rest = body.substr(indent);
                const bool item = rest == "-" || rest.starts_with("- ");
                auto colon = item ? std::string_view::npos : rest.find(": ");
                if (!item && colon == std::string_view::npos && rest.ends_with(':')) {
                    colon = rest.size() - 1;
                }
                if (colon != std::string_view::npos) {
                    d.key = unquote(std::string(rest.substr(0, colon)));
                }
                const bool on_before = line[0] != '+';
                const bool on_after = line[0] != '-';
                auto close = [indent](std::vector<DiffLine>& side) {
                    while (!side.empty() && side.back().indent >= indent) {
                        side.pop_back();
                    }
                };
                if (on_before) {
                    close(before);
                }
                if (on_after) {
                    close(after);
                }
                for (const auto& p : on_after ? after : before) {
                    d.path.push_back(p.key);
                    d.under_secret = d.under_secret || p.under_secret || p.secret_key;
                }
                if (!d.key.empty()) {
                    d.path.push_back(d.key);
                    // a secret's value, or any `config` (KubeEtcdEncryptionConfig's is one whole)
                    d.secret_key = machineconfig::is_secret_key(d.key) || d.key == "config";
                    if (on_before) {
                        before.push_back(d);
                    }
                    if (on_after) {
                        after.push_back(d);
                    }
                }
            }
        }
        each(d, line);
    }
}

} // namespace

namespace {

// The changed lines of one document of the diff as far as a hunk shows it: from a hunk's start or
// a `---` to the next one.
struct DiffDocument {
    std::string kind;   // its `kind:` when the hunk shows it (typed documents only)
    std::string name;   // its `name:`, likewise
    bool whole = false; // its `kind:` line itself is added or removed: the document is
    std::vector<std::vector<std::string>> changed;
};

// The v1alpha1 path that a typed document's field holds, from the layout table (a field, or a
// key below one, or a key of the document's body), or "Kind.path" when the table has none.
std::string v1alpha1_name(const DiffDocument& d, const std::vector<std::string>& path) {
    auto with_name = [&](std::string p) {
        if (auto at = p.find("{name}"); at != std::string::npos && !d.name.empty()) {
            p.replace(at, 6, d.name);
        }
        return p;
    };
    for (std::size_t n = path.size(); n > 0; --n) {
        const std::vector<std::string> head(path.begin(), path.begin() + static_cast<long>(n));
        if (auto home = machineconfig::layout::v1alpha1_of(d.kind, util::join(head, "."));
            !home.empty()) {
            std::vector<std::string> out{with_name(home)};
            out.insert(out.end(), path.begin() + static_cast<long>(n), path.end());
            return util::join(out, ".");
        }
    }
    if (auto body = machineconfig::layout::v1alpha1_of(d.kind, ""); !body.empty()) {
        return with_name(body) + "." + util::join(path, ".");
    }
    return d.kind + "." + util::join(path, ".");
}

// A document added or removed whole, named as facts: the v1alpha1 subtree the layout table
// moves into it (cluster.discovery for DiscoveryServiceConfig), else its one field's home, else
// each field's home for a document of plain fields (KubeClusterConfig, as drift::layout_moves
// names its moves), else its kind (and name), also when the table has several rows for the kind
// (KubeEtcdEncryptionConfig holds either secret).
std::vector<std::string> whole_document_names(const DiffDocument& d) {
    const machineconfig::layout::Document* row = machineconfig::layout::only_document(d.kind);
    if (row != nullptr && !row->moves.empty()) {
        return {std::string(row->moves)};
    }
    if (row != nullptr && !row->due.empty()) {
        return {std::string(row->due)};
    }
    if (row != nullptr && row->fields.size() == 1 && !row->fields[0].field.empty()) {
        return {v1alpha1_name(d, {std::string(row->fields[0].field)})};
    }
    if (row != nullptr && row->fields.size() == 1 && !d.name.empty() &&
        row->fields[0].v1alpha1.find("{name}") != std::string_view::npos) {
        // a named document that is its v1alpha1 entry (RegistryMirrorConfig docker.io:
        // machine.registries.mirrors.docker.io)
        std::string p(row->fields[0].v1alpha1);
        return {p.replace(p.find("{name}"), 6, d.name)};
    }
    if (row != nullptr && machineconfig::layout::plain_fields(*row)) {
        std::vector<std::string> out;
        for (const auto& f : row->fields) {
            out.emplace_back(f.v1alpha1);
        }
        return out;
    }
    return {d.name.empty() ? d.kind : d.kind + "." + d.name};
}

} // namespace

namespace {

// A line that gives its key an empty mapping, an empty list or null (`kernel: {}`): the drift
// drops those (docs/drift-rules.md, "Normalization"), so adding or removing one changes nothing.
bool empty_value(std::string_view rest) {
    const auto colon = rest.find(": ");
    if (colon == std::string_view::npos || rest.starts_with("- ")) {
        return false;
    }
    const std::string_view value = util::trim(rest.substr(colon + 2));
    return value == "{}" || value == "[]" || value == "null" || value == "~";
}

} // namespace

std::vector<std::string> dry_run_changes(std::string_view details) {
    std::vector<DiffDocument> documents(1);
    walk_diff(details, [&](const DiffLine& d, const std::string& line) {
        const std::string_view body =
            line.empty() ? std::string_view() : std::string_view(line).substr(1);
        if (line.starts_with("@@") || body == "---") {
            documents.emplace_back();
        }
        if (d.tag == 0 || d.path.empty()) {
            return;
        }
        DiffDocument& doc = documents.back();
        if (d.indent == 0 && (d.key == "kind" || d.key == "name")) {
            const auto colon = body.find(':');
            std::string value(util::trim(body.substr(colon + 1)));
            (d.key == "kind" ? doc.kind : doc.name) = unquote(value);
            doc.whole = doc.whole || (d.key == "kind" && d.tag != ' ');
        }
        if ((d.tag == '+' || d.tag == '-') && !empty_value(body.substr(d.indent))) {
            doc.changed.push_back(d.path);
        }
    });
    std::vector<std::string> all;
    auto add = [&](std::string p) {
        if (std::find(all.begin(), all.end(), p) == all.end()) {
            all.push_back(std::move(p));
        }
    };
    for (const auto& doc : documents) {
        if (doc.changed.empty()) {
            continue;
        }
        if (doc.whole) {
            for (auto& name : whole_document_names(doc)) {
                add(std::move(name));
            }
            continue;
        }
        for (const auto& path : doc.changed) {
            add(doc.kind.empty() ? util::join(path, ".") : v1alpha1_name(doc, path));
        }
    }
    // A parent whose children changed too (a new mapping) is named by its children.
    std::vector<std::string> out;
    for (const auto& p : all) {
        bool parent = std::any_of(all.begin(), all.end(),
                                  [&](const std::string& q) { return q.starts_with(p + "."); });
        if (!parent) {
            out.push_back(p);
        }
    }
    return out;
}

std::string redact_dry_run(std::string_view details) {
    std::string out;
    walk_diff(details, [&](const DiffLine& d, const std::string& line) {
        std::string text = line;
        const std::size_t body = 1 + d.indent;
        if (d.tag != 0 && d.under_secret) {
            text = text.substr(0, body) + util::sha256_digest(text.substr(body));
        } else if (d.tag != 0 && d.secret_key) {
            const auto colon = text.find(':', body + d.key.size());
            std::string value(util::trim(std::string_view(text).substr(colon + 1)));
            if (!value.empty() && value != "\"\"" && !value.starts_with('|') &&
                !value.starts_with('>')) {
                text = text.substr(0, colon + 1) + " " + util::sha256_digest(value);
            }
        }
        out += text;
        out += '\n';
    });
    if (!out.empty()) {
        out.pop_back(); // split gave one line more than there were newlines
    }
    return out;
}

bool same_fact(std::string_view node_path, std::string_view plan_path) {
    const auto p = segments(node_path);
    const auto q = segments(plan_path);
    // The node's path starts somewhere inside the plan's (its top may be outside the diff's
    // context) and agrees with it for as long as both go on.
    for (std::size_t d = 0; d < q.size(); ++d) {
        const std::size_t overlap = std::min(p.size(), q.size() - d);
        if (overlap == 0) {
            continue;
        }
        if (std::equal(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(overlap),
                       q.begin() + static_cast<std::ptrdiff_t>(d))) {
            return true;
        }
    }
    return false;
}

Outcome with_node_check(Outcome planned, const Outcome& checked) {
    if (checked.error) {
        planned.error = checked.error;
        return planned;
    }
    planned.done = std::max(planned.done - checked.stopped, 0);
    planned.stopped += checked.stopped;
    planned.unreachable += checked.unreachable;
    return planned;
}

Outcome node_check(doc::ResourceList& plan, const NodeCheckOptions& options) {
    return run_stage(k_stage, plan, [&] { return check_nodes(plan, options); });
}

} // namespace ichor::stages
