#include "common/stages/node_check.h"

#include "common/inspection/view.h"
#include "common/stages/plan.h"
#include "common/talos/errors.h"
#include "common/util/strings.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace ichor::stages {

using doc::Value;

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

const Value* inspection_of(const doc::ResourceList& plan, const std::string& address) {
    for (const auto& item : plan.items) {
        const inspection::View v(item);
        if (!v.is_inspection()) {
            continue;
        }
        const std::int64_t port = v.port().value_or(talos::k_apid_port);
        if (v.node() == address || v.node() + ":" + std::to_string(port) == address) {
            return &item;
        }
    }
    return nullptr;
}

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

// The default seam: a client with the inspection's credential, through the endpoint when the
// Inspection was read through one. Endpoints are made before the threads start and shared.
class Dialer {
  public:
    Dialer(const InspectOptions& io, const std::vector<Check>& checks) : m_io(io) {
        for (const auto& c : checks) {
            if (!c.target || c.target->via_endpoint.empty() ||
                m_endpoints.count(c.target->via_endpoint) != 0) {
                continue;
            }
            if (auto a = talos::parse_address(c.target->via_endpoint); a) {
                m_endpoints.emplace(
                    c.target->via_endpoint,
                    talos::Endpoint(*a, talos::mutual_tls(*io.context, io.call_timeout_ms)));
            }
        }
    }

    Result<talos::DryRunAnswer> operator()(const NodeTarget& t, const std::string& config) const {
        if (t.via_endpoint.empty()) {
            talos::NodeClient c(t.address, talos::mutual_tls(*m_io.context, m_io.call_timeout_ms));
            return c.dry_run_configuration(config);
        }
        auto ep = m_endpoints.find(t.via_endpoint);
        if (ep == m_endpoints.end()) {
            return make_error(ErrorKind::Usage, "bad endpoint \"" + t.via_endpoint + "\"");
        }
        talos::NodeClient c(ep->second, t.address.host);
        return c.dry_run_configuration(config);
    }

  private:
    const InspectOptions& m_io;
    std::map<std::string, talos::Endpoint> m_endpoints;
};

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

// The class B paths the plan lists for node `node`.
std::vector<std::string> class_b_paths(const doc::ResourceList& plan, const std::string& node) {
    std::vector<std::string> out;
    for (const auto& r : plan.results) {
        const Value* tags = doc::find_path(r, "tags");
        if (tags == nullptr || !tags->is_object() ||
            tags->value(std::string(doc::k_tag_class), "") != "B" ||
            tags->value(std::string(doc::k_tag_node), "") != node) {
            continue;
        }
        std::string path = doc::get_string(r, "field.path");
        if (!path.empty() && std::find(out.begin(), out.end(), path) == out.end()) {
            out.push_back(path);
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

// The results of one machine; true when the node accepted it.
bool report(doc::ResourceList& plan, const Check& c, const NodeCheckOptions& o,
            const std::vector<std::string>& class_b, bool& unreachable) {
    const std::string who = c.name + " (" + c.node + ")";
    const std::string patches_hint =
        "kubectl get talosconfigpatches -n " + o.ns + " -l " + vocab::cluster_selector(o.cluster);
    if (!c.failure.empty() || !c.answer) {
        Error e =
            !c.failure.empty() ? make_error(ErrorKind::Findings, c.failure) : c.answer.error();
        Value tags = node_tags(c);
        if (e.code == "InvalidArgument") {
            std::string hint = patches_hint + " (fix the patch the node's words point to)";
            tags[std::string(vocab::k_tag_hint)] = hint;
            plan.add_result(doc::Severity::Error,
                            who + ": the node rejects the rendered configuration: " +
                                node_words(e) + "; this machine is blocked; hint: " + hint,
                            "NodeRejected", c.machine, tags);
            return false;
        }
        unreachable = talos::node_gone(e.code);
        std::string hint = unreachable ? "kubectl ichor inspect " + c.node +
                                             " --talosconfig FILE, or skip the check with "
                                             "--no-node-check"
                                       : patches_hint;
        tags[std::string(vocab::k_tag_hint)] = hint;
        plan.add_result(doc::Severity::Error,
                        who + ": the node could not check the plan: " + e.message +
                            "; this machine is blocked; hint: " + hint,
                        "NodeCheckFailed", c.machine, tags);
        return false;
    }
    const std::vector<std::string> changes = dry_run_changes(c.answer->mode_details);
    Value tags = node_tags(c);
    tags[std::string(k_tag_answer)] = c.answer->mode_details;
    std::string text = who + ": the node accepts the rendered configuration; " +
                       (changes.empty() ? std::string("it would change nothing")
                                        : "it would change " + listed(changes));
    for (const auto& w : c.answer->warnings) {
        text += "; the node warns: " + w;
    }
    plan.add_result(doc::Severity::Info, text, "NodeCheck", c.machine, tags);
    auto unmatched = [](const std::vector<std::string>& a, const std::vector<std::string>& b,
                        bool a_is_node) {
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
    };
    const auto node_only = unmatched(changes, class_b, true);
    const auto plan_only = unmatched(class_b, changes, false);
    if (!node_only.empty() || !plan_only.empty()) {
        Value mt = node_tags(c);
        std::string hint = "kubectl ichor drift --cluster " + o.cluster +
                           " -f PLAN, and report the render or diff the paths name";
        mt[std::string(vocab::k_tag_hint)] = hint;
        std::string detail;
        if (!node_only.empty()) {
            detail +=
                "the node would change " + listed(node_only) + ", which the plan does not list";
        }
        if (!plan_only.empty()) {
            detail += (detail.empty() ? "" : "; ") + std::string("the plan lists ") +
                      listed(plan_only) + " as class B, which the node would not change";
        }
        plan.add_result(doc::Severity::Warning,
                        who + ": the node's changes and the plan's class B disagree (the node: " +
                            listed(changes) + "; the plan: " + listed(class_b) + "): " + detail +
                            "; the render or the diff is wrong; hint: " + hint,
                        "NodeCheckMismatch", c.machine, mt);
    }
    return true;
}

// Drops the items of the blocked machines: their TalosMachine and machine-layer patches.
void drop_blocked(doc::ResourceList& plan, const std::set<std::string>& blocked) {
    Value kept = Value::array();
    for (auto& item : plan.items) {
        const std::string kind = item.value("kind", "");
        bool drop =
            (kind == "TalosMachine" &&
             blocked.count(doc::get_string(item, "metadata.name")) != 0) ||
            (kind == "TalosConfigPatch" && doc::get_string(item, "spec.layer") == "machine" &&
             blocked.count(doc::get_string(item, "spec.machine")) != 0);
        if (!drop) {
            kept.push_back(std::move(item));
        }
    }
    plan.items = std::move(kept);
}

void ask_all(std::vector<Check>& checks, const DryRunNode& dry_run, int concurrency) {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < checks.size(); i = next++) {
            Check& c = checks[i];
            if (c.failure.empty()) {
                c.answer = dry_run(*c.target, c.config);
            }
        }
    };
    const int n =
        std::clamp(concurrency, 1, static_cast<int>(std::max<std::size_t>(checks.size(), 1)));
    std::vector<std::thread> threads;
    for (int t = 1; t < n; ++t) {
        threads.emplace_back(work);
    }
    work();
    for (auto& t : threads) {
        t.join();
    }
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
    std::vector<Check> checks;
    for (const auto& item : plan.items) {
        if (item.value("kind", "") != "TalosMachine") {
            continue;
        }
        Check c;
        c.machine = &item;
        c.name = doc::get_string(item, "metadata.name");
        const std::string address = doc::get_string(item, "spec.address");
        const Value* insp = inspection_of(plan, address);
        c.node = insp != nullptr ? inspection::View(*insp).node() : address;
        auto addr = talos::parse_address(address);
        if (!addr) {
            c.failure = "spec.address: " + addr.error().message;
        } else {
            c.target = NodeTarget{*addr, insp != nullptr ? inspection::View(*insp).via_endpoint()
                                                         : std::string()};
        }
        if (auto docs = render_machine(item, *cluster, *o.bundle, patches); !docs) {
            c.failure = c.failure.empty() ? docs.error().message : c.failure;
        } else {
            c.config = doc::to_yaml_stream(*docs);
        }
        checks.push_back(std::move(c));
    }
    if (checks.empty()) {
        return {};
    }
    std::optional<Dialer> dialer;
    if (!o.dry_run) {
        dialer.emplace(o.inspect, checks);
    }
    DryRunNode ask =
        o.dry_run ? o.dry_run : DryRunNode([&](const NodeTarget& t, const std::string& cfg) {
            return (*dialer)(t, cfg);
        });
    ask_all(checks, ask, o.inspect.concurrency);
    Outcome out;
    std::set<std::string> blocked;
    for (const auto& c : checks) {
        bool unreachable = false;
        if (report(plan, c, o, class_b_paths(plan, c.node), unreachable)) {
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

std::vector<std::string> dry_run_changes(std::string_view details) {
    std::vector<std::string> out;
    const std::string_view lead = "Config diff:\n\n";
    auto start = details.find(lead);
    if (start == std::string_view::npos) {
        return out;
    }
    details.remove_prefix(start + lead.size());
    std::vector<std::pair<std::size_t, std::string>> parents; // (indent, key)
    bool in_hunk = false;
    for (const auto& line : util::split(details, '\n')) {
        if (line.starts_with("@@")) {
            parents.clear();
            in_hunk = true;
            continue;
        }
        if (!in_hunk || line.empty() || (line[0] != ' ' && line[0] != '+' && line[0] != '-')) {
            continue;
        }
        std::string_view body = std::string_view(line).substr(1);
        if (body == "---") {
            parents.clear(); // the next document
            continue;
        }
        const std::size_t indent = body.find_first_not_of(' ');
        if (indent == std::string_view::npos) {
            continue;
        }
        std::string_view rest = body.substr(indent);
        const bool item = rest == "-" || rest.starts_with("- ");
        std::string key;
        if (!item) {
            auto colon = rest.find(": ");
            if (colon == std::string_view::npos && rest.ends_with(':')) {
                colon = rest.size() - 1;
            }
            if (colon != std::string_view::npos) {
                key = std::string(rest.substr(0, colon));
                if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') &&
                    key.back() == key.front()) {
                    key = key.substr(1, key.size() - 2);
                }
            }
        }
        while (!parents.empty() && parents.back().first >= indent) {
            parents.pop_back();
        }
        std::vector<std::string> path;
        for (const auto& [i, k] : parents) {
            path.push_back(k);
        }
        if (!key.empty()) {
            path.push_back(key);
        }
        if ((line[0] == '+' || line[0] == '-') && !path.empty()) {
            std::string p = util::join(path, ".");
            if (std::find(out.begin(), out.end(), p) == out.end()) {
                out.push_back(std::move(p));
            }
        }
        if (!key.empty()) {
            parents.emplace_back(indent, key);
        }
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
