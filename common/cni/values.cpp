#include "common/cni/values.h"

#include "common/doc/vocabulary.h"
#include "common/util/strings.h"

namespace ichor::cni {

namespace {

using doc::Value;

void collect(const Value& v, const std::string& prefix, std::vector<std::string>& out) {
    if (v.is_object() && !v.empty()) {
        for (const auto& [k, child] : v.items()) {
            collect(child, prefix.empty() ? k : prefix + "." + k, out);
        }
        return;
    }
    if (!prefix.empty()) {
        out.push_back(prefix);
    }
}

bool below(std::string_view path, std::string_view ancestor) {
    return path.size() > ancestor.size() && util::starts_with(path, ancestor) &&
           path[ancestor.size()] == '.';
}

// The owned path a leaf collides with: itself, one below it, or one above it.
const OwnedValue* collides(std::string_view leaf, const Pinned& p) {
    for (const auto& o : p.owned) {
        if (leaf == o.path || below(o.path, leaf) || below(leaf, o.path)) {
            return &o;
        }
    }
    return nullptr;
}

void set_at(Value& root, std::string_view dotted, const Value& v) {
    Value* cur = &root;
    auto parts = util::split(dotted, '.');
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        Value& next = (*cur)[parts[i]];
        if (!next.is_object()) {
            next = Value::object();
        }
        cur = &next;
    }
    (*cur)[parts.back()] = v;
}

// Removes the key at a dotted path and any map it leaves empty.
void erase_at(Value& root, const std::vector<std::string>& parts, std::size_t i = 0) {
    if (!root.is_object() || !root.contains(parts[i])) {
        return;
    }
    if (i + 1 == parts.size()) {
        root.erase(parts[i]);
        return;
    }
    erase_at(root[parts[i]], parts, i + 1);
    if (root[parts[i]].is_object() && root[parts[i]].empty()) {
        root.erase(parts[i]);
    }
}

} // namespace

const Value* value_at(const Value& values, std::string_view dotted) {
    const Value* cur = &values;
    for (const auto& part : util::split(dotted, '.')) {
        if (!cur->is_object()) {
            return nullptr;
        }
        auto it = cur->find(part);
        if (it == cur->end()) {
            return nullptr;
        }
        cur = &*it;
    }
    return cur;
}

std::vector<std::string> leaf_paths(const Value& values) {
    std::vector<std::string> out;
    collect(values, "", out);
    return out;
}

Status validate_values(const Value& values, std::string_view source, const Pinned& p) {
    if (values.is_null()) {
        return ok_status();
    }
    if (!values.is_object()) {
        return make_error(ErrorKind::Usage,
                          std::string(source) + ": Cilium values must be a map, not " +
                              values.type_name(),
                          {}, std::string(vocab::code::k_cilium_values));
    }
    for (const auto& leaf : leaf_paths(values)) {
        if (const OwnedValue* o = collides(leaf, p)) {
            std::string where = leaf == o->path ? "" : " (set through " + leaf + ")";
            return make_error(ErrorKind::Usage,
                              std::string(source) + ": " + o->path + " is owned by Ichor" + where +
                                  ": " + o->reason,
                              "remove " + leaf + " from " + std::string(source),
                              vocab::code::k_owned_value);
        }
    }
    return ok_status();
}

Result<Value> read_values(std::string_view text, std::string_view source, const Pinned& p) {
    auto parsed = doc::parse_one(text, source);
    if (!parsed.ok()) {
        Error e = parsed.error();
        e.kind = ErrorKind::Usage;
        return e;
    }
    Value v = parsed->is_null() ? Value::object() : std::move(*parsed);
    if (auto st = validate_values(v, source, p); !st.ok()) {
        return st.error();
    }
    return v;
}

Value merge_values(const Value& base, const Value& overlay) {
    if (!base.is_object() || !overlay.is_object()) {
        return overlay;
    }
    Value out = base;
    for (const auto& [k, v] : overlay.items()) {
        if (v.is_null()) {
            out.erase(k);
        } else if (out.contains(k) && out[k].is_object() && v.is_object()) {
            out[k] = merge_values(out[k], v);
        } else {
            out[k] = v;
        }
    }
    return out;
}

Value render_values(const Value& user, const Pinned& p) {
    Value out = Value::object();
    for (const auto& c : p.compared) {
        set_at(out, c.path, c.chart_default);
    }
    out = merge_values(out, p.defaults);
    if (user.is_object()) {
        out = merge_values(out, user);
    }
    for (const auto& o : p.owned) {
        set_at(out, o.path, o.value);
    }
    return out;
}

SplitValues split_owned(const Value& values, const Pinned& p) {
    SplitValues s;
    if (!values.is_object()) {
        return s;
    }
    s.values = values;
    for (const auto& leaf : leaf_paths(values)) {
        if (collides(leaf, p) != nullptr) {
            erase_at(s.values, util::split(leaf, '.'));
            s.owned.push_back(leaf);
        }
    }
    return s;
}

} // namespace ichor::cni
