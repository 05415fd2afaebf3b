#include "common/drift/normalize.h"

#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

#include <utility>

namespace ichor::drift {

using doc::Value;

namespace {

constexpr std::string_view k_discovery_default = "https://discovery.talos.dev/";

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

void merge_into(Value& dst, const Value& src) {
    if (!dst.is_object() || !src.is_object()) {
        dst = src;
        return;
    }
    for (auto it = src.begin(); it != src.end(); ++it) {
        merge_into(dst[it.key()], it.value());
    }
}

// The secret of a plain EncryptionConfiguration (the render's side); a digest stays itself.
std::pair<std::string, Value> encryption_secret(const Value& config) {
    if (!config.is_object()) {
        return {"secretboxEncryptionSecret", config};
    }
    const Value* res = get(config, "resources");
    if (res != nullptr && res->is_array() && !res->empty()) {
        const Value* provs = get((*res)[0], "providers");
        if (provs != nullptr && provs->is_array() && !provs->empty() && (*provs)[0].is_object()) {
            for (auto [provider, key] : {std::pair{"secretbox", "secretboxEncryptionSecret"},
                                         std::pair{"aescbc", "aescbcEncryptionSecret"}}) {
                const Value* keys = doc::find_path((*provs)[0], std::string(provider) + ".keys");
                if (keys != nullptr && keys->is_array() && !keys->empty()) {
                    if (const Value* s = get((*keys)[0], "secret"); s != nullptr) {
                        return {key, *s};
                    }
                }
            }
        }
    }
    return {"secretboxEncryptionSecret", config};
}

std::string disk_of_match(const std::string& match) {
    const std::string lead = "disk.dev_path == \"";
    auto p = match.find(lead);
    if (p == std::string::npos) {
        return {};
    }
    auto start = p + lead.size();
    auto end = match.find('"', start);
    return end == std::string::npos ? std::string() : match.substr(start, end - start);
}

void add_mirror(Value& facts, const Value& d) {
    Value m = Value::object();
    Value urls = Value::array();
    bool override_path = false;
    if (const Value* eps = get(d, "endpoints"); eps != nullptr && eps->is_array()) {
        for (const auto& e : *eps) {
            if (e.is_object()) {
                urls.push_back(e.value("url", Value()));
                override_path = override_path || e.value("overridePath", false);
            } else {
                urls.push_back(e);
            }
        }
    }
    m["endpoints"] = std::move(urls);
    if (override_path) {
        m["overridePath"] = true;
    }
    if (const Value* sf = get(d, "skipFallback"); sf != nullptr) {
        m["skipFallback"] = *sf;
    }
    at(facts, {"machine", "registries", "mirrors"})[text(get(d, "name"))] = std::move(m);
}

// Moves one v1.14 (or Registry*) document into the facts; false when it has no v1alpha1 home.
bool place(Value& f, const Value& d, const std::string& kind) {
    if (kind == "DiscoveryIdentityConfig") {
        if (const Value* v = get(d, "clusterID"))
            at(f, {"cluster", "id"}) = *v;
        if (const Value* v = get(d, "clusterSecret"))
            at(f, {"cluster", "secret"}) = *v;
    } else if (kind == "DiscoveryServiceConfig") {
        at(f, {"cluster", "discovery", "enabled"}) = true;
        const Value* ep = get(d, "endpoint");
        at(f, {"cluster", "discovery", "registries", "service", "endpoint"}) =
            ep != nullptr ? *ep : Value(std::string(k_discovery_default));
    } else if (kind == "KubeClusterConfig") {
        if (const Value* v = get(d, "clusterName"))
            at(f, {"cluster", "clusterName"}) = *v;
        if (const Value* v = get(d, "endpoint")) {
            at(f, {"cluster", "controlPlane", "endpoint"}) =
                v->is_object() ? v->value("url", Value()) : *v;
        }
    } else if (kind == "KubeAPIServerCAConfig" || kind == "KubeAggregatorCAConfig") {
        const char* field = kind == "KubeAPIServerCAConfig" ? "ca" : "aggregatorCA";
        if (const Value* v = doc::find_path(d, "issuingCA.cert"))
            at(f, {"cluster", field, "crt"}) = *v;
        if (const Value* v = doc::find_path(d, "issuingCA.key"))
            at(f, {"cluster", field, "key"}) = *v;
        if (const Value* acc = get(d, "acceptedCAs"); acc != nullptr && acc->is_array()) {
            Value& out = at(f, {"cluster", "acceptedCAs"});
            out = Value::array();
            for (const auto& a : *acc) {
                out.push_back(Value{{"crt", a.is_object() ? a.value("cert", Value()) : a}});
            }
        }
    } else if (kind == "KubeServiceAccountConfig") {
        if (const Value* v = doc::find_path(d, "issuer.privateKey"))
            at(f, {"cluster", "serviceAccount", "key"}) = *v;
    } else if (kind == "KubeEtcdEncryptionConfig") {
        if (const Value* v = get(d, "config")) {
            auto [key, secret] = encryption_secret(*v);
            at(f, {"cluster", key}) = secret;
        }
    } else if (kind == "KubeNetworkConfig") {
        for (const char* k : {"dnsDomain", "podSubnets", "serviceSubnets"}) {
            if (const Value* v = get(d, k))
                at(f, {"cluster", "network", k}) = *v;
        }
    } else if (kind == "KubeFlannelCNIConfig") {
        at(f, {"cluster", "network", "cni", "name"}) = "flannel";
    } else if (kind == "KubeProxyConfig") {
        Value b = body(d);
        if (b.contains("enabled")) {
            at(f, {"cluster", "proxy", "disabled"}) = !b["enabled"].get<bool>();
            b.erase("enabled");
        }
        merge_into(at(f, {"cluster", "proxy"}), b);
    } else if (kind == "KubeInlineManifestConfig") {
        Value& list = at(f, {"cluster", "inlineManifests"});
        if (!list.is_array()) {
            list = Value::array();
        }
        list.push_back(
            Value{{"name", d.value("name", Value())}, {"contents", d.value("manifest", Value())}});
    } else if (kind == "UnattendedInstallConfig") {
        Value& inst = at(f, {"machine", "install"});
        if (const Value* v = doc::find_path(d, "installer.image"))
            inst["image"] = *v;
        if (const Value* v = doc::find_path(d, "provisioning.wipe"))
            inst["wipe"] = *v;
        std::string match = text(doc::find_path(d, "provisioning.diskSelector.match"));
        if (std::string disk = disk_of_match(match); !disk.empty()) {
            inst["disk"] = disk;
        } else if (!match.empty()) {
            inst["diskSelector"] = Value{{"match", match}};
        }
    } else if (kind == "SysctlConfig") {
        if (const Value* v = get(d, "params"))
            merge_into(at(f, {"machine", "sysctls"}), *v);
    } else if (kind == "KernelModuleConfig") {
        Value& list = at(f, {"machine", "kernel", "modules"});
        if (!list.is_array()) {
            list = Value::array();
        }
        Value m = Value::object();
        m["name"] = d.value("name", Value());
        if (const Value* p = get(d, "parameters"))
            m["parameters"] = *p;
        list.push_back(std::move(m));
    } else if (kind == "KubePrismConfig") {
        at(f, {"machine", "features", "kubePrism", "enabled"}) = true;
        const Value* port = get(d, "port");
        at(f, {"machine", "features", "kubePrism", "port"}) = port != nullptr ? *port : Value(7445);
    } else if (kind == "RegistryMirrorConfig") {
        add_mirror(f, d);
    } else if (kind == "RegistryAuthConfig") {
        merge_into(at(f, {"machine", "registries", "config", text(get(d, "name")), "auth"}),
                   body(d));
    } else if (kind == "RegistryTLSConfig") {
        merge_into(at(f, {"machine", "registries", "config", text(get(d, "name")), "tls"}),
                   body(d));
    } else {
        return false;
    }
    return true;
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

void canonical_discovery(Value& f) {
    Value* disc = const_cast<Value*>(doc::find_path(f, "cluster.discovery"));
    if (disc == nullptr || !disc->is_object()) {
        return;
    }
    Value out = Value::object();
    bool enabled = disc->value("enabled", false);
    out["enabled"] = enabled;
    const Value* svc = doc::find_path(*disc, "registries.service");
    bool svc_disabled = svc != nullptr && svc->value("disabled", false);
    if (svc_disabled) {
        out["registries"]["service"]["disabled"] = true;
    } else if (enabled) {
        const Value* ep = svc != nullptr ? get(*svc, "endpoint") : nullptr;
        out["registries"]["service"]["endpoint"] =
            ep != nullptr ? *ep : Value(std::string(k_discovery_default));
    }
    *disc = std::move(out);
}

bool pem_key(const std::string& key) {
    return key == "crt" || key == "cert" || key == "ca";
}

std::string canonical_pem(const std::string& s) {
    std::string pem = machineconfig::pem_from_field(s);
    if (pem.find("-----BEGIN") == std::string::npos) {
        return s;
    }
    while (!pem.empty() && (pem.back() == '\n' || pem.back() == ' ' || pem.back() == '\r')) {
        pem.pop_back();
    }
    return pem;
}

// Drops nulls, empty containers and empty secrets; certificates become PEM text.
bool prune(Value& v, const std::string& key) {
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
        }
        return true;
    }
    if (v.is_object()) {
        std::vector<std::string> drop;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!prune(it.value(), it.key())) {
                drop.push_back(it.key());
            }
        }
        for (const auto& k : drop) {
            v.erase(k);
        }
        return !v.empty();
    }
    if (v.is_array()) {
        Value kept = Value::array();
        for (auto& item : v) {
            if (prune(item, key)) {
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
    for (const auto& d : documents) {
        if (d.is_object() && !d.contains("kind")) {
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
        if (!place(f, d, kind)) {
            Value& docs = at(f, {"documents", kind});
            if (const Value* name = get(d, "name"); name != nullptr) {
                docs[text(name)] = body(d);
            } else {
                docs = body(d);
            }
        }
    }
    if (f.contains("cluster") && f["cluster"].is_object()) {
        Value& cl = f["cluster"];
        if (!doc::find_path(cl, "network.cni.name")) {
            at(cl, {"network", "cni", "name"}) = "flannel"; // Talos's default when unset
        }
        canonical_discovery(f);
    }
    canonical_mirrors(f);
    prune(f, {});
    return f.is_object() ? f : Value::object();
}

} // namespace ichor::drift
