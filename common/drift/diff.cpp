#include "common/drift/diff.h"

#include "common/machineconfig/layout.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

namespace ichor::drift {

using doc::Value;

namespace {

bool is_digest(const Value& v) {
    return v.is_string() && v.get_ref<const std::string&>().starts_with("sha256:") &&
           v.get_ref<const std::string&>().size() == 71;
}

std::string scalar_text(const Value& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string rtrim_newlines(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.pop_back();
    }
    return s;
}

// The v1.14 KubeEtcdEncryptionConfig.config that carries an encryption secret, as the node
// digests it (the compact JSON of the document model).
std::string replaced(std::string s, const std::string& from, const std::string& to) {
    if (auto at = s.find(from); at != std::string::npos) {
        s.replace(at, from.size(), to);
    }
    return s;
}

// The EncryptionConfiguration forms a secret may be stored in: as the layout table writes it
// (key "key1" under its provider), and as Talos's own 1.14 generator does (machinery v1.14.1
// config/generate/kubernetes.go: a secretbox secret as "key2", an aescbc one under "secretbox").
std::vector<std::string> encryption_config_json(machineconfig::layout::Codec provider,
                                                const std::string& secret) {
    std::string ours = machineconfig::layout::encode(provider, secret).dump();
    std::string talos =
        replaced(replaced(ours, "\"aescbc\"", "\"secretbox\""), "\"key1\"",
                 provider == machineconfig::layout::Codec::Secretbox ? "\"key2\"" : "\"key1\"");
    return {ours, talos};
}

bool secret_matches(const std::string& digest, const Value& plain) {
    if (!plain.is_string()) {
        return util::sha256_digest(plain.dump()) == digest;
    }
    const std::string p = plain.get<std::string>();
    if (util::sha256_digest(p) == digest) {
        return true;
    }
    std::vector<std::string> forms;
    if (auto decoded = util::base64_decode(p); decoded && !decoded->empty()) {
        forms.push_back(*decoded);
        forms.push_back(rtrim_newlines(*decoded));
        forms.push_back(rtrim_newlines(*decoded) + "\n");
    }
    if (p.starts_with("-----BEGIN")) {
        forms.push_back(rtrim_newlines(p));
        forms.push_back(rtrim_newlines(p) + "\n");
        forms.push_back(util::base64_encode(rtrim_newlines(p) + "\n"));
    }
    for (const auto& r : machineconfig::layout::rows()) {
        if (machineconfig::layout::wraps_secret(r.field->codec)) {
            for (auto& f : encryption_config_json(r.field->codec, p)) {
                forms.push_back(std::move(f));
            }
        }
    }
    for (const auto& f : forms) {
        if (util::sha256_digest(f) == digest) {
            return true;
        }
    }
    return false;
}

void walk(const Value& live, const Value& rendered, std::vector<std::string>& path,
          std::vector<Change>& out);

void leaf(const Value& live, const Value& rendered, std::vector<std::string>& path,
          std::vector<Change>& out) {
    bool secret = !path.empty() && machineconfig::is_secret_key(path.back());
    if (same(live, rendered, secret)) {
        return;
    }
    Change c;
    c.path = path;
    c.dotted = util::join(path, ".");
    c.current = shown(live, secret);
    c.proposed = shown(rendered, secret);
    c.secret = secret || is_digest(live);
    out.push_back(std::move(c));
}

void walk(const Value& live, const Value& rendered, std::vector<std::string>& path,
          std::vector<Change>& out) {
    static const Value k_null;
    bool secret = !path.empty() && machineconfig::is_secret_key(path.back());
    bool lo = live.is_object();
    bool ro = rendered.is_object();
    // an empty mapping against nothing is a change of its own: a document without fields
    // (normalize keeps it so) that one side has
    const bool bare =
        (lo && live.empty() && rendered.is_null()) || (ro && rendered.empty() && live.is_null());
    if (secret || bare || !(lo || ro) || (lo && !ro && !rendered.is_null()) ||
        (ro && !lo && !live.is_null())) {
        leaf(live, rendered, path, out);
        return;
    }
    if (ro) {
        for (auto it = rendered.begin(); it != rendered.end(); ++it) {
            path.push_back(it.key());
            auto l = lo ? live.find(it.key()) : live.end();
            walk(lo && l != live.end() ? *l : k_null, it.value(), path, out);
            path.pop_back();
        }
    }
    if (lo) {
        for (auto it = live.begin(); it != live.end(); ++it) {
            if (ro && rendered.contains(it.key())) {
                continue;
            }
            path.push_back(it.key());
            walk(it.value(), k_null, path, out);
            path.pop_back();
        }
    }
}

} // namespace

bool same(const Value& live, const Value& rendered, bool secret) {
    if (live.is_null() || rendered.is_null()) {
        return live.is_null() && rendered.is_null();
    }
    if (live.is_object() || rendered.is_object()) {
        if (!live.is_object() || !rendered.is_object() || live.size() != rendered.size()) {
            return false;
        }
        for (auto it = rendered.begin(); it != rendered.end(); ++it) {
            auto l = live.find(it.key());
            if (l == live.end() ||
                !same(*l, it.value(), secret || machineconfig::is_secret_key(it.key()))) {
                return false;
            }
        }
        return true;
    }
    if (live.is_array() || rendered.is_array()) {
        if (!live.is_array() || !rendered.is_array() || live.size() != rendered.size()) {
            return false;
        }
        for (size_t i = 0; i < live.size(); ++i) {
            if (!same(live[i], rendered[i], secret)) {
                return false;
            }
        }
        return true;
    }
    if (secret && is_digest(live) && !is_digest(rendered)) {
        return secret_matches(live.get<std::string>(), rendered);
    }
    return scalar_text(live) == scalar_text(rendered);
}

Value shown(const Value& value, bool secret) {
    if (value.is_null()) {
        return value;
    }
    if (secret) {
        if (is_digest(value)) {
            return value;
        }
        return util::sha256_digest(value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (value.is_object() || value.is_array()) {
        return machineconfig::digest_secrets(value);
    }
    return value;
}

std::vector<Change> diff(const Value& live, const Value& rendered) {
    std::vector<Change> out;
    std::vector<std::string> path;
    walk(live, rendered, path, out);
    return out;
}

} // namespace ichor::drift
