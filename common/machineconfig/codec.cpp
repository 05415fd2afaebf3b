#include "common/machineconfig/codec.h"

#include "common/util/strings.h"

#include <algorithm>

namespace ichor::machineconfig::layout {

using doc::Value;

namespace {

constexpr std::string_view k_dev_path = "disk.dev_path == \"";

std::string text(const Value& v) {
    return v.is_null() ? std::string() : v.is_string() ? v.get<std::string>() : v.dump();
}

// A mapping's boolean, true as YAML writes it (true or "true").
bool is_true(const Value& m, const char* key) {
    return m.is_object() && m.contains(key) && text(m[key]) == "true";
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

// The provider and secret of an EncryptionConfiguration (also given as YAML text), or nullopt.
std::optional<std::pair<Codec, Value>> encryption_secret(const Value& config) {
    Value cfg = config;
    if (cfg.is_string()) {
        auto parsed = doc::parse_one(cfg.get<std::string>(), "EncryptionConfiguration");
        cfg = parsed ? *parsed : Value();
    }
    const Value* res = cfg.is_object() ? doc::find_path(cfg, "resources") : nullptr;
    if (res == nullptr || !res->is_array()) {
        return std::nullopt;
    }
    for (const auto& r : *res) {
        const Value* provs = r.is_object() ? doc::find_path(r, "providers") : nullptr;
        for (const auto& p : provs != nullptr && provs->is_array() ? *provs : Value::array()) {
            for (auto [codec, name] :
                 {std::pair{Codec::Secretbox, "secretbox"}, std::pair{Codec::Aescbc, "aescbc"}}) {
                const Value* ks =
                    p.is_object() ? doc::find_path(p, std::string(name) + ".keys") : nullptr;
                for (const auto& k : ks != nullptr && ks->is_array() ? *ks : Value::array()) {
                    if (k.is_object() && k.contains("secret") && !k["secret"].is_null()) {
                        return std::pair{codec, k["secret"]};
                    }
                }
            }
        }
    }
    return std::nullopt;
}

Value decode_secret(Codec codec, const Value& config) {
    auto found = encryption_secret(config);
    if (!found) {
        return codec == Codec::Secretbox ? config : Value();
    }
    return found->first == codec ? found->second : Value();
}

Value encode_mirror(const Value& m) {
    bool override_path = is_true(m, "overridePath");
    Value eps = Value::array();
    const Value* list = m.is_object() ? doc::find_path(m, "endpoints") : nullptr;
    for (const auto& e : list != nullptr && list->is_array() ? *list : Value::array()) {
        Value ep = Value::object();
        ep["url"] = e;
        if (override_path) {
            ep["overridePath"] = true;
        }
        eps.push_back(std::move(ep));
    }
    Value d = Value::object();
    d["endpoints"] = std::move(eps);
    if (is_true(m, "skipFallback")) {
        d["skipFallback"] = true;
    }
    return d;
}

// v1alpha1's mirror holds overridePath once, the document on each endpoint.
Value decode_mirror(const Value& d) {
    Value m = Value::object();
    Value urls = Value::array();
    bool override_path = false;
    const Value* eps = d.is_object() ? doc::find_path(d, "endpoints") : nullptr;
    for (const auto& e : eps != nullptr && eps->is_array() ? *eps : Value::array()) {
        if (e.is_object()) {
            urls.push_back(e.value("url", Value()));
            override_path = override_path || is_true(e, "overridePath");
        } else {
            urls.push_back(e);
        }
    }
    m["endpoints"] = std::move(urls);
    if (override_path) {
        m["overridePath"] = true;
    }
    if (const Value* sf = d.is_object() ? doc::find_path(d, "skipFallback") : nullptr;
        sf != nullptr && !sf->is_null()) {
        m["skipFallback"] = *sf;
    }
    return m;
}

std::string disk_of_match(const std::string& match) {
    auto p = match.find(k_dev_path);
    if (p == std::string::npos) {
        return {};
    }
    auto start = p + k_dev_path.size();
    auto end = match.find('"', start);
    return end == std::string::npos ? std::string() : match.substr(start, end - start);
}

Value pem_list(const Value& v) {
    Value seq = Value::array();
    for (const auto& item : v) {
        if (item.is_object() && item.contains("crt")) {
            seq.push_back(raw_pem(item["crt"]));
        }
    }
    return seq;
}

Value crt_list(const Value& v) {
    Value out = Value::array();
    for (const auto& a : v) {
        out.push_back(Value{{"crt", a.is_object() ? a.value("cert", Value()) : a}});
    }
    return out;
}

} // namespace

Value encode(Codec codec, const Value& v) {
    switch (codec) {
    case Codec::Same:
    case Codec::Url:
        return v;
    case Codec::Pem:
        return raw_pem(v);
    case Codec::PemKey:
        return v.is_string() && !v.get<std::string>().empty() ? raw_pem(v) : Value();
    case Codec::PemList:
        return v.is_array() ? pem_list(v) : Value();
    case Codec::DevPath:
        return std::string(k_dev_path) + (v.is_string() ? v.get<std::string>() : v.dump()) + "\"";
    case Codec::Cel:
        return Value();
    case Codec::Secretbox:
        return encryption_configuration("secretbox", v);
    case Codec::Aescbc:
        return encryption_configuration("aescbc", v);
    case Codec::Negated:
        return v.is_boolean() ? Value(!v.get<bool>()) : Value();
    case Codec::Mirror:
        return encode_mirror(v);
    }
    return Value();
}

Value decode(Codec codec, const Value& v) {
    switch (codec) {
    case Codec::Same:
    case Codec::Pem:
    case Codec::PemKey:
        return v;
    case Codec::PemList:
        return v.is_array() ? crt_list(v) : Value();
    case Codec::Url:
        return v.is_object() ? v.value("url", Value()) : v;
    case Codec::DevPath: {
        std::string disk = disk_of_match(text(v));
        return disk.empty() ? Value() : Value(disk);
    }
    case Codec::Cel: {
        std::string match = text(v);
        return match.empty() || !disk_of_match(match).empty() ? Value() : Value(match);
    }
    case Codec::Secretbox:
    case Codec::Aescbc:
        return decode_secret(codec, v);
    case Codec::Negated:
        return v.is_boolean() ? Value(!v.get<bool>()) : Value();
    case Codec::Mirror:
        return decode_mirror(v);
    }
    return Value();
}

bool wraps_secret(Codec codec) {
    return codec == Codec::Secretbox || codec == Codec::Aescbc;
}

bool generated_encryption(const Value& config) {
    auto only = [](const Value& m, std::initializer_list<const char*> keys) {
        if (!m.is_object() || m.size() != keys.size()) {
            return false;
        }
        for (const char* k : keys) {
            if (!m.contains(k)) {
                return false;
            }
        }
        return true;
    };
    auto generated_key = [&](const Value& k) {
        return only(k, {"name", "secret"}) && k["secret"].is_string() &&
               (k["name"] == "key1" || k["name"] == "key2");
    };
    auto generated_provider = [&](const Value& p) {
        if (!p.is_object() || p.size() != 1) {
            return false;
        }
        const auto it = p.begin();
        const Value& keys = it.value().is_object() ? it.value().value("keys", Value()) : Value();
        return (it.key() == "secretbox" || it.key() == "aescbc") && only(it.value(), {"keys"}) &&
               keys.is_array() && keys.size() == 1 && generated_key(keys[0]);
    };
    if (!only(config, {"resources"}) || !config["resources"].is_array() ||
        config["resources"].size() != 1) {
        return false;
    }
    const Value& r = config["resources"][0];
    if (!only(r, {"providers", "resources"}) || r["resources"] != Value::array({"secrets"}) ||
        !r["providers"].is_array() || r["providers"].empty() || r["providers"].size() > 2) {
        return false;
    }
    return std::all_of(r["providers"].begin(), r["providers"].end(), generated_provider);
}

} // namespace ichor::machineconfig::layout
