#include "common/cni/preflight.h"

#include "common/cni/values.h"
#include "common/doc/vocabulary.h"
#include "common/util/strings.h"

#include <algorithm>

namespace ichor::cni {

namespace {

using doc::Value;

bool truthy(const Value& v) {
    return (v.is_boolean() && v.get<bool>()) || (v.is_string() && v.get<std::string>() == "true");
}

bool blank(const Value& v) {
    return v.is_null() || (v.is_string() && v.get<std::string>().empty());
}

std::string text_of(const Value& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? "true" : "false";
    }
    return v.dump();
}

// How the chart writes a value into a ConfigMap key or an env variable.
Value format_value(const Compared& row, const Value& v) {
    switch (row.format) {
    case Format::String:
        if (blank(v) && !row.empty.is_null()) {
            return row.empty;
        }
        return v.is_null() ? Value() : Value(text_of(v));
    case Format::StringIfSet:
        return blank(v) ? Value() : Value(text_of(v));
    case Format::Bool:
        if (v.is_null()) {
            return row.empty;
        }
        return Value(text_of(v));
    case Format::BoolIfTrue:
        return truthy(v) ? Value("true") : Value();
    case Format::BoolIfSet:
        return v.is_null() ? Value() : Value(text_of(v));
    case Format::IntIfNonzero:
        return blank(v) || text_of(v) == "0" ? Value() : Value(text_of(v));
    }
    return Value();
}

const Value* find_named(const Value& list, std::string_view name) {
    if (!list.is_array()) {
        return nullptr;
    }
    for (const auto& item : list) {
        if (item.is_object() && item.value("name", "") == name) {
            return &item;
        }
    }
    return nullptr;
}

// A container or init container of the agent's pod template.
const Value* agent_container(const Value& agent, std::string_view name) {
    if (!agent.is_object()) {
        return nullptr;
    }
    for (const char* list :
         {"spec.template.spec.containers", "spec.template.spec.initContainers"}) {
        if (const Value* l = doc::find_path(agent, list); l != nullptr) {
            if (const Value* c = find_named(*l, name)) {
                return c;
            }
        }
    }
    return nullptr;
}

Value sorted(const Value& v) {
    if (!v.is_array()) {
        return v;
    }
    std::vector<std::string> items;
    for (const auto& i : v) {
        items.push_back(text_of(i));
    }
    std::sort(items.begin(), items.end());
    return Value(items);
}

const Value* deployment(const LiveCilium& live, std::string_view name) {
    for (const auto& d : live.deployments) {
        if (doc::get_string(d, "metadata.name") == name) {
            return &d;
        }
    }
    return nullptr;
}

bool covered(std::string_view leaf, const Pinned& p) {
    auto below = [](std::string_view path, std::string_view ancestor) {
        return path.size() > ancestor.size() && util::starts_with(path, ancestor) &&
               path[ancestor.size()] == '.';
    };
    return std::any_of(p.compared.begin(), p.compared.end(), [&](const Compared& c) {
        return leaf == c.path || below(leaf, c.path) || below(c.path, leaf);
    });
}

} // namespace

LiveCilium live_cilium(const ClusterObjects& objects, std::string_view namespace_name) {
    LiveCilium live;
    live.namespace_name = std::string(namespace_name);
    auto here = [&](const Value& o) {
        return doc::get_string(o, "metadata.namespace") == namespace_name;
    };
    for (const auto& cm : objects.configmaps) {
        if (here(cm) && doc::get_string(cm, "metadata.name") == "cilium-config") {
            live.config = cm;
        }
    }
    for (const auto& ds : objects.daemonsets) {
        if (here(ds) && (doc::get_string(ds, "metadata.name") == "cilium" ||
                         doc::get_string(ds, "spec.selector.matchLabels.k8s-app") == "cilium")) {
            live.agent = ds;
        }
    }
    for (const auto& d : objects.deployments) {
        if (here(d)) {
            live.deployments.push_back(d);
        }
    }
    return live;
}

Value live_field(const Compared& row, const LiveCilium& live) {
    switch (row.kind) {
    case LiveKind::Config: {
        const Value* data = doc::find_path(live.config, "data");
        if (data == nullptr || !data->is_object() || !data->contains(row.key)) {
            return Value();
        }
        return (*data)[row.key];
    }
    case LiveKind::Env: {
        const Value* c = agent_container(live.agent, row.container);
        const Value* env = c != nullptr ? doc::find_path(*c, "env") : nullptr;
        const Value* e = env != nullptr ? find_named(*env, row.name) : nullptr;
        return e != nullptr && e->contains("value") ? (*e)["value"] : Value();
    }
    case LiveKind::Deployment:
        return deployment(live, row.name) != nullptr;
    case LiveKind::Init: {
        const Value* l = doc::find_path(live.agent, "spec.template.spec.initContainers");
        return l != nullptr && find_named(*l, row.name) != nullptr;
    }
    case LiveKind::Replicas: {
        const Value* d = deployment(live, row.name);
        if (d == nullptr) {
            return Value();
        }
        const Value* r = doc::find_path(*d, "spec.replicas");
        return r != nullptr ? *r : Value(1); // the apiserver's default
    }
    case LiveKind::Resources: {
        const Value* c = agent_container(live.agent, row.container);
        const Value* r = c != nullptr ? doc::find_path(*c, "resources") : nullptr;
        return r != nullptr && r->is_object() ? *r : Value::object();
    }
    case LiveKind::Caps: {
        const Value* c = agent_container(live.agent, row.container);
        const Value* a =
            c != nullptr ? doc::find_path(*c, "securityContext.capabilities.add") : nullptr;
        return a != nullptr ? sorted(*a) : Value();
    }
    }
    return Value();
}

Value rendered_field(const Compared& row, const Value& values) {
    const Value* found = value_at(values, row.path);
    Value v = found != nullptr ? *found : Value();
    switch (row.kind) {
    case LiveKind::Config:
    case LiveKind::Env:
        return format_value(row, v);
    case LiveKind::Deployment: {
        bool on = truthy(v);
        for (const auto& req : row.requires_true) {
            const Value* r = value_at(values, req);
            on = on && r != nullptr && truthy(*r);
        }
        return on;
    }
    case LiveKind::Init:
        return truthy(v);
    case LiveKind::Replicas:
        if (v.is_string()) {
            try {
                return std::stoll(v.get<std::string>());
            } catch (...) {
                return v;
            }
        }
        return v;
    case LiveKind::Resources:
        return v.is_object() ? v : Value::object();
    case LiveKind::Caps:
        return sorted(v);
    }
    return Value();
}

Preflight preflight(const LiveCilium& live, const Value& user_values, const Pinned& p) {
    Preflight out;
    Value values = render_values(user_values, p);
    for (const auto& row : p.compared) {
        Value l = live_field(row, live);
        Value r = rendered_field(row, values);
        if (l != r) {
            out.differences.push_back({row.path, row.field(), row.template_file, l, r});
        }
    }
    if (user_values.is_object()) {
        for (const auto& leaf : leaf_paths(user_values)) {
            if (!covered(leaf, p)) {
                out.not_compared.push_back(leaf);
            }
        }
    }
    return out;
}

Status check_ipam(const Detection& detection) {
    if (detection.ipam_mode == "kubernetes") {
        return ok_status();
    }
    std::string live = detection.ipam_mode.empty() ? "not found (no cilium-config data.ipam)"
                                                   : detection.ipam_mode;
    return make_error(ErrorKind::Findings,
                      "cni: Cilium's ipam.mode is " + live +
                          ": Ichor takes over only a Cilium with ipam.mode: kubernetes "
                          "(changing IPAM renumbers every pod)",
                      "rerun with --cni-unmanaged to adopt the cluster and leave Cilium as it is",
                      vocab::code::k_cilium_ipam);
}

std::string describe(const Difference& d) {
    auto show = [](const Value& v) { return v.is_null() ? std::string("(absent)") : v.dump(); };
    return d.path + ": live " + show(d.live) + ", rendered " + show(d.rendered) + " (" + d.field +
           ", " + d.template_file + ")";
}

void add_results(doc::ResourceList& list, const Preflight& preflight, doc::Severity severity) {
    for (const auto& d : preflight.differences) {
        list.add_result(
            severity, "cilium: " + describe(d), std::string(vocab::code::k_cilium_diff), nullptr,
            Value{{"ichor.maesh.dev/path", d.path},
                  {"ichor.maesh.dev/live", d.live.is_null() ? "" : d.live.dump()},
                  {"ichor.maesh.dev/rendered", d.rendered.is_null() ? "" : d.rendered.dump()}});
    }
    for (const auto& path : preflight.not_compared) {
        list.add_result(doc::Severity::Info,
                        "cilium: " + path +
                            ": not compared (the preflight's table does not cover it; "
                            "docs/cni.md)",
                        vocab::code::k_cilium_not_compared, nullptr,
                        Value{{"ichor.maesh.dev/path", path}});
    }
}

} // namespace ichor::cni
