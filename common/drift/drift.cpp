#include "common/drift/drift.h"

#include "common/doc/vocabulary.h"
#include "common/machineconfig/kinds.h"
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

// A document the render does not write but the node has (a hand-written mix of layouts) is the
// home only when the render's v1alpha1 document does not hold the row's field either: Talos
// refuses a setting in both (".machine.features.hostDNS is already set in v1alpha1 config").
std::optional<TypedHome> typed_home(const std::vector<std::string>& path,
                                    const std::set<std::string>& rendered_kinds,
                                    const std::set<std::string>& live_kinds,
                                    const std::vector<Value>& rendered) {
    const Value* rendered_v1 = nullptr;
    for (const auto& d : rendered) {
        if (d.is_object() && !d.contains("kind")) {
            rendered_v1 = &d;
        }
    }
    auto home_kind = [&](const layout::Document& d, const std::vector<std::string>& row) {
        if (rendered_kinds.count(std::string(d.kind)) != 0) {
            return true;
        }
        return live_kinds.count(std::string(d.kind)) != 0 &&
               (rendered_v1 == nullptr || find(*rendered_v1, row, row.size()) == nullptr);
    };
    std::optional<TypedHome> best;
    size_t best_len = 0;
    for (const auto& r : layout::rows()) {
        if (r.document->since != layout::Since::V1_14 ||
            r.field->v1alpha1.find('{') != std::string_view::npos ||
            r.field->v1alpha1.find("[]") != std::string_view::npos) {
            continue;
        }
        // the rows skipped above hold no `{name}`: their keys as the table splits them
        const std::vector<std::string>& row = layout::row_keys(*r.field);
        if (row.size() > path.size() || !std::equal(row.begin(), row.end(), path.begin()) ||
            !home_kind(*r.document, row) || row.size() <= best_len ||
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

// A fact of a document that is not in the layout table (documents.<Kind>[.<name>].<keys>): the
// document's identity and the keys inside it, by the kinds table (a named kind's second key is
// the document's name). Empty kind when the path is not such a fact or the kind is unknown.
struct DocumentFact {
    std::string kind;
    std::string name;
    bool named = false;
    std::vector<std::string> keys;
    std::vector<std::string> root; // the document's own path in the facts
};

DocumentFact document_fact(const std::vector<std::string>& path) {
    DocumentFact f;
    if (path.size() < 2 || path[0] != "documents") {
        return f;
    }
    auto kind = machineconfig::find_kind(path[1]);
    if (!kind) {
        return f;
    }
    f.kind = path[1];
    f.named = kind->named;
    size_t body = 2;
    if (f.named) {
        if (path.size() < 3) {
            f.kind.clear();
            return f;
        }
        f.name = path[2];
        body = 3;
    }
    f.root.assign(path.begin(), path.begin() + static_cast<long>(body));
    f.keys.assign(path.begin() + static_cast<long>(body), path.end());
    return f;
}

Value identity_doc(const DocumentFact& f) {
    Value d = Value::object();
    d["apiVersion"] = "v1alpha1";
    d["kind"] = f.kind;
    if (f.named) {
        d["name"] = f.name;
    }
    return d;
}

// A value as the node has it, secrets as their digests: capture() takes each digest out of the
// patch's text into a CapturedSecret.
const Value& kept(const Value& v) {
    return v;
}

bool is_digest_text(const Value& v) {
    if (!v.is_string()) {
        return false;
    }
    const auto& s = v.get_ref<const std::string&>();
    return s.size() == 71 && s.starts_with("sha256:");
}

// Moves every digest at a secret key of `v` (a patch document, `doc` its root) out into `out`.
void extract_secrets(const Value& doc, Value& v, std::vector<std::string>& path,
                     std::vector<CapturedSecret>& out, bool secret = false) {
    if (v.is_object()) {
        std::vector<std::string> drop;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (path.empty() && (it.key() == "apiVersion" || it.key() == "kind" ||
                                 (it.key() == "name" && doc.contains("kind")))) {
                continue;
            }
            path.push_back(it.key());
            // Every digest of the node's configuration is a secret it holds (digest_secrets made
            // it: a secret key, an inline manifest with a Secret, a secret environment entry).
            const bool s = secret || machineconfig::is_secret_key(it.key());
            if (is_digest_text(it.value())) {
                CapturedSecret c;
                c.kind = doc.value("kind", "");
                c.name = doc.contains("kind") ? doc.value("name", "") : "";
                c.path = path;
                c.digest = it.value().get<std::string>();
                out.push_back(std::move(c));
                drop.push_back(it.key());
            } else {
                extract_secrets(doc, it.value(), path, out, s);
            }
            path.pop_back();
        }
        for (const auto& k : drop) {
            v.erase(k);
        }
    } else if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) {
            path.push_back(std::to_string(i));
            if (is_digest_text(v[i])) {
                // a list of secrets: the item stays, as its digest, and is carried too
                CapturedSecret c;
                c.kind = doc.value("kind", "");
                c.name = doc.contains("kind") ? doc.value("name", "") : "";
                c.path = path;
                c.digest = v[i].get<std::string>();
                out.push_back(std::move(c));
                v[i] = "";
            } else {
                extract_secrets(doc, v[i], path, out, secret);
            }
            path.pop_back();
        }
    }
}

// The 1.14 document kind whose named documents hold a v1alpha1 list, one document per item
// (KernelModuleConfig for machine.kernel.modules, KubeInlineManifestConfig for
// cluster.inlineManifests), when `kinds` has it; empty otherwise.
std::string list_document(const std::string& dotted, const std::set<std::string>& kinds) {
    for (const auto& r : layout::rows()) {
        const std::string_view v = r.field->v1alpha1;
        const auto at = v.find("[]");
        if (r.document->since == layout::Since::V1_14 && at != std::string_view::npos &&
            v.substr(0, at) == dotted && kinds.count(std::string(r.document->kind)) != 0) {
            return std::string(r.document->kind);
        }
    }
    return {};
}

void leaves(const Value& v, std::vector<std::string>& path, std::vector<std::string>& out) {
    if (v.is_object() && !v.empty()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            path.push_back(it.key());
            leaves(it.value(), path, out);
            path.pop_back();
        }
        return;
    }
    out.push_back(util::join(path, "."));
}

// Where to delete `path` (which the node lacks and the render sets): its highest ancestor that
// the node lacks too and whose every leaf in the render is in `removed`, else the path itself.
std::vector<std::string> lifted(const std::vector<std::string>& path, const Value& live_facts,
                                const Value& rendered_facts, const std::set<std::string>& removed) {
    std::vector<std::string> at = path;
    while (at.size() > 2) {
        std::vector<std::string> parent(at.begin(), at.end() - 1);
        if (find(live_facts, parent, parent.size()) != nullptr) {
            break;
        }
        const Value* r = find(rendered_facts, parent, parent.size());
        if (r == nullptr) {
            break;
        }
        std::vector<std::string> p = parent;
        std::vector<std::string> all;
        leaves(*r, p, all);
        bool covered = true;
        for (const auto& l : all) {
            covered = covered && removed.count(l) != 0;
        }
        if (!covered) {
            break;
        }
        at = std::move(parent);
    }
    return at;
}

thread_local std::string t_pick_kind; // layout::to_documents takes a plain function

bool pick_kind(const layout::Document& d) {
    return d.kind == t_pick_kind;
}

} // namespace

namespace {

std::set<std::string> kinds_of(const std::vector<Value>& docs) {
    std::set<std::string> kinds;
    for (const auto& d : docs) {
        if (d.is_object() && d.contains("kind") && d["kind"].is_string()) {
            kinds.insert(d["kind"].get<std::string>());
        }
    }
    return kinds;
}

// --- layout moves -------------------------------------------------------------------------------

// Where a document of the layout table lives in v1alpha1 (layout_moves): its home, the one
// subtree that names it (a named document's entry, else what it moves or is due for), and the
// v1alpha1 paths its settings are at (what a capture sets, as the node has them).
struct MoveHome {
    const layout::Document* document = nullptr;
    std::vector<std::string> home;
    std::vector<std::vector<std::string>> paths;
    // A document of several plain fields and no subtree of its own (KubeClusterConfig: the
    // cluster's name and endpoint): each field's v1alpha1 path is a home, one move each.
    std::vector<std::vector<std::string>> homes() const {
        return home.empty() ? paths : std::vector<std::vector<std::string>>{home};
    }
};

bool under_or_at(const std::vector<std::string>& p, const std::vector<std::string>& top) {
    return p.size() >= top.size() && std::equal(top.begin(), top.end(), p.begin());
}

std::optional<MoveHome> move_home(const std::string& kind, const std::string& name) {
    MoveHome m;
    m.document = layout::only_document(kind); // none with several (KubeEtcdEncryptionConfig)
    if (m.document == nullptr || m.document->fields.empty()) {
        return std::nullopt;
    }
    const layout::Document& d = *m.document;
    for (const auto& f : d.fields) {
        if (f.v1alpha1.find("[]") != std::string_view::npos) {
            return std::nullopt; // a document per list item: the list is the fact
        }
        auto raw = util::split(f.v1alpha1, '.');
        auto at = std::find(raw.begin(), raw.end(), "{name}");
        if (at != raw.end()) {
            if (name.empty()) {
                return std::nullopt;
            }
            auto keys = layout::keys_of(f, name);
            m.home.assign(keys.begin(), keys.begin() + (at - raw.begin()) + 1);
        }
    }
    if (m.home.empty()) {
        std::string_view top = !d.moves.empty() ? d.moves : d.due;
        if (top.empty() && !layout::plain_fields(d)) {
            return std::nullopt; // fields spread over v1alpha1 (KubeletConfig)
        }
        if (!top.empty()) {
            m.home = util::split(top, '.');
        }
    }
    auto add = [&](std::vector<std::string> p) {
        for (const auto& q : m.paths) {
            if (under_or_at(p, q)) {
                return;
            }
        }
        m.paths.push_back(std::move(p));
    };
    if (!d.moves.empty()) {
        add(util::split(d.moves, '.'));
    }
    for (const auto& f : d.fields) {
        add(layout::keys_of(f, name));
    }
    if (!d.implies.path.empty()) {
        add(util::split(d.implies.path, '.'));
    }
    return m;
}

const Value* v1alpha1_document(const std::vector<Value>& docs) {
    for (const auto& d : docs) {
        if (d.is_object() && !d.contains("kind")) {
            return &d;
        }
    }
    return nullptr;
}

bool path_overlaps(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return under_or_at(a, b) || under_or_at(b, a);
}

Value& typed_of(std::map<std::string, Value>& by_kind, const layout::Document& d) {
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
}

// One capture in the making: each change goes where the node holds its setting (a registry
// document, a list's documents, a document outside the layout table, a typed document's field, or
// v1alpha1), as a value to set and, where the render has something the node does not, a delete.
struct Capturer {
    const Value& live_facts;
    const Value& rendered_facts;
    const std::vector<Value>& rendered;
    const std::vector<Value>& live;

    Value deletes = Value::object();
    Value sets = Value::object();
    std::set<std::pair<std::string, std::string>> registries;
    std::set<std::string> identities; // kind + "/" + name of every document of either side
    std::map<std::string, Value> typed_deletes; // by kind, in the typed document's fields
    std::map<std::string, Value> typed_sets;
    // Documents outside the layout table, by identity: the deletes (a whole document the node
    // does not have, or fields of one it has) and the values to set.
    std::map<std::string, Value> doc_deletes;
    std::map<std::string, Value> doc_sets;
    std::vector<Value> list_sets; // documents that hold a list's items, as the node has them
    // The paths the node lacks that the render sets: a mapping the node does not have at all
    // whose every leaf is among them is deleted whole, not left behind empty.
    std::set<std::string> removed;
    std::set<std::string> live_kinds;
    std::set<std::string> rendered_kinds;
    std::set<std::string> whole_deletes;

    Capturer(const std::vector<Change>& changes, const Value& live_facts_,
             const Value& rendered_facts_, const std::vector<Value>& rendered_,
             const std::vector<Value>& live_)
        : live_facts(live_facts_), rendered_facts(rendered_facts_), rendered(rendered_),
          live(live_), live_kinds(kinds_of(live_)), rendered_kinds(kinds_of(rendered_)) {
        for (const auto* docs : {&rendered, &live}) {
            for (const auto& d : *docs) {
                if (d.is_object() && d.contains("kind") && d["kind"].is_string()) {
                    identities.insert(d["kind"].get<std::string>() + "/" + d.value("name", ""));
                }
            }
        }
        for (const auto& c : changes) {
            if (c.current.is_null() && !c.proposed.is_null()) {
                removed.insert(c.dotted);
            }
        }
    }

    void add(const Change& c) {
        if (layout_move(c) || registry(c) || rendered_list(c) || live_list(c) ||
            other_document(c)) {
            return;
        }
        typed_or_v1alpha1(c);
    }

    // A layout move kept: the render's document deleted whole, the node's v1alpha1 values set at
    // the paths the document holds, as the node has them (its secrets as their digests, which
    // become credentials of the patch).
    bool layout_move(const Change& c) {
        if (c.layout.empty()) {
            return false;
        }
        const auto slash = c.layout.find('/');
        const std::string kind = c.layout.substr(0, slash);
        const std::string name = slash == std::string::npos ? "" : c.layout.substr(slash + 1);
        const Value* node = v1alpha1_document(live);
        auto home = move_home(kind, name);
        if (!home || node == nullptr) {
            return true;
        }
        Value del = Value{{"apiVersion", "v1alpha1"}, {"kind", kind}};
        if (!name.empty()) {
            del["name"] = name;
        }
        del["$patch"] = "delete";
        doc_deletes[kind + "/" + name] = std::move(del);
        for (const auto& p : home->paths) {
            if (const Value* v = find(*node, p, p.size()); v != nullptr) {
                at(sets, p, p.size()) = kept(*v);
            }
        }
        return true;
    }

    // A registry setting goes into its document (the layout of contracts 1.12 and later) unless
    // neither the node nor the render holds that kind of document: a node that keeps its
    // registries in v1alpha1 keeps them there.
    bool registry(const Change& c) {
        auto reg = registry_doc(c.path);
        if (reg.first.empty() ||
            (identities.count(reg.first + "/" + reg.second) == 0 && !live.empty())) {
            return false;
        }
        registries.insert(reg);
        return true;
    }

    void delete_rendered_of_kind(const std::string& kind) {
        for (const auto& d : rendered) {
            if (d.is_object() && d.value("kind", "") == kind) {
                Value del = typed_doc(kind.c_str(), d.value("name", ""));
                del["$patch"] = "delete";
                doc_deletes[kind + "/" + d.value("name", "")] = std::move(del);
            }
        }
    }

    // A list the render holds as documents, one per item (1.14), and the node in v1alpha1 or not
    // at all: the rendered documents are deleted, and what the node has is set where it has it.
    bool rendered_list(const Change& c) {
        std::string kind = list_document(c.dotted, rendered_kinds);
        if (kind.empty() || !list_document(c.dotted, live_kinds).empty()) {
            return false;
        }
        if (!c.proposed.is_null()) {
            delete_rendered_of_kind(kind);
        }
        if (const Value* now = find(live_facts, c.path, c.path.size()); now != nullptr) {
            at(sets, c.path, c.path.size()) = kept(*now);
        }
        return true;
    }

    // The node holds the list as documents, one per item: written as the node has them.
    bool live_list(const Change& c) {
        std::string kind = list_document(c.dotted, live_kinds);
        if (kind.empty()) {
            return false;
        }
        if (!c.proposed.is_null()) {
            delete_rendered_of_kind(kind);
        }
        if (const Value* now = find(live_facts, c.path, c.path.size()); now != nullptr) {
            Value tree = Value::object();
            at(tree, c.path, c.path.size()) = *now;
            t_pick_kind = kind;
            for (auto& d : layout::to_documents(tree, pick_kind)) {
                list_sets.push_back(std::move(d));
            }
        }
        return true;
    }

    static bool removes(const Change& c) {
        bool list = c.current.is_array() || c.proposed.is_array();
        bool shape = c.current.is_object() != c.proposed.is_object();
        return !c.proposed.is_null() && (c.current.is_null() || list || shape);
    }

    // A field that wraps a secret in a form (KubeEtcdEncryptionConfig.config) set as the node has
    // it: Talos's merge would append its lists to the render's, so the render's goes first.
    bool replaces_wrapped(const DocumentFact& f) const {
        if (f.keys.empty()) {
            return false;
        }
        for (const auto& r : layout::rows()) {
            if (r.document->kind != f.kind || !layout::wraps_secret(r.field->codec) ||
                r.field->field != f.keys[0]) {
                continue;
            }
            for (const auto& d : rendered) {
                if (d.is_object() && d.value("kind", "") == f.kind && d.contains(f.keys[0])) {
                    return true;
                }
            }
        }
        return false;
    }

    // A document outside the layout table (or a layout document's field beyond the table).
    bool other_document(const Change& c) {
        DocumentFact f = document_fact(c.path);
        if (f.kind.empty()) {
            return false;
        }
        const std::string id = f.kind + "/" + f.name;
        // a document of the layout table holds v1alpha1 facts besides these: never deleted
        // whole for the fields it has beyond the table
        bool layout_kind = false;
        for (const auto& r : layout::rows()) {
            layout_kind = layout_kind || r.document->kind == f.kind;
        }
        const bool node_has = layout_kind || find(live_facts, f.root, f.root.size()) != nullptr;
        const bool render_has = find(rendered_facts, f.root, f.root.size()) != nullptr;
        if (!node_has) {
            if (render_has && whole_deletes.insert(id).second) {
                Value d = identity_doc(f);
                d["$patch"] = "delete";
                doc_deletes[id] = std::move(d);
            }
            return true;
        }
        const bool wrapped = replaces_wrapped(f);
        if ((removes(c) || wrapped) && !f.keys.empty()) {
            Value& d = doc_deletes[id];
            if (d.is_null()) {
                d = identity_doc(f);
            }
            const size_t depth = wrapped ? 1 : f.keys.size();
            at(d, f.keys, depth) = delete_marker();
        }
        if (!c.current.is_null()) {
            const Value* now = find(live_facts, c.path, c.path.size());
            Value& d = doc_sets[id];
            if (d.is_null()) {
                d = identity_doc(f);
            }
            Value value = kept(now != nullptr ? *now : c.current);
            if (!f.keys.empty()) {
                at(d, f.keys, f.keys.size()) = std::move(value);
            } else if (value.is_object()) {
                for (auto it = value.begin(); it != value.end(); ++it) {
                    d[it.key()] = it.value();
                }
            }
        }
        return true;
    }

    void typed_or_v1alpha1(const Change& c) {
        const bool remove = removes(c);
        const Value* now = find(live_facts, c.path, c.path.size());
        Value value = c.current.is_null() ? Value() : kept(now != nullptr ? *now : c.current);
        if (auto home = typed_home(c.path, rendered_kinds, live_kinds, rendered)) {
            if (remove) {
                at(typed_of(typed_deletes, *home->document), home->keys, home->keys.size()) =
                    delete_marker();
            }
            // a CEL match is the same text in the document (encode writes none: v1alpha1 has
            // no such field, so only a node's own selector is captured there)
            const bool as_is = !home->whole || home->field->codec == layout::Codec::Cel;
            if (!value.is_null()) {
                at(typed_of(typed_sets, *home->document), home->keys, home->keys.size()) =
                    as_is ? value : layout::encode(home->field->codec, value);
            }
            return;
        }
        if (remove) {
            std::vector<std::string> where = lifted(c.path, live_facts, rendered_facts, removed);
            at(deletes, where, where.size()) = delete_marker();
        }
        if (!value.is_null()) {
            at(sets, c.path, c.path.size()) = std::move(value);
        }
    }

    // The registry documents: the render's deleted, the node's set as it has them.
    std::vector<Value> registry_sets(std::vector<Value>& docs) const {
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
            if (Value d = registry_document(path, kept(*now)); !d.is_null()) {
                reg_sets.push_back(std::move(d));
            }
        }
        return reg_sets;
    }

    // The patch's documents: every delete before every set.
    std::vector<Value> documents() {
        std::vector<Value> docs;
        if (!deletes.empty()) {
            docs.push_back(std::move(deletes));
        }
        for (auto& [kind, d] : typed_deletes) {
            docs.push_back(std::move(d));
        }
        for (auto& [id, d] : doc_deletes) {
            docs.push_back(std::move(d));
        }
        std::vector<Value> reg_sets = registry_sets(docs);
        if (!sets.empty()) {
            docs.push_back(std::move(sets));
        }
        for (auto& [kind, d] : typed_sets) {
            docs.push_back(std::move(d));
        }
        for (auto& d : reg_sets) {
            docs.push_back(std::move(d));
        }
        for (auto& [id, d] : doc_sets) {
            docs.push_back(std::move(d));
        }
        for (auto& d : list_sets) {
            docs.push_back(std::move(d));
        }
        return docs;
    }
};

} // namespace

std::vector<Change> layout_moves(const std::vector<Value>& live, const std::vector<Value>& rendered,
                                 const std::vector<Change>& changes, const Context& context) {
    std::vector<Change> out;
    const Value* node = v1alpha1_document(live);
    if (node == nullptr) {
        return out;
    }
    std::set<std::string> live_ids;
    for (const auto& d : live) {
        if (d.is_object() && d.contains("kind")) {
            live_ids.insert(d.value("kind", "") + "/" + d.value("name", ""));
        }
    }
    for (const auto& d : rendered) {
        if (!d.is_object() || !d.contains("kind") || !d["kind"].is_string()) {
            continue;
        }
        const std::string kind = d["kind"].get<std::string>();
        const std::string name = d.value("name", "");
        auto home = move_home(kind, name);
        if (!home || live_ids.count(kind + "/" + name) != 0) {
            continue;
        }
        std::vector<std::string> beyond{"documents", kind}; // its fields beyond the table
        if (!name.empty()) {
            beyond.push_back(name);
        }
        bool held = false;
        bool same = true;
        bool from_node = false; // a field the TalosMachine takes from the node (the install's)
        for (const auto& p : home->paths) {
            held = held || find(*node, p, p.size()) != nullptr;
            Change probe;
            probe.path = p;
            probe.dotted = util::join(p, ".");
            from_node = from_node || classify(probe, context).cls == Class::Ignored;
        }
        for (const auto& c : changes) {
            same = same && !path_overlaps(c.path, beyond);
            for (const auto& p : home->paths) {
                same = same && !path_overlaps(c.path, p);
            }
            for (const auto& h : home->homes()) {
                same = same && !path_overlaps(c.path, h);
            }
        }
        if (!held || !same || from_node) {
            continue;
        }
        for (const auto& h : home->homes()) {
            Change m;
            m.path = h;
            m.dotted = util::join(h, ".");
            m.current = "v1alpha1";
            m.proposed = name.empty() ? kind : kind + " " + name;
            m.layout = name.empty() ? kind : kind + "/" + name;
            out.push_back(std::move(m));
        }
    }
    return out;
}

Capture capture(const std::vector<Change>& changes, const Value& live_facts,
                const Value& rendered_facts, const std::vector<Value>& rendered,
                const std::vector<Value>& live) {
    Capturer capturer(changes, live_facts, rendered_facts, rendered, live);
    for (const auto& c : changes) {
        capturer.add(c);
    }
    std::vector<Value> docs = capturer.documents();
    Capture out;
    if (docs.empty()) {
        return out;
    }
    out.resolved = doc::to_yaml_stream(docs);
    for (auto& d : docs) {
        std::vector<std::string> path;
        extract_secrets(d, d, path, out.secrets);
    }
    out.text = doc::to_yaml_stream(docs);
    return out;
}

namespace {

// The captured layout moves that the render with the capture (`again`, `after` its diff from the
// node) still has: the capture did not give the node back its layout there.
std::vector<std::string> moves_left(const std::vector<Value>& live, const std::vector<Value>& again,
                                    const std::vector<Change>& after,
                                    const std::vector<Change>& captured, const Context& context) {
    std::vector<std::string> out;
    for (const auto& m : layout_moves(live, again, after, context)) {
        for (const auto& c : captured) {
            if (!c.layout.empty() && c.layout == m.layout) {
                out.push_back(m.dotted);
            }
        }
    }
    return out;
}

} // namespace

bool renders_install_disk(const Value& rendered_facts) {
    const Value* disk = doc::find_path(rendered_facts, "machine.install.disk");
    return disk != nullptr && disk->is_string() && !disk->get_ref<const std::string&>().empty();
}

namespace {

// Renders again with the capture: on the captured paths the result must be the node's, and
// nothing else may move. Each class A finding the capture does not reproduce becomes class C.
void check_round_trip(Analysis& a, const Capture& cap, const std::vector<Change>& captured,
                      const Value& live_facts, const std::vector<Value>& live,
                      const Context& context, const Rerender& rerender) {
    std::set<std::string> before;
    for (const auto& f : a.findings) {
        before.insert(f.change.dotted);
    }
    std::vector<std::string> failed;
    auto again = rerender(cap.resolved);
    if (!again) {
        a.capture_error = again.error().message;
    } else {
        const std::vector<Change> after = diff(live_facts, normalize(*again));
        failed = moves_left(live, *again, after, captured, context);
        for (const auto& c : after) {
            if (classify(c, context).cls == Class::Ignored) {
                continue;
            }
            bool on_captured = false;
            for (const auto& cp : captured) {
                on_captured = on_captured || overlaps(c.dotted, cp.dotted);
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
                Class::C, std::string(vocab::code::k_capture_does_not_round_trip),
                "the captured patch does not reproduce {path} when rendered again" +
                    (a.capture_error.empty() ? std::string() : " (" + a.capture_error + ")") +
                    ": set it by hand in a TalosConfigPatch of the machine, or change the "
                    "node's configuration to the rendered value"};
        }
    }
}

} // namespace

Analysis analyze(const std::vector<Value>& live, const std::vector<Value>& rendered,
                 const Context& node_context, const Rerender& rerender, Worked* worked,
                 const Value* given_live_facts) {
    Analysis a;
    const Value own_live_facts = given_live_facts == nullptr ? normalize(live) : Value();
    const Value& live_facts = given_live_facts == nullptr ? own_live_facts : *given_live_facts;
    Value rendered_facts = normalize(rendered);
    Context context = node_context;
    context.install_disk_rendered = renders_install_disk(rendered_facts);
    std::vector<Change> captured;
    std::vector<Change> changes = diff(live_facts, rendered_facts);
    for (auto& m : layout_moves(live, rendered, changes, context)) {
        changes.push_back(std::move(m));
    }
    if (worked != nullptr) {
        worked->changes = changes;
        worked->context = context;
    }
    for (auto& c : changes) {
        Verdict v = classify(c, context);
        if (v.cls == Class::Ignored) {
            continue;
        }
        if (v.cls == Class::A) {
            captured.push_back(c);
        }
        a.findings.push_back({std::move(c), std::move(v)});
    }
    if (!captured.empty()) {
        Capture cap = capture(captured, live_facts, rendered_facts, rendered, live);
        a.capture = cap.text;
        a.capture_secrets = cap.secrets;
        check_round_trip(a, cap, captured, live_facts, live, context, rerender);
    }
    if (worked != nullptr) {
        worked->rendered_facts = std::move(rendered_facts); // read above, so given back last
    }
    return a;
}

} // namespace ichor::drift
