// The v1.14 layout as the lab approximates it (tests/lab/internal/sim/layout14.go, docs/lab.md):
// machinery v1.13.9 has no 1.14 contract and v1.14 is not published as a Go module, so a 1.14
// render is the 1.13 render with fields moved into the v1.14 documents exactly as the lab moves
// them. docs/render.md says so among the intended differences.
#include "common/render/render.h"
#include "common/util/strings.h"

namespace ichor::render {

using doc::Value;

namespace {

Value new_doc(const char* kind) {
    Value d = Value::object();
    d["apiVersion"] = "v1alpha1";
    d["kind"] = kind;
    return d;
}

const Value* get(const Value& v, std::string_view key) {
    if (!v.is_object()) {
        return nullptr;
    }
    auto it = v.find(std::string(key));
    return it == v.end() ? nullptr : &*it;
}

void set_if(Value& d, const char* key, const Value* v) {
    if (v != nullptr) {
        d[key] = *v;
    }
}

Value raw_pem(const Value& v) {
    if (!v.is_string()) {
        return v;
    }
    auto decoded = util::base64_decode(v.get<std::string>());
    if (!decoded) {
        return v;
    }
    std::string s = *decoded;
    while (!s.empty() && s.back() == '\n') {
        s.pop_back();
    }
    return s;
}

Value pem_pair(const Value& ck) {
    Value out = Value::object();
    if (const Value* crt = get(ck, "crt"); crt != nullptr) {
        out["cert"] = raw_pem(*crt);
    }
    if (const Value* key = get(ck, "key");
        key != nullptr && key->is_string() && !key->get<std::string>().empty()) {
        out["key"] = raw_pem(*key);
    }
    return out;
}

Value encryption_configuration(const char* provider, const Value& secret) {
    Value key = Value::object();
    key["name"] = "key1";
    key["secret"] = secret.is_string() ? secret : Value(secret.dump());
    Value prov = Value::object();
    prov[provider] = Value{{"keys", Value::array({key})}};
    Value res = Value::object();
    res["providers"] = Value::array({prov});
    res["resources"] = Value::array({"secrets"});
    return Value{{"resources", Value::array({res})}};
}

bool is_true(const Value* v) {
    return v != nullptr &&
           ((v->is_boolean() && v->get<bool>()) || (v->is_string() && *v == "true"));
}

void move_cluster(Value& cluster, std::vector<Value>& docs) {
    const Value* id = get(cluster, "id");
    const Value* secret = get(cluster, "secret");
    if (id != nullptr || secret != nullptr) {
        Value d = new_doc("DiscoveryIdentityConfig");
        set_if(d, "clusterID", id);
        set_if(d, "clusterSecret", secret);
        docs.push_back(std::move(d));
        cluster.erase("id");
        cluster.erase("secret");
    }
    if (const Value* disc = get(cluster, "discovery"); disc != nullptr) {
        const Value* svc = doc::find_path(*disc, "registries.service");
        bool svc_disabled = svc != nullptr && is_true(get(*svc, "disabled"));
        if (is_true(get(*disc, "enabled")) && !svc_disabled) {
            Value d = new_doc("DiscoveryServiceConfig");
            d["name"] = "default";
            const Value* ep = svc != nullptr ? get(*svc, "endpoint") : nullptr;
            d["endpoint"] = ep != nullptr ? *ep : Value("https://discovery.talos.dev/");
            docs.push_back(std::move(d));
        }
        cluster.erase("discovery");
    }
    const Value* name = get(cluster, "clusterName");
    const Value* endpoint = doc::find_path(cluster, "controlPlane.endpoint");
    if (name != nullptr || endpoint != nullptr) {
        Value d = new_doc("KubeClusterConfig");
        set_if(d, "clusterName", name);
        set_if(d, "endpoint", endpoint);
        docs.push_back(std::move(d));
        cluster.erase("clusterName");
        if (cluster.contains("controlPlane") && cluster["controlPlane"].is_object()) {
            cluster["controlPlane"].erase("endpoint");
            if (cluster["controlPlane"].empty()) {
                cluster.erase("controlPlane");
            }
        }
    }
    if (const Value* ca = get(cluster, "ca"); ca != nullptr) {
        Value d = new_doc("KubeAPIServerCAConfig");
        d["issuingCA"] = pem_pair(*ca);
        if (const Value* acc = get(cluster, "acceptedCAs"); acc != nullptr && acc->is_array()) {
            Value seq = Value::array();
            for (const auto& item : *acc) {
                if (const Value* crt = get(item, "crt"); crt != nullptr) {
                    seq.push_back(raw_pem(*crt));
                }
            }
            d["acceptedCAs"] = std::move(seq);
        }
        docs.push_back(std::move(d));
        cluster.erase("ca");
        cluster.erase("acceptedCAs");
    }
    if (const Value* agg = get(cluster, "aggregatorCA"); agg != nullptr) {
        Value d = new_doc("KubeAggregatorCAConfig");
        d["issuingCA"] = pem_pair(*agg);
        docs.push_back(std::move(d));
        cluster.erase("aggregatorCA");
    }
    if (const Value* sa = doc::find_path(cluster, "serviceAccount.key"); sa != nullptr) {
        Value d = new_doc("KubeServiceAccountConfig");
        d["issuer"] = Value{{"privateKey", raw_pem(*sa)}};
        docs.push_back(std::move(d));
        cluster.erase("serviceAccount");
    }
    for (auto [key, provider] : {std::pair{"secretboxEncryptionSecret", "secretbox"},
                                 std::pair{"aescbcEncryptionSecret", "aescbc"}}) {
        if (const Value* s = get(cluster, key); s != nullptr) {
            Value d = new_doc("KubeEtcdEncryptionConfig");
            d["config"] = encryption_configuration(provider, *s);
            docs.push_back(std::move(d));
            cluster.erase(key);
        }
    }
    if (cluster.contains("network") && cluster["network"].is_object()) {
        Value& net = cluster["network"];
        Value d = new_doc("KubeNetworkConfig");
        for (const char* k : {"dnsDomain", "podSubnets", "serviceSubnets"}) {
            set_if(d, k, get(net, k));
            net.erase(k);
        }
        docs.push_back(std::move(d));
        if (net.empty()) {
            cluster.erase("network");
        }
    }
}

void move_machine(Value& mach, std::vector<Value>& docs) {
    if (const Value* inst = get(mach, "install");
        inst != nullptr && get(*inst, "diskSelector") == nullptr) {
        Value d = new_doc("UnattendedInstallConfig");
        if (const Value* img = get(*inst, "image"); img != nullptr) {
            d["installer"] = Value{{"image", *img}};
        }
        Value prov = Value::object();
        if (const Value* disk = get(*inst, "disk"); disk != nullptr) {
            std::string text = disk->is_string() ? disk->get<std::string>() : disk->dump();
            prov["diskSelector"] = Value{{"match", "disk.dev_path == \"" + text + "\""}};
        }
        if (const Value* wipe = get(*inst, "wipe"); wipe != nullptr) {
            prov["wipe"] = *wipe;
        }
        d["provisioning"] = std::move(prov);
        docs.push_back(std::move(d));
        mach.erase("install");
    }
    if (const Value* sysctls = get(mach, "sysctls"); sysctls != nullptr) {
        Value d = new_doc("SysctlConfig");
        d["params"] = *sysctls;
        docs.push_back(std::move(d));
        mach.erase("sysctls");
    }
    if (const Value* prism = doc::find_path(mach, "features.kubePrism"); prism != nullptr) {
        if (is_true(get(*prism, "enabled"))) {
            Value d = new_doc("KubePrismConfig");
            const Value* port = get(*prism, "port");
            d["port"] = port != nullptr ? *port : Value(7445);
            docs.push_back(std::move(d));
        }
        mach["features"].erase("kubePrism");
    }
}

} // namespace

std::vector<Value> to_layout14(std::vector<Value> documents) {
    std::vector<Value> out;
    for (auto& d : documents) {
        if (!d.is_object() || !d.contains("version") || d.contains("kind")) {
            out.push_back(std::move(d));
            continue;
        }
        std::vector<Value> moved;
        if (d.contains("cluster") && d["cluster"].is_object()) {
            move_cluster(d["cluster"], moved);
        }
        if (d.contains("machine") && d["machine"].is_object()) {
            move_machine(d["machine"], moved);
        }
        out.push_back(std::move(d));
        for (auto& m : moved) {
            out.push_back(std::move(m));
        }
    }
    return out;
}

} // namespace ichor::render
