#include "common/drift/normalize.h"

#include "common/machineconfig/layout.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace ichor::drift {

using doc::Value;
namespace layout = machineconfig::layout;

namespace {

constexpr std::string_view k_discovery_endpoint = "cluster.discovery.registries.service.endpoint";

Value& at(Value& root, std::initializer_list<std::string_view> path) {
    Value* v = &root;
    for (auto p : path) {
        if (!v->is_object()) {
            *v = Value::object();
        }
        v = &(*v)[std::string(p)];
    }
    return *v;
}

Value& at(Value& root, const std::vector<std::string>& path) {
    Value* v = &root;
    for (const auto& p : path) {
        if (!v->is_object()) {
            *v = Value::object();
        }
        v = &(*v)[p];
    }
    return *v;
}

const Value* get(const Value& v, std::string_view key) {
    if (!v.is_object()) {
        return nullptr;
    }
    auto it = v.find(std::string(key));
    return it == v.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const Value* v) {
    if (v == nullptr) {
        return {};
    }
    return v->is_string() ? v->get<std::string>() : v->dump();
}

// Copies every field of a typed document but its identity.
Value body(const Value& d) {
    Value out = Value::object();
    for (auto it = d.begin(); it != d.end(); ++it) {
        if (it.key() != "apiVersion" && it.key() != "kind" && it.key() != "name") {
            out[it.key()] = it.value();
        }
    }
    return out;
}

// The fields of a layout-table document that no row of the table maps to a v1alpha1 path
// (KubeNetworkConfig's nodeCIDRMaskSizeIPv4): they are facts too, under documents.<Kind>. So is
// a field that wraps a secret in a form no row writes (layout::generated_encryption).
Value unmapped(const Value& d, const std::string& kind) {
    std::vector<std::string> mapped;
    for (const auto& r : layout::rows()) {
        if (r.document->kind != kind) {
            continue;
        }
        if (r.field->field.empty()) {
            return Value::object(); // the document's body is the field
        }
        const std::string_view f = r.field->field;
        if (const Value* v = get(d, f); layout::wraps_secret(r.field->codec) && v != nullptr &&
                                        v->is_object() && !layout::generated_encryption(*v)) {
            // an EncryptionConfiguration of its owner's form (an identity provider after the
            // key): the v1alpha1 secret read from it says only which key it holds; the form is a
            // fact of its own, that a capture carries whole
            continue;
        }
        mapped.emplace_back(f.substr(0, f.find('.')));
    }
    Value out = Value::object();
    for (auto it = d.begin(); it != d.end(); ++it) {
        if (it.key() != "apiVersion" && it.key() != "kind" && it.key() != "name" &&
            std::find(mapped.begin(), mapped.end(), it.key()) == mapped.end()) {
            out[it.key()] = it.value();
        }
    }
    return out;
}

void merge_into(Value& dst, const Value& src);

void merge_into(Value& dst, const Value& src) {
    if (!dst.is_object() || !src.is_object()) {
        dst = src;
        return;
    }
    for (auto it = src.begin(); it != src.end(); ++it) {
        merge_into(dst[it.key()], it.value());
    }
}

// v1alpha1's mirrors hold overridePath on the mirror, the documents on each endpoint; the facts
// hold the mirror's.
void canonical_mirrors(Value& f) {
    Value* mirrors = const_cast<Value*>(doc::find_path(f, "machine.registries.mirrors"));
    if (mirrors == nullptr || !mirrors->is_object()) {
        return;
    }
    for (auto it = mirrors->begin(); it != mirrors->end(); ++it) {
        Value& m = it.value();
        if (m.is_object() && m.contains("overridePath") && m["overridePath"] == false) {
            m.erase("overridePath");
        }
        if (m.is_object() && m.contains("skipFallback") && m["skipFallback"] == false) {
            m.erase("skipFallback");
        }
    }
}

// Whether the v1alpha1 document turns Talos's Kubernetes discovery registry on: it is on unless
// disabled (machinery v1alpha1_discoveryconfig.go), and Talos's generator writes it disabled.
// v1.14 removed it: its documents have no such registry.
bool kubernetes_registry_on(const Value& v1alpha1) {
    const Value* disc = doc::find_path(v1alpha1, "cluster.discovery");
    if (disc == nullptr || !disc->is_object() || !disc->value("enabled", false)) {
        return false;
    }
    const Value* k8s = doc::find_path(*disc, "registries.kubernetes");
    return k8s == nullptr || !k8s->is_object() || !k8s->value("disabled", false);
}

// One form of the discovery facts for every layout: enabled, the service registry's endpoint (and
// a `disabled: false` its owner wrote out) or its being disabled, and the Kubernetes registry
// only where it is on (an Ichor setting that the
// adoption turns off, class B).
void canonical_discovery(Value& f, bool kubernetes_on) {
    Value* disc = const_cast<Value*>(doc::find_path(f, "cluster.discovery"));
    if (disc == nullptr || !disc->is_object()) {
        return;
    }
    Value out = Value::object();
    bool enabled = disc->value("enabled", false);
    out["enabled"] = enabled;
    if (enabled && kubernetes_on) {
        out["registries"]["kubernetes"]["disabled"] = false;
    }
    const Value* svc = doc::find_path(*disc, "registries.service");
    bool svc_disabled = svc != nullptr && svc->value("disabled", false);
    if (svc_disabled) {
        out["registries"]["service"]["disabled"] = true;
    } else {
        // the service's endpoint, with Talos's default, also where discovery is off: turning
        // discovery on changes `enabled` alone when neither side writes an endpoint
        const Value* ep = svc != nullptr ? get(*svc, "endpoint") : nullptr;
        out["registries"]["service"]["endpoint"] =
            ep != nullptr ? *ep
                          : Value(std::string(layout::home(k_discovery_endpoint)->field->fallback));
        if (const Value* d = svc != nullptr ? get(*svc, "disabled") : nullptr;
            d != nullptr && *d == false) {
            // written out by its owner: the node's configuration says it, the render's does not
            out["registries"]["service"]["disabled"] = false;
        }
    }
    *disc = std::move(out);
}

// A worker's v1alpha1 cluster.ca is the Kubernetes CA's certificate without its key; Talos's
// own 1.14 generator writes the same trust as KubeAPIServerCAConfig.acceptedCAs (read as
// cluster.acceptedCAs). One form for both: the certificate first among the accepted ones.
void canonical_worker_ca(Value& f) {
    Value* ca = const_cast<Value*>(doc::find_path(f, "cluster.ca"));
    if (ca == nullptr || !ca->is_object() || text(get(*ca, "crt")).empty() ||
        !text(get(*ca, "key")).empty()) {
        return;
    }
    Value accepted = Value::array({Value{{"crt", (*ca)["crt"]}}});
    if (const Value* more = doc::find_path(f, "cluster.acceptedCAs");
        more != nullptr && more->is_array()) {
        for (const auto& c : *more) {
            accepted.push_back(c);
        }
    }
    f["cluster"].erase("ca");
    f["cluster"]["acceptedCAs"] = std::move(accepted);
}

bool pem_key(const std::string& key) {
    return key == "crt" || key == "cert" || key == "ca";
}

std::string decode_pem(const std::string& s) {
    std::string pem = machineconfig::pem_from_field(s);
    if (pem.find("-----BEGIN") == std::string::npos) {
        return s;
    }
    while (!pem.empty() && (pem.back() == '\n' || pem.back() == ' ' || pem.back() == '\r')) {
        pem.pop_back();
    }
    return pem;
}

// decode_pem, remembered: the same few CAs stand in every node's configuration and in every
// render, live and rendered, twice per machine (6% of a realistic plan's instructions decoding
// them again: bench/HISTORY.md, "the realistic plan's CPU"). Per thread, and forgotten whole once
// it holds k_kept texts (a cluster has a handful of distinct certificates).
std::string canonical_pem(const std::string& s) {
    constexpr std::size_t k_kept = 64;
    thread_local std::unordered_map<std::string, std::string> decoded;
    if (auto it = decoded.find(s); it != decoded.end()) {
        return it->second;
    }
    std::string pem = decode_pem(s);
    if (decoded.size() >= k_kept) {
        decoded.clear();
    }
    decoded.emplace(s, pem);
    return pem;
}

// A file mode as Talos's encoder writes it (YAML 1.1 octal, "0o644" or "0644"), as its number:
// the document model keeps such a scalar as text, and Talos's decoder wants the integer back.
std::optional<std::int64_t> octal_mode(const std::string& s) {
    std::string_view d = s;
    if (d.starts_with("0o")) {
        d.remove_prefix(2);
    } else if (d.size() > 1 && d.front() == '0') {
        d.remove_prefix(1);
    } else {
        return std::nullopt;
    }
    if (d.empty() || d.size() > 8 || d.find_first_not_of("01234567") != std::string_view::npos) {
        return std::nullopt;
    }
    return std::stoll(std::string(d), nullptr, 8);
}

// Drops nulls, empty containers and empty secrets; certificates become PEM text. Inside a list
// an empty mapping stays: there it is a choice (a disk encryption key's `nodeID: {}`), not an
// absence.
bool prune(Value& v, const std::string& key, bool in_list = false) {
    if (v.is_null()) {
        return false;
    }
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s.empty() && machineconfig::is_secret_key(key)) {
            return false;
        }
        if (pem_key(key) && !s.empty()) {
            v = canonical_pem(s);
        } else if ((key == "contents" || key == "manifest") &&
                   machineconfig::partly_secret_manifest(s)) {
            // a manifest whose Secrets the Inspection digests (a CNI's, with its certificates):
            // compared, and captured as a credential, by the digest of that form
            v = util::sha256_digest(machineconfig::digest_manifest_secrets(s));
        } else if (key == "permissions" || (key == "mode" && s.starts_with("0o"))) {
            if (auto mode = octal_mode(s)) {
                v = *mode;
            }
        }
        return true;
    }
    if (v.is_object()) {
        std::vector<std::string> drop;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!prune(it.value(), it.key(), in_list)) {
                drop.push_back(it.key());
            }
        }
        for (const auto& k : drop) {
            v.erase(k);
        }
        return !v.empty() || in_list;
    }
    if (v.is_array()) {
        Value kept = Value::array();
        for (auto& item : v) {
            if (prune(item, key, true)) {
                kept.push_back(std::move(item));
            }
        }
        v = std::move(kept);
        return !v.empty();
    }
    return true;
}

} // namespace

Value normalize(const std::vector<Value>& documents) {
    Value f = Value::object();
    std::vector<std::vector<std::string>> bare; // documents without a field of their own
    bool kubernetes_on = false;
    for (const auto& d : documents) {
        if (d.is_object() && !d.contains("kind")) {
            kubernetes_on = kubernetes_on || kubernetes_registry_on(d);
            for (auto it = d.begin(); it != d.end(); ++it) {
                if (it.key() != "version") {
                    merge_into(f[it.key()], it.value());
                }
            }
        }
    }
    for (const auto& d : documents) {
        if (!d.is_object() || !d.contains("kind")) {
            continue;
        }
        const std::string kind = text(get(d, "kind"));
        auto place_body = [&](const Value& b) {
            if (b.empty()) {
                return;
            }
            Value& docs = at(f, {"documents", kind});
            if (const Value* name = get(d, "name"); name != nullptr) {
                merge_into(docs[text(name)], b);
            } else {
                merge_into(docs, b);
            }
        };
        if (!layout::to_v1alpha1(f, d)) {
            Value b = body(d);
            if (b.empty()) {
                // a document that is all identity (a DHCPv4Config naming only its link) is a
                // setting too: kept as an empty mapping, which prune would drop
                std::vector<std::string> at_doc{"documents", kind};
                if (const Value* name = get(d, "name"); name != nullptr) {
                    at_doc.push_back(text(name));
                }
                bare.push_back(std::move(at_doc));
            }
            place_body(b);
        } else {
            place_body(unmapped(d, kind)); // what the table has no v1alpha1 path for, kept too
        }
    }
    // Talos's own contract 1.14 (its Kubernetes settings in documents, KubeletConfig among them)
    // names its CNI by a KubeFlannelCNIConfig document: none means no CNI. Before it an unset CNI
    // is Talos's default, flannel.
    bool multidoc_kubernetes = false;
    for (const auto& d : documents) {
        multidoc_kubernetes =
            multidoc_kubernetes || (d.is_object() && text(get(d, "kind")) == "KubeletConfig");
    }
    if (multidoc_kubernetes || f.contains("cluster")) {
        Value& cl = f["cluster"];
        if (!cl.is_object()) {
            cl = Value::object();
        }
        if (!doc::find_path(cl, "network.cni.name")) {
            at(cl, {"network", "cni", "name"}) = multidoc_kubernetes ? "none" : "flannel";
        }
        canonical_discovery(f, kubernetes_on);
        canonical_worker_ca(f);
    }
    canonical_mirrors(f);
    prune(f, {});
    if (!f.is_object()) {
        f = Value::object();
    }
    for (const auto& p : bare) {
        Value& v = at(f, p);
        if (v.is_null()) {
            v = Value::object();
        }
    }
    return f;
}

} // namespace ichor::drift
