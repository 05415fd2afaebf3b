#include "common/drift/drift.h"

#include "common/machineconfig/layout.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace ichor::drift {

using doc::Value;
namespace layout = machineconfig::layout;

namespace {

Value& at(Value& root, const std::vector<std::string>& path, size_t n) {
    Value* v = &root;
    for (size_t i = 0; i < n; ++i) {
        if (!v->is_object()) {
            *v = Value::object();
        }
        v = &(*v)[path[i]];
    }
    return *v;
}

const Value* find(const Value& root, const std::vector<std::string>& path, size_t n) {
    const Value* v = &root;
    for (size_t i = 0; i < n; ++i) {
        if (!v->is_object()) {
            return nullptr;
        }
        auto it = v->find(path[i]);
        if (it == v->end()) {
            return nullptr;
        }
        v = &*it;
    }
    return v;
}

// A value as a patch may carry it: no secrets (the node's are digests), no digests.
Value without_secrets(const Value& v) {
    if (v.is_object()) {
        Value out = Value::object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!machineconfig::is_secret_key(it.key())) {
                out[it.key()] = without_secrets(it.value());
            }
        }
        return out;
    }
    if (v.is_array()) {
        Value out = Value::array();
        for (const auto& i : v) {
            out.push_back(without_secrets(i));
        }
        return out;
    }
    return v;
}

Value delete_marker() {
    return Value{{"$patch", "delete"}};
}

Value typed_doc(const char* kind, const std::string& name) {
    Value d = Value::object();
    d["apiVersion"] = "v1alpha1";
    d["kind"] = kind;
    d["name"] = name;
    return d;
}

// The document a fact path belongs to when Talos keeps it in a document at every contract the
// render knows (the registry documents of the layout table): {kind, name}, else empty.
std::pair<std::string, std::string> registry_doc(const std::vector<std::string>& p) {
    auto home = layout::named_home(p);
    if (!home || home->row.document->since != layout::Since::V1_12) {
        return {};
    }
    return {std::string(home->row.document->kind), home->name};
}

std::vector<std::string> registry_fact_path(const std::string& kind, const std::string& name) {
    for (const auto& r : layout::rows()) {
        if (r.document->kind == kind) {
            return layout::keys_of(*r.field, name);
        }
    }
    return {};
}

// The registry document that holds a fact, as the layout table writes it, or null.
Value registry_document(const std::vector<std::string>& path, const Value& fact) {
    Value tree = Value::object();
    at(tree, path, path.size()) = fact;
    auto docs = layout::to_documents(
        tree, [](const layout::Document& d) { return d.since == layout::Since::V1_12; });
    return docs.empty() ? Value() : std::move(docs.front());
}

// Where a typed document of the render holds a v1alpha1 fact: from contract 1.14 Talos writes
// the Kubernetes settings (KubeNetworkConfig, KubeAPIServerConfig, ...) as documents, and
// refuses the same setting in v1alpha1 beside them, so a capture of such a fact goes into the
// document. The document, its field's keys and whether the row's codec applies (the fact is the
// row's whole field), from the layout table's longest row that names the path or a mapping above
// it; nullopt when the render writes no such document (the fact stays in v1alpha1).
struct TypedHome {
    const layout::Document* document;
    const layout::Field* field;
    std::vector<std::string> keys;
    bool whole;
};

std::optional<TypedHome> typed_home(const std::vector<std::string>& path,
                                    const std::set<std::string>& kinds) {
    std::optional<TypedHome> best;
    size_t best_len = 0;
    for (const auto& r : layout::rows()) {
        if (r.document->since != layout::Since::V1_14 ||
            kinds.count(std::string(r.document->kind)) == 0 ||
            r.field->v1alpha1.find('{') != std::string_view::npos ||
            r.field->v1alpha1.find("[]") != std::string_view::npos) {
            continue;
        }
        std::vector<std::string> row = layout::keys_of(*r.field, {});
        if (row.size() > path.size() || !std::equal(row.begin(), row.end(), path.begin()) ||
            row.size() <= best_len ||
            (row.size() < path.size() && r.field->codec != layout::Codec::Same)) {
            continue;
        }
        std::vector<std::string> keys;
        if (!r.field->field.empty()) {
            keys = util::split(r.field->field, '.');
        }
        keys.insert(keys.end(), path.begin() + static_cast<long>(row.size()), path.end());
        if (keys.empty()) {
            continue;
        }
        best = TypedHome{r.document, r.field, std::move(keys), row.size() == path.size()};
        best_len = row.size();
    }
    return best;
}

bool overlaps(const std::string& a, const std::string& b) {
    auto under = [](const std::string& x, const std::string& y) {
        return x.size() > y.size() && x.starts_with(y) && x[y.size()] == '.';
    };
    return a == b || under(a, b) || under(b, a);
}

} // namespace

std::string capture_patch(const std::vector<Change>& changes, const Value& live_facts,
                          const Value& rendered_facts, const std::vector<Value>& rendered) {
    Value deletes = Value::object();
    Value sets = Value::object();
    std::set<std::pair<std::string, std::string>> registries;
    std::set<std::string> kinds;
    for (const auto& d : rendered) {
        if (d.is_object() && d.contains("kind") && d["kind"].is_string()) {
            kinds.insert(d["kind"].get<std::string>());
        }
    }
    std::map<std::string, Value> typed_deletes; // by kind, in the typed document's fields
    std::map<std::string, Value> typed_sets;
    auto typed_of = [](std::map<std::string, Value>& by_kind, const layout::Document& d) -> Value& {
        Value& doc = by_kind[std::string(d.kind)];
        if (doc.is_null()) {
            doc = Value::object();
            doc["apiVersion"] = "v1alpha1";
            doc["kind"] = std::string(d.kind);
            if (!d.name.empty()) {
                doc["name"] = std::string(d.name);
            }
        }
        return doc;
    };
    for (const auto& c : changes) {
        if (auto reg = registry_doc(c.path); !reg.first.empty()) {
            registries.insert(reg);
            continue;
        }
        bool list = c.current.is_array() || c.proposed.is_array();
        bool shape = c.current.is_object() != c.proposed.is_object();
        bool remove = !c.proposed.is_null() && (c.current.is_null() || list || shape);
        const Value* live = find(live_facts, c.path, c.path.size());
        Value value =
            c.current.is_null() ? Value() : without_secrets(live != nullptr ? *live : c.current);
        if (auto home = typed_home(c.path, kinds)) {
            if (remove) {
                at(typed_of(typed_deletes, *home->document), home->keys, home->keys.size()) =
                    delete_marker();
            }
            if (!value.is_null()) {
                at(typed_of(typed_sets, *home->document), home->keys, home->keys.size()) =
                    home->whole ? layout::encode(home->field->codec, value) : value;
            }
            continue;
        }
        if (remove) {
            at(deletes, c.path, c.path.size()) = delete_marker();
        }
        if (!value.is_null()) {
            at(sets, c.path, c.path.size()) = std::move(value);
        }
    }
    std::vector<Value> docs;
    if (!deletes.empty()) {
        docs.push_back(std::move(deletes));
    }
    for (auto& [kind, d] : typed_deletes) {
        docs.push_back(std::move(d));
    }
    std::vector<Value> reg_sets;
    for (const auto& [kind, host] : registries) {
        auto path = registry_fact_path(kind, host);
        const Value* was = find(rendered_facts, path, path.size());
        const Value* now = find(live_facts, path, path.size());
        if (was != nullptr) {
            Value d = typed_doc(kind.c_str(), host);
            d["$patch"] = "delete";
            docs.push_back(std::move(d));
        }
        if (now == nullptr) {
            continue;
        }
        if (Value d = registry_document(path, without_secrets(*now)); !d.is_null()) {
            reg_sets.push_back(std::move(d));
        }
    }
    if (!sets.empty()) {
        docs.push_back(std::move(sets));
    }
    for (auto& [kind, d] : typed_sets) {
        docs.push_back(std::move(d));
    }
    for (auto& d : reg_sets) {
        docs.push_back(std::move(d));
    }
    return docs.empty() ? std::string() : doc::to_yaml_stream(docs);
}

Analysis analyze(const std::vector<Value>& live, const std::vector<Value>& rendered,
                 const Context& context, const Rerender& rerender) {
    Analysis a;
    const Value live_facts = normalize(live);
    const Value rendered_facts = normalize(rendered);
    std::vector<Change> captured;
    for (auto& c : diff(live_facts, rendered_facts)) {
        Verdict v = classify(c, context);
        if (v.cls == Class::Ignored) {
            continue;
        }
        if (v.cls == Class::A) {
            captured.push_back(c);
        }
        a.findings.push_back({std::move(c), std::move(v)});
    }
    if (captured.empty()) {
        return a;
    }
    a.capture = capture_patch(captured, live_facts, rendered_facts, rendered);

    // Render again with the capture: on the captured paths the result must be the node's, and
    // nothing else may move.
    std::set<std::string> before;
    for (const auto& f : a.findings) {
        before.insert(f.change.dotted);
    }
    std::vector<std::string> failed;
    auto again = rerender(a.capture);
    if (!again) {
        a.capture_error = again.error().message;
    } else {
        for (const auto& c : diff(live_facts, normalize(*again))) {
            if (classify(c, context).cls == Class::Ignored) {
                continue;
            }
            bool on_captured = false;
            for (const auto& cap : captured) {
                on_captured = on_captured || overlaps(c.dotted, cap.dotted);
            }
            if (on_captured) {
                failed.push_back(c.dotted);
            } else if (before.count(c.dotted) == 0) {
                a.capture_error = "the capture also changes " + c.dotted;
            }
        }
    }
    for (auto& f : a.findings) {
        if (f.verdict.cls != Class::A) {
            continue;
        }
        bool bad = !a.capture_error.empty();
        for (const auto& p : failed) {
            bad = bad || overlaps(p, f.change.dotted);
        }
        if (bad) {
            f.verdict = {
                Class::C, "CaptureDoesNotRoundTrip",
                "the captured patch does not reproduce {path} when rendered again" +
                    (a.capture_error.empty() ? std::string() : " (" + a.capture_error + ")") +
                    ": set it by hand in a TalosConfigPatch of the machine, or change the "
                    "node's configuration to the rendered value"};
        }
    }
    return a;
}

} // namespace ichor::drift
