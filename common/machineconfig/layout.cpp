#include "common/machineconfig/layout.h"

#include "common/util/strings.h"

#include <algorithm>
#include <map>

namespace ichor::machineconfig::layout {

using doc::Value;

namespace {

// The v1.14 documents as machinery v1.14.1 names their fields (config/types); the 1.14 render
// writes them as Talos's generator does (render.cpp), drift reads them from a node
// (docs/drift-rules.md).
const std::vector<Document> k_documents = {
    {.kind = "DiscoveryIdentityConfig",
     .fields = {{"clusterID", "cluster.id"}, {"clusterSecret", "cluster.secret"}}},
    {.kind = "DiscoveryServiceConfig",
     .fields = {{"endpoint", "cluster.discovery.registries.service.endpoint", Codec::Same,
                 "https://discovery.talos.dev/"}},
     .name = "default",
     .due = "cluster.discovery",
     .moves = "cluster.discovery", // the Kubernetes registry too: v1.14 removed it
     .implies = {"cluster.discovery.enabled", "true"},
     .unless = "cluster.discovery.registries.service.disabled"},
    {.kind = "KubeClusterConfig",
     .fields = {{"clusterName", "cluster.clusterName"},
                {"endpoint", "cluster.controlPlane.endpoint", Codec::Url}}},
    {.kind = "KubeAPIServerCAConfig",
     .fields = {{"issuingCA.cert", "cluster.ca.crt", Codec::Pem},
                {"issuingCA.key", "cluster.ca.key", Codec::PemKey},
                {"acceptedCAs", "cluster.acceptedCAs", Codec::PemList}},
     .due = "cluster.ca",
     .moves = "cluster.ca"},
    {.kind = "KubeAggregatorCAConfig",
     .fields = {{"issuingCA.cert", "cluster.aggregatorCA.crt", Codec::Pem},
                {"issuingCA.key", "cluster.aggregatorCA.key", Codec::PemKey}},
     .due = "cluster.aggregatorCA",
     .moves = "cluster.aggregatorCA"},
    {.kind = "KubeServiceAccountConfig",
     .fields = {{"issuer.privateKey", "cluster.serviceAccount.key", Codec::Pem}},
     .moves = "cluster.serviceAccount"},
    // Two rows, one per secret, each read from the EncryptionConfiguration's provider keys
    // (codec.h); Talos 1.14 writes one document holding the secrets it has.
    {.kind = "KubeEtcdEncryptionConfig",
     .fields = {{"config", "cluster.secretboxEncryptionSecret", Codec::Secretbox}}},
    {.kind = "KubeEtcdEncryptionConfig",
     .fields = {{"config", "cluster.aescbcEncryptionSecret", Codec::Aescbc}}},
    {.kind = "KubeNetworkConfig",
     .fields = {{"dnsDomain", "cluster.network.dnsDomain"},
                {"podSubnets", "cluster.network.podSubnets"},
                {"serviceSubnets", "cluster.network.serviceSubnets"}},
     .due = "cluster.network"},
    {.kind = "KubeFlannelCNIConfig",
     .fields = {},
     .implies = {"cluster.network.cni.name", "flannel"}},
    {.kind = "KubeProxyConfig",
     .fields = {{"enabled", "cluster.proxy.disabled", Codec::Negated}, {"", "cluster.proxy"}}},
    {.kind = "KubeInlineManifestConfig",
     .fields = {{"name", "cluster.inlineManifests[].name"},
                {"manifest", "cluster.inlineManifests[].contents"}}},
    // An install with a v1alpha1 diskSelector (no CEL) stays in v1alpha1, and nothing of
    // machine.install moves but the installer image, the disk and wipe (the document holds no
    // more).
    {.kind = "UnattendedInstallConfig",
     .fields = {{"installer.image", "machine.install.image"},
                {"provisioning.wipe", "machine.install.wipe"},
                {"provisioning.diskSelector.match", "machine.install.disk", Codec::DevPath},
                {"provisioning.diskSelector.match", "machine.install.diskSelector.match",
                 Codec::Cel}},
     .due = "machine.install",
     .moves = "machine.install",
     .stays_if = "machine.install.diskSelector"},
    {.kind = "SysctlConfig", .fields = {{"params", "machine.sysctls"}}},
    {.kind = "KernelModuleConfig",
     .fields = {{"name", "machine.kernel.modules[].name"},
                {"parameters", "machine.kernel.modules[].parameters"}}},
    {.kind = "KubePrismConfig",
     .fields = {{"port", "machine.features.kubePrism.port", Codec::Same, "7445"}},
     .due = "machine.features.kubePrism",
     .moves = "machine.features.kubePrism",
     .implies = {"machine.features.kubePrism.enabled", "true"}},
    // What has no v1alpha1 field stays under documents.<Kind> (the body row), where a node's
    // unknown documents go.
    {.kind = "KubeletConfig",
     .fields = {{"image", "machine.kubelet.image"},
                {"defaultRuntimeSeccompProfileEnabled",
                 "machine.kubelet.defaultRuntimeSeccompProfileEnabled"},
                {"extraArgs", "machine.kubelet.extraArgs"},
                {"config", "machine.kubelet.extraConfig"},
                {"", "documents.KubeletConfig"}}},
    {.kind = "KubeNodeConfig",
     .fields = {{"labels", "machine.nodeLabels"},
                {"annotations", "machine.nodeAnnotations"},
                {"taints", "machine.nodeTaints"},
                {"", "documents.KubeNodeConfig"}}},
    {.kind = "ResolverConfig",
     .fields = {{"hostDNS", "machine.features.hostDNS"}, {"", "documents.ResolverConfig"}}},
    {.kind = "KubeAPIServerConfig",
     .fields = {{"image", "cluster.apiServer.image"},
                {"certExtraSANs", "cluster.apiServer.certSANs"}, // machinery v1.14.1 types/k8s
                {"extraArgs", "cluster.apiServer.extraArgs"},
                {"", "documents.KubeAPIServerConfig"}}},
    {.kind = "KubeControllerManagerConfig",
     .fields = {{"image", "cluster.controllerManager.image"},
                {"extraArgs", "cluster.controllerManager.extraArgs"},
                {"", "documents.KubeControllerManagerConfig"}}},
    {.kind = "KubeSchedulerConfig",
     .fields = {{"image", "cluster.scheduler.image"},
                {"extraArgs", "cluster.scheduler.extraArgs"},
                {"config", "cluster.scheduler.config"},
                {"", "documents.KubeSchedulerConfig"}}},
    {.kind = "KubeAdmissionControlConfig",
     .fields = {{"name", "cluster.apiServer.admissionControl[].name"},
                {"configuration", "cluster.apiServer.admissionControl[].configuration"}}},
    {.kind = "KubeAuditPolicyConfig",
     .fields = {{"configuration", "cluster.apiServer.auditPolicy"}}},
    {.kind = "RegistryMirrorConfig",
     .fields = {{"", "machine.registries.mirrors.{name}", Codec::Mirror}},
     .since = Since::V1_12},
    {.kind = "RegistryAuthConfig",
     .fields = {{"", "machine.registries.config.{name}.auth"}},
     .since = Since::V1_12},
    {.kind = "RegistryTLSConfig",
     .fields = {{"", "machine.registries.config.{name}.tls"}},
     .since = Since::V1_12},
};

constexpr std::string_view k_name = "{name}";
constexpr std::string_view k_item = "[]";

// --- paths --------------------------------------------------------------------------------------

// One step of a concrete path: a key, or an index into a list.
struct Step {
    std::string key;
    size_t index = 0;
    bool is_index = false;
};
using Path = std::vector<Step>;

// Which instance of a document a path is taken for: its name, or its list item.
struct Instance {
    std::string name;
    size_t item = 0;
};

// A dotted path's keys; "modules[]" is the key "modules" then the step "[]".
std::vector<std::string> keys(std::string_view dotted) {
    std::vector<std::string> out;
    for (auto& k : dotted.empty() ? std::vector<std::string>{} : util::split(dotted, '.')) {
        if (k.size() > k_item.size() && k.ends_with(k_item)) {
            out.push_back(k.substr(0, k.size() - k_item.size()));
            out.emplace_back(k_item);
        } else {
            out.push_back(std::move(k));
        }
    }
    return out;
}

Path path_of(std::string_view dotted, const Instance& at = {}) {
    Path p;
    for (auto& k : keys(dotted)) {
        if (k == k_name) {
            p.push_back({at.name});
        } else if (k == k_item) {
            p.push_back({{}, at.item, true});
        } else {
            p.push_back({std::move(k)});
        }
    }
    return p;
}

const Value* find(const Value& root, const Path& p, size_t n) {
    const Value* v = &root;
    for (size_t i = 0; i < n; ++i) {
        if (p[i].is_index) {
            if (!v->is_array() || p[i].index >= v->size()) {
                return nullptr;
            }
            v = &(*v)[p[i].index];
            continue;
        }
        if (!v->is_object()) {
            return nullptr;
        }
        auto it = v->find(p[i].key);
        if (it == v->end()) {
            return nullptr;
        }
        v = &*it;
    }
    return v;
}

const Value* find(const Value& root, const Path& p) {
    return find(root, p, p.size());
}

// The value at a path, made (as mappings) where missing.
Value& make(Value& root, const Path& p) {
    Value* v = &root;
    for (const auto& s : p) {
        if (s.is_index) {
            v = &(*v)[s.index];
            continue;
        }
        if (!v->is_object()) {
            *v = Value::object();
        }
        v = &(*v)[s.key];
    }
    return *v;
}

bool empty_container(const Value& v) {
    return (v.is_object() || v.is_array()) && v.empty();
}

// Removes the value at a path, then each container on the path left empty, up to (not
// including) the top-level sections.
void erase(Value& root, const Path& p) {
    for (size_t n = p.size(); n > 0; --n) {
        bool target = n == p.size();
        Value* parent = const_cast<Value*>(find(root, p, n - 1));
        if ((!target && n < 2) || parent == nullptr) {
            return;
        }
        const Step& s = p[n - 1];
        const Value* child = find(*parent, Path{s}, 1);
        if (child != nullptr && (target || empty_container(*child))) {
            if (s.is_index) {
                parent->erase(s.index);
            } else {
                parent->erase(s.key);
            }
        }
    }
}

void merge_into(Value& dst, const Value& src) {
    if (!dst.is_object() || !src.is_object()) {
        dst = src;
        return;
    }
    for (auto it = src.begin(); it != src.end(); ++it) {
        merge_into(dst[it.key()], it.value());
    }
}

std::string text(const Value* v) {
    if (v == nullptr || v->is_null()) {
        return {};
    }
    return v->is_string() ? v->get<std::string>() : v->dump();
}

bool holds(const Value& root, std::string_view path, std::string_view value) {
    const Value* v = find(root, path_of(path));
    return v != nullptr && !v->is_null() && text(v) == value;
}

} // namespace

const std::vector<Document>& documents() {
    return k_documents;
}

const Document* only_document(std::string_view kind) {
    const Document* out = nullptr;
    for (const auto& d : k_documents) {
        if (d.kind == kind) {
            if (out != nullptr) {
                return nullptr;
            }
            out = &d;
        }
    }
    return out;
}

bool plain_fields(const Document& d) {
    return d.fields.size() > 1 && d.moves.empty() && d.due.empty() && d.implies.path.empty() &&
           std::all_of(d.fields.begin(), d.fields.end(), [](const Field& f) {
               return !f.field.empty() && f.field.find('.') == std::string_view::npos &&
                      f.v1alpha1.find('{') == std::string_view::npos &&
                      f.v1alpha1.find("[]") == std::string_view::npos;
           });
}

const std::vector<Row>& rows() {
    static const std::vector<Row> k_rows = [] {
        std::vector<Row> out;
        for (const auto& d : k_documents) {
            for (const auto& f : d.fields) {
                out.push_back({&d, &f});
            }
        }
        return out;
    }();
    return k_rows;
}

// --- v1alpha1 -> documents ----------------------------------------------------------------------

namespace {

enum class Shape { One, Named, Item };

Shape shape_of(const Document& d) {
    for (const auto& f : d.fields) {
        for (const auto& k : keys(f.v1alpha1)) {
            if (k == k_name) {
                return Shape::Named;
            }
            if (k == k_item) {
                return Shape::Item;
            }
        }
    }
    return Shape::One;
}

// The v1alpha1 path of the map or list whose entries are the documents.
Path collection_of(const Document& d) {
    Path p;
    for (auto& k : keys(d.fields.front().v1alpha1)) {
        if (k == k_name || k == k_item) {
            break;
        }
        p.push_back({std::move(k)});
    }
    return p;
}

std::vector<Instance> instances(const Document& d, const Value& v1) {
    Shape shape = shape_of(d);
    if (shape == Shape::One) {
        return {Instance{}};
    }
    std::vector<Instance> out;
    const Value* c = find(v1, collection_of(d));
    if (shape == Shape::Named && c != nullptr && c->is_object()) {
        for (auto it = c->begin(); it != c->end(); ++it) {
            out.push_back({it.key()});
        }
    } else if (shape == Shape::Item && c != nullptr && c->is_array()) {
        for (size_t i = 0; i < c->size(); ++i) {
            out.push_back({{}, i});
        }
    }
    return out;
}

bool present(const Value& v1, std::string_view path, const Instance& at) {
    return !path.empty() && find(v1, path_of(path, at)) != nullptr;
}

bool due(const Document& d, const Value& v1, const Instance& at) {
    if (!d.due.empty()) {
        return present(v1, d.due, at);
    }
    if (d.fields.empty()) {
        return !d.implies.path.empty() && holds(v1, d.implies.path, d.implies.value);
    }
    return std::any_of(d.fields.begin(), d.fields.end(),
                       [&](const Field& f) { return present(v1, f.v1alpha1, at); });
}

// A body's v1alpha1 keys that other fields of the document map on their own.
bool mapped_apart(const Document& d, const Field& body, const std::string& key) {
    std::string child = std::string(body.v1alpha1) + "." + key;
    return std::any_of(d.fields.begin(), d.fields.end(),
                       [&](const Field& f) { return &f != &body && f.v1alpha1 == child; });
}

void write_field(Value& out, const Document& d, const Field& f, const Value& v1,
                 const Instance& at) {
    const Value* v = find(v1, path_of(f.v1alpha1, at));
    Value value;
    if (v != nullptr) {
        value = encode(f.codec, *v);
    } else if (!f.fallback.empty()) {
        value = encode(f.codec, doc::resolve_plain_scalar(f.fallback));
    }
    if (value.is_null() && (v == nullptr || !v->is_null() || f.codec == Codec::PemKey)) {
        return; // nothing to write; a null given is copied as it is
    }
    if (!f.field.empty()) {
        make(out, path_of(f.field)) = std::move(value);
        return;
    }
    for (auto it = value.begin(); value.is_object() && it != value.end(); ++it) {
        if (!mapped_apart(d, f, it.key())) {
            out[it.key()] = it.value();
        }
    }
}

Value new_document(const Document& d, const Instance& at) {
    Value out = Value::object();
    out["apiVersion"] = "v1alpha1";
    out["kind"] = d.kind;
    if (!d.name.empty()) {
        out["name"] = d.name;
    } else if (shape_of(d) == Shape::Named) {
        out["name"] = at.name;
    }
    return out;
}

// The document for one instance, or null; `leaving` gets the v1alpha1 paths that leave.
Value document_for(const Document& d, const Value& v1, const Instance& at,
                   std::vector<Path>& leaving) {
    if (present(v1, d.stays_if, at) || !due(d, v1, at)) {
        return Value();
    }
    for (std::string_view p : {d.moves, d.implies.path}) {
        if (!p.empty()) {
            leaving.push_back(path_of(p, at));
        }
    }
    for (const auto& f : d.fields) {
        leaving.push_back(path_of(f.v1alpha1, at));
    }
    if ((!d.implies.path.empty() && !holds(v1, d.implies.path, d.implies.value)) ||
        (!d.unless.empty() && holds(v1, d.unless, "true"))) {
        return Value();
    }
    Value out = new_document(d, at);
    for (const auto& f : d.fields) {
        write_field(out, d, f, v1, at);
    }
    return out;
}

} // namespace

std::vector<Value> to_documents(Value& v1alpha1, Pick pick) {
    std::vector<Value> out;
    for (const auto& d : k_documents) {
        if (!pick(d)) {
            continue;
        }
        std::vector<Path> leaving;
        for (const auto& at : instances(d, v1alpha1)) {
            if (Value doc = document_for(d, v1alpha1, at, leaving); !doc.is_null()) {
                out.push_back(std::move(doc));
            }
        }
        // Last first, so that a list item removed does not move the ones still to remove.
        for (auto it = leaving.rbegin(); it != leaving.rend(); ++it) {
            erase(v1alpha1, *it);
        }
    }
    return out;
}

// --- documents -> v1alpha1 ----------------------------------------------------------------------

namespace {

// A document's fields but its identity and the fields the document maps on their own.
Value body_of(const Value& document, const Document& d) {
    Value out = Value::object();
    for (auto it = document.begin(); it != document.end(); ++it) {
        const std::string& k = it.key();
        bool apart = std::any_of(d.fields.begin(), d.fields.end(), [&](const Field& f) {
            return !f.field.empty() && keys(f.field).front() == k;
        });
        if (k != "apiVersion" && k != "kind" && k != "name" && !apart) {
            out[k] = it.value();
        }
    }
    return out;
}

Instance instance_in(Value& v1, const Document& d, const Value& document) {
    Shape shape = shape_of(d);
    if (shape == Shape::Named) {
        return {text(document.is_object() ? doc::find_path(document, "name") : nullptr)};
    }
    if (shape != Shape::Item) {
        return {};
    }
    Value& list = make(v1, collection_of(d));
    if (!list.is_array()) {
        list = Value::array();
    }
    list.push_back(Value::object());
    return {{}, list.size() - 1};
}

void place(Value& v1, const Document& d, const Value& document) {
    Instance at = instance_in(v1, d, document);
    if (!d.implies.path.empty()) {
        make(v1, path_of(d.implies.path, at)) = doc::resolve_plain_scalar(d.implies.value);
    }
    for (const auto& f : d.fields) {
        Value stored = f.field.empty() ? body_of(document, d) : Value();
        if (!f.field.empty()) {
            const Value* v = find(document, path_of(f.field));
            stored = v != nullptr ? *v : Value();
        }
        if (stored.is_null() && !f.fallback.empty()) {
            stored = encode(f.codec, doc::resolve_plain_scalar(f.fallback));
        }
        Value value = stored.is_null() ? Value() : decode(f.codec, stored);
        if (value.is_null()) {
            continue;
        }
        Value& dst = make(v1, path_of(f.v1alpha1, at));
        if (f.codec == Codec::Mirror) {
            dst = std::move(value);
        } else {
            merge_into(dst, value);
        }
    }
}

} // namespace

bool to_v1alpha1(Value& v1alpha1, const Value& document) {
    bool known = false;
    for (const auto& d : k_documents) {
        if (document.is_object() && text(doc::find_path(document, "kind")) == d.kind) {
            place(v1alpha1, d, document);
            known = true;
        }
    }
    return known;
}

// --- look-ups -----------------------------------------------------------------------------------

std::optional<Row> home(std::string_view v1alpha1) {
    for (const auto& r : rows()) {
        if (r.field->v1alpha1 == v1alpha1) {
            return r;
        }
    }
    return std::nullopt;
}

std::string v1alpha1_of(std::string_view kind, std::string_view field) {
    for (const auto& r : rows()) {
        if (r.document->kind == kind && r.field->field == field) {
            return std::string(r.field->v1alpha1);
        }
    }
    return {};
}

namespace {

// The rows of the named documents with their v1alpha1 paths as keys, in table order, made once:
// named_home is asked for every captured path of every machine, and splitting every row's path
// for each question was most of a realistic plan's capture (bench/HISTORY.md, "named_home").
struct NamedRow {
    Row row;
    const std::vector<std::string>& pattern; // row_keys': the table split once
};

const std::vector<NamedRow>& named_rows() {
    static const std::vector<NamedRow> k_named = [] {
        std::vector<NamedRow> out;
        for (const auto& r : rows()) {
            if (shape_of(*r.document) == Shape::Named) {
                out.push_back({r, row_keys(*r.field)});
            }
        }
        return out;
    }();
    return k_named;
}

} // namespace

std::optional<Named> named_home(const std::vector<std::string>& v1alpha1) {
    for (const auto& [r, pattern] : named_rows()) {
        if (v1alpha1.size() < pattern.size()) {
            continue;
        }
        Named n{r, {}};
        bool match = true;
        for (size_t i = 0; i < pattern.size() && match; ++i) {
            if (pattern[i] == k_name) {
                n.name = v1alpha1[i];
            } else {
                match = pattern[i] == v1alpha1[i];
            }
        }
        if (match) {
            return n;
        }
    }
    return std::nullopt;
}

const std::vector<std::string>& row_keys(const Field& field) {
    // Every Field lives in the static table, so its address names it for the process.
    static const std::map<const Field*, std::vector<std::string>> k_keys = [] {
        std::map<const Field*, std::vector<std::string>> out;
        for (const auto& r : rows()) {
            out.emplace(r.field, keys(r.field->v1alpha1));
        }
        return out;
    }();
    // at(): a Field is only ever the table's (a reference to another would be a bug: it throws)
    return k_keys.at(&field);
}

std::vector<std::string> keys_of(const Field& field, const std::string& name) {
    auto out = row_keys(field);
    std::replace(out.begin(), out.end(), std::string(k_name), name);
    return out;
}

namespace {

// The first document of the row's kind holding the row's field, with the field.
std::pair<const Row*, const Value*> holder(const std::vector<Value>& documents,
                                           std::string_view v1alpha1, bool readable) {
    for (const auto& r : rows()) {
        if (r.field->v1alpha1 != v1alpha1 || r.field->field.empty()) {
            continue;
        }
        for (const auto& d : documents) {
            if (!d.is_object() || text(doc::find_path(d, "kind")) != r.document->kind) {
                continue;
            }
            const Value* v = find(d, path_of(r.field->field));
            if (v != nullptr && !v->is_null() &&
                (!readable || !decode(r.field->codec, *v).is_null())) {
                return {&r, v};
            }
        }
    }
    return {nullptr, nullptr};
}

} // namespace

const Value* stored(const std::vector<Value>& documents, std::string_view v1alpha1) {
    return holder(documents, v1alpha1, false).second;
}

Value read(const std::vector<Value>& documents, std::string_view v1alpha1) {
    auto [row, v] = holder(documents, v1alpha1, true);
    return row == nullptr ? Value() : decode(row->field->codec, *v);
}

} // namespace ichor::machineconfig::layout
