#include "common/stages/credentials.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

#include <map>
#include <set>

namespace ichor::stages {

using doc::Value;
using objects::PatchView;

namespace {

// A Secret key from the value's place: [-._a-zA-Z0-9], at most 253 characters, unique.
std::string key_of(const drift::CapturedSecret& s, std::set<std::string>& taken) {
    std::string raw = (s.kind.empty() ? std::string("v1alpha1") : s.kind) +
                      (s.name.empty() ? "" : "." + s.name) + "." + util::join(s.path, ".");
    std::string key;
    for (char c : raw) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
        key.push_back(ok ? c : '_');
    }
    if (key.size() > 240) {
        key = key.substr(0, 240);
    }
    std::string unique = key;
    for (int i = 2; taken.count(unique) != 0; ++i) {
        unique = key + "-" + std::to_string(i);
    }
    taken.insert(unique);
    return unique;
}

// Every string of the documents whose digest is wanted, by digest.
void collect(const Value& v, const std::set<std::string>& wanted,
             std::map<std::string, std::string>& found) {
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        const std::string d = util::sha256_digest(s);
        if (wanted.count(d) != 0) {
            found.emplace(d, s);
        }
        // a manifest whose Secrets the Inspection digests is carried by the digest of that form
        if (machineconfig::partly_secret_manifest(s)) {
            const std::string m = util::sha256_digest(machineconfig::digest_manifest_secrets(s));
            if (wanted.count(m) != 0) {
                found.emplace(m, s);
            }
        }
    } else if (v.is_object() || v.is_array()) {
        for (const auto& i : v) {
            collect(i, wanted, found);
        }
    }
}

} // namespace

std::string credentials_secret_name(const std::string& patch_name) {
    return patch_name + "-credentials";
}

Value attach_credentials(Value& patch, const std::vector<drift::CapturedSecret>& secrets,
                         const std::vector<std::string>& nodes) {
    if (secrets.empty()) {
        return Value();
    }
    const std::string patch_name = doc::get_string(patch, "metadata.name");
    const std::string secret = credentials_secret_name(patch_name);
    Value values = Value::array();
    Value digests = Value::object();
    std::set<std::string> taken;
    for (const auto& s : secrets) {
        const std::string key = key_of(s, taken);
        Value e = Value::object();
        e["secretRef"] = Value{{"name", secret}, {"key", key}};
        if (!s.kind.empty()) {
            e["kind"] = s.kind;
        }
        if (!s.name.empty()) {
            e["name"] = s.name;
        }
        e["path"] = s.path;
        e["digest"] = s.digest;
        values.push_back(std::move(e));
        digests[key] = s.digest;
    }
    patch["spec"]["secretValues"] = std::move(values);
    Value sec = Value::object();
    sec["apiVersion"] = "v1";
    sec["kind"] = "Secret";
    sec["metadata"]["name"] = secret;
    sec["metadata"]["namespace"] = doc::get_string(patch, "metadata.namespace");
    sec["metadata"]["labels"][std::string(vocab::k_label_cluster)] = PatchView(patch).cluster();
    sec["metadata"]["annotations"][std::string(vocab::k_annotation_credential_digests)] =
        digests.dump();
    sec["metadata"]["annotations"][std::string(vocab::k_annotation_credential_nodes)] =
        util::join(nodes, ",");
    sec["type"] = "Opaque";
    return sec;
}

bool is_credentials_secret(const Value& item) {
    return item.value("kind", "") == "Secret" && item.value("apiVersion", "") == "v1" &&
           doc::find_path(item, "metadata.annotations") != nullptr &&
           item["metadata"]["annotations"].contains(
               std::string(vocab::k_annotation_credential_digests));
}

Result<Value> fill_credentials(const Value& planned,
                               const std::vector<std::pair<std::string, std::string>>& configs) {
    const std::string name = doc::get_string(planned, "metadata.name");
    const Value* ann = doc::find_path(planned, "metadata.annotations");
    auto annotation = [&](std::string_view key) {
        return ann != nullptr && ann->is_object() ? ann->value(std::string(key), "")
                                                  : std::string();
    };
    auto digests =
        doc::parse_one(annotation(vocab::k_annotation_credential_digests), "credential digests");
    if (!digests || !digests->is_object()) {
        return make_error(ErrorKind::Findings,
                          "Secret " + name + ": its credential digests cannot be read", "",
                          std::string(vocab::code::k_credential_changed));
    }
    const std::string nodes_text = annotation(vocab::k_annotation_credential_nodes);
    std::set<std::string> nodes;
    for (const auto& n : util::split(nodes_text, ',')) {
        nodes.insert(n);
    }
    std::set<std::string> wanted;
    for (auto it = digests->begin(); it != digests->end(); ++it) {
        wanted.insert(it.value().is_string() ? it.value().get<std::string>() : "");
    }
    std::map<std::string, std::string> found;
    for (const auto& [address, bytes] : configs) {
        if (!nodes.empty() && nodes.count(address) == 0) {
            continue;
        }
        auto docs = doc::parse_documents(bytes, address);
        if (!docs) {
            continue;
        }
        for (const auto& d : *docs) {
            collect(d, wanted, found);
        }
    }
    Value obj = planned;
    obj["data"] = Value::object();
    for (auto it = digests->begin(); it != digests->end(); ++it) {
        auto f = found.find(it.value().is_string() ? it.value().get<std::string>() : "");
        if (f == found.end()) {
            return make_error(ErrorKind::Findings,
                              "Secret " + name + ": no configuration of " + nodes_text +
                                  " holds the value of " + it.key() +
                                  " any more (the node changed since the plan); nothing was "
                                  "written",
                              "plan again: kubectl ichor adopt ... --plan",
                              std::string(vocab::code::k_credential_changed));
        }
        obj["data"][it.key()] = util::base64_encode(f->second);
    }
    return obj;
}

render::SecretLookup lookup_in_config(const std::vector<Value>& patches,
                                      const std::string& config) {
    std::map<std::string, std::string> digest_of; // secret + "/" + key -> digest
    std::set<std::string> wanted;
    for (const auto& p : patches) {
        auto values = render::secret_values(p);
        if (!values) {
            continue;
        }
        for (const auto& v : *values) {
            digest_of[v.secret + "/" + v.key] = v.digest;
            wanted.insert(v.digest);
        }
    }
    std::map<std::string, std::string> found;
    if (auto docs = doc::parse_documents(config, "the node's configuration")) {
        for (const auto& d : *docs) {
            collect(d, wanted, found);
        }
    }
    return [digest_of = std::move(digest_of), found = std::move(found)](
               const std::string& secret, const std::string& key) -> std::optional<std::string> {
        auto d = digest_of.find(secret + "/" + key);
        if (d == digest_of.end()) {
            return std::nullopt;
        }
        auto v = found.find(d->second);
        return v == found.end() ? std::nullopt : std::optional<std::string>(v->second);
    };
}

bool carries_credentials(const std::vector<Value>& patches) {
    for (const auto& p : patches) {
        const Value* sv = PatchView(p).secret_values();
        if (sv != nullptr && !sv->empty()) {
            return true;
        }
    }
    return false;
}

} // namespace ichor::stages
