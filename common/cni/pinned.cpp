#include "common/cni/pinned.h"

#include <map>

namespace ichor::cni {

namespace {

using doc::Value;

Error bad(std::string_view source, const std::string& what) {
    return make_error(ErrorKind::Internal, std::string(source) + ": " + what);
}

const std::map<std::string, LiveKind, std::less<>>& kinds() {
    static const std::map<std::string, LiveKind, std::less<>> k{
        {"config", LiveKind::Config},
        {"env", LiveKind::Env},
        {"deployment", LiveKind::Deployment},
        {"init", LiveKind::Init},
        {"replicas", LiveKind::Replicas},
        {"resources", LiveKind::Resources},
        {"caps", LiveKind::Caps},
    };
    return k;
}

const std::map<std::string, Format, std::less<>>& formats() {
    static const std::map<std::string, Format, std::less<>> f{
        {"string", Format::String},
        {"string-if-set", Format::StringIfSet},
        {"bool", Format::Bool},
        {"bool-if-true", Format::BoolIfTrue},
        {"bool-if-set", Format::BoolIfSet},
        {"int-if-nonzero", Format::IntIfNonzero},
    };
    return f;
}

// The fields each kind needs, so that a row that forgot one fails at the unit test, not at a
// preflight that silently compares nothing.
std::string missing_field(const Compared& c) {
    switch (c.kind) {
    case LiveKind::Config:
        return c.key.empty() ? "key" : "";
    case LiveKind::Env:
        return c.container.empty() ? "container" : c.name.empty() ? "name" : "";
    case LiveKind::Deployment:
    case LiveKind::Init:
    case LiveKind::Replicas:
        return c.name.empty() ? "name" : "";
    case LiveKind::Resources:
    case LiveKind::Caps:
        return c.container.empty() ? "container" : "";
    }
    return "";
}

Result<Compared> parse_row(const Value& row, std::string_view source, std::size_t i) {
    std::string where = "compared[" + std::to_string(i) + "]";
    if (!row.is_object()) {
        return bad(source, where + ": not a mapping");
    }
    Compared c;
    c.path = doc::get_string(row, "path");
    if (c.path.empty()) {
        return bad(source, where + ": no path");
    }
    where += " (" + c.path + ")";
    c.chart_default = row.contains("default") ? row["default"] : Value();
    c.template_file = doc::get_string(row, "template");
    if (c.template_file.empty()) {
        return bad(source, where + ": no template");
    }
    const Value* live = doc::find_path(row, "live");
    if (live == nullptr || !live->is_object()) {
        return bad(source, where + ": no live mapping");
    }
    auto kind = kinds().find(doc::get_string(*live, "kind"));
    if (kind == kinds().end()) {
        return bad(source,
                   where + ": unknown live.kind \"" + doc::get_string(*live, "kind") + "\"");
    }
    c.kind = kind->second;
    c.key = doc::get_string(*live, "key");
    c.container = doc::get_string(*live, "container");
    c.name = doc::get_string(*live, "name");
    if (const Value* req = doc::find_path(*live, "requires"); req != nullptr && req->is_array()) {
        for (const auto& r : *req) {
            c.requires_true.push_back(r.is_string() ? r.get<std::string>() : r.dump());
        }
    }
    if (std::string m = missing_field(c); !m.empty()) {
        return bad(source, where + ": live." + m + " missing");
    }
    if (c.kind == LiveKind::Config || c.kind == LiveKind::Env) {
        auto format = formats().find(doc::get_string(row, "format"));
        if (format == formats().end()) {
            return bad(source,
                       where + ": unknown format \"" + doc::get_string(row, "format") + "\"");
        }
        c.format = format->second;
    }
    c.empty = row.contains("empty") ? row["empty"] : Value();
    return c;
}

} // namespace

std::string Compared::field() const {
    switch (kind) {
    case LiveKind::Config:
        return "ConfigMap cilium-config data." + key;
    case LiveKind::Env:
        return "DaemonSet cilium container " + container + " env " + name;
    case LiveKind::Deployment:
        return "Deployment " + name + " (present or not)";
    case LiveKind::Init:
        return "DaemonSet cilium init container " + name + " (present or not)";
    case LiveKind::Replicas:
        return "Deployment " + name + " spec.replicas";
    case LiveKind::Resources:
        return "DaemonSet cilium container " + container + " resources";
    case LiveKind::Caps:
        return "DaemonSet cilium container " + container + " securityContext.capabilities.add";
    }
    return {};
}

const OwnedValue* Pinned::owned_at(std::string_view path) const {
    for (const auto& o : owned) {
        if (o.path == path) {
            return &o;
        }
    }
    return nullptr;
}

const Compared* Pinned::compared_at(std::string_view path) const {
    for (const auto& c : compared) {
        if (c.path == path) {
            return &c;
        }
    }
    return nullptr;
}

Result<Pinned> parse_pinned(std::string_view text, std::string_view source) {
    auto parsed = doc::parse_one(text, source);
    if (!parsed.ok()) {
        return bad(source, parsed.error().message);
    }
    const Value& v = *parsed;
    if (!v.is_object()) {
        return bad(source, "not a mapping");
    }
    Pinned p;
    p.chart_name = doc::get_string(v, "chart.name");
    p.chart_version = doc::get_string(v, "chart.version");
    p.namespace_name = doc::get_string(v, "chart.namespace", "kube-system");
    if (p.chart_name.empty() || p.chart_version.empty()) {
        return bad(source, "chart.name and chart.version are required");
    }
    if (const Value* owned = doc::find_path(v, "owned"); owned != nullptr && owned->is_array()) {
        for (const auto& o : *owned) {
            OwnedValue ov{doc::get_string(o, "path"), o.value("value", Value()),
                          doc::get_string(o, "reason")};
            if (ov.path.empty() || ov.reason.empty() || ov.value.is_null()) {
                return bad(source,
                           "owned entry \"" + ov.path + "\": path, value and reason are required");
            }
            p.owned.push_back(std::move(ov));
        }
    }
    if (const Value* d = doc::find_path(v, "defaults"); d != nullptr) {
        if (!d->is_object()) {
            return bad(source, "defaults: not a mapping");
        }
        p.defaults = *d;
    }
    const Value* rows = doc::find_path(v, "compared");
    if (rows == nullptr || !rows->is_array() || rows->empty()) {
        return bad(source, "compared: no rows");
    }
    for (std::size_t i = 0; i < rows->size(); ++i) {
        auto row = parse_row((*rows)[i], source, i);
        if (!row.ok()) {
            return row.error();
        }
        if (p.compared_at(row->path) != nullptr) {
            return bad(source, "compared: " + row->path + " twice");
        }
        p.compared.push_back(std::move(*row));
    }
    return p;
}

const Pinned& pinned() {
    static const Pinned k_pinned = [] {
        auto p = parse_pinned(pinned_text(), "deploy/cilium/ichor-cilium.yaml");
        // The unit test "the compiled-in data file parses" keeps this from happening in a release.
        return p.ok() ? std::move(p).value() : Pinned{};
    }();
    return k_pinned;
}

} // namespace ichor::cni
