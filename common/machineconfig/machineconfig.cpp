#include "common/machineconfig/machineconfig.h"

#include "common/doc/vocabulary.h"
#include "common/machineconfig/layout.h"
#include "common/util/strings.h"

#include <array>

namespace ichor::machineconfig {

using doc::Value;

const Value* Config::v1alpha1() const {
    for (const auto& d : documents) {
        if (d.is_object() && d.contains("version") && d["version"] == "v1alpha1" &&
            !d.contains("kind")) {
            return &d;
        }
    }
    return nullptr;
}

const Value* Config::typed(std::string_view kind, std::string_view name) const {
    for (const auto& d : documents) {
        if (d.is_object() && d.value("kind", "") == kind &&
            (name.empty() || d.value("name", "") == name)) {
            return &d;
        }
    }
    return nullptr;
}

Result<Config> parse(std::string_view text, std::string_view source) {
    auto docs = doc::parse_documents(text, source);
    if (!docs) {
        return docs.error();
    }
    Config c;
    for (auto& d : *docs) {
        if (!d.is_object()) {
            return make_error(ErrorKind::Usage,
                              std::string(source) + ": a configuration document is not a mapping",
                              "", vocab::code::k_malformed_config);
        }
        c.documents.push_back(std::move(d));
    }
    if (c.documents.empty()) {
        return make_error(ErrorKind::Usage, std::string(source) + ": the configuration is empty",
                          "", vocab::code::k_malformed_config);
    }
    return c;
}

bool is_secret_key(std::string_view key) {
    static constexpr std::array<std::string_view, 15> k_keys = {
        "key",
        "token",
        "secret",
        "password",
        "privateKey",
        "passphrase",
        "identityToken",
        "auth",
        "clusterSecret",
        "bootstrapToken",
        "secretboxEncryptionSecret",
        "aescbcEncryptionSecret",
        "privateKeyData",
        "presharedKey",
        "apiToken", // a VIP's cloud API (vip.hcloud, vip.equinixMetal)
    };
    for (auto k : k_keys) {
        if (key == k) {
            return true;
        }
    }
    return false;
}

namespace {

bool is_digest(const Value& v) {
    return v.is_string() && v.get_ref<const std::string&>().starts_with("sha256:") &&
           v.get_ref<const std::string&>().size() == 7 + 64;
}

Value digest_value(const Value& v) {
    if (v.is_null() || is_digest(v)) {
        return v;
    }
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s.empty()) {
            return v;
        }
        return util::sha256_digest(s);
    }
    return util::sha256_digest(v.dump());
}

// A line "kind: Secret" (or DaemonSet) of a YAML text, at the start of a line.
bool has_kind_line(std::string_view text, std::string_view kind) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        std::string_view line =
            text.substr(at, end == std::string_view::npos ? text.size() - at : end - at);
        if (line.starts_with("kind:")) {
            std::string_view k = line.substr(5);
            while (!k.empty() && (k.front() == ' ' || k.front() == '"' || k.front() == '\'')) {
                k.remove_prefix(1);
            }
            while (!k.empty() &&
                   (k.back() == ' ' || k.back() == '\r' || k.back() == '"' || k.back() == '\'')) {
                k.remove_suffix(1);
            }
            if (k == kind) {
                return true;
            }
        }
        if (end == std::string_view::npos) {
            break;
        }
        at = end + 1;
    }
    return false;
}

bool secret_manifest(const Value& v) {
    if (!v.is_string()) {
        return false;
    }
    const auto& s = v.get_ref<const std::string&>();
    return has_kind_line(s, "Secret") && !has_kind_line(s, "DaemonSet");
}

// Manifest text, line by line: a document's `kind:` at the start of a line, its `data:` and
// `stringData:` blocks (each entry at the block's first indent, a block scalar's lines deeper).
std::size_t indent_of(std::string_view line) {
    const auto i = line.find_first_not_of(' ');
    return i == std::string_view::npos ? line.size() : i;
}

bool blank_or_comment(std::string_view line) {
    const auto body = util::trim(line);
    return body.empty() || body.starts_with('#');
}

bool is_digest_string(std::string_view v) {
    return v.size() == 71 && v.starts_with("sha256:");
}

// The lines of one Secret document with the values of its data and stringData digested.
void digest_secret_document(const std::vector<std::string_view>& doc, std::string& out) {
    auto emit = [&](std::string_view line) {
        out.append(line);
        out += '\n';
    };
    for (std::size_t i = 0; i < doc.size();) {
        const std::string_view line = doc[i];
        const bool top = !line.empty() && line[0] != ' ' && line[0] != '#';
        const bool block = top && (line.starts_with("data:") || line.starts_with("stringData:"));
        if (!block) {
            emit(line);
            ++i;
            continue;
        }
        const auto colon = line.find(':');
        const std::string_view inline_value = util::trim(line.substr(colon + 1));
        if (!inline_value.empty() && !inline_value.starts_with('#')) {
            // a flow mapping on the line (`data: {a: b}`): the whole of it, as one value
            emit(std::string(line.substr(0, colon + 1)) + " " +
                 (is_digest_string(inline_value) ? std::string(inline_value)
                                                 : util::sha256_digest(inline_value)));
            ++i;
            continue;
        }
        emit(line);
        ++i;
        std::size_t entry_indent = 0;
        while (i < doc.size()) {
            const std::string_view entry = doc[i];
            if (blank_or_comment(entry)) {
                emit(entry);
                ++i;
                continue;
            }
            const std::size_t in = indent_of(entry);
            if (in == 0 || (entry_indent != 0 && in < entry_indent)) {
                break; // the block's end
            }
            entry_indent = entry_indent == 0 ? in : entry_indent;
            const auto kc = entry.find(':');
            if (kc == std::string_view::npos) {
                emit(std::string(entry.substr(0, in)) + util::sha256_digest(entry.substr(in)));
                ++i;
                continue;
            }
            std::string value(util::trim(entry.substr(kc + 1)));
            ++i;
            // a block scalar (`|`, `>`) or a value on the lines below: those lines are the value
            std::string below;
            for (std::size_t j = i; j < doc.size(); ++j) {
                if (util::trim(doc[j]).empty()) {
                    continue; // a blank line belongs to the value only if a deeper one follows
                }
                if (indent_of(doc[j]) <= entry_indent) {
                    break;
                }
                for (; i <= j; ++i) {
                    below.append(doc[i]);
                    below += '\n';
                }
            }
            if (!below.empty()) {
                value += '\n' + below;
            }
            emit(std::string(entry.substr(0, kc + 1)) + " " +
                 (is_digest_string(value) ? value : util::sha256_digest(value)));
        }
    }
}

bool secret_environment_entry(const Value& v) {
    if (!v.is_string()) {
        return false;
    }
    const auto& s = v.get_ref<const std::string&>();
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq + 1 == s.size()) {
        return false;
    }
    const std::string name = util::to_lower(s.substr(0, eq));
    for (std::string_view w :
         {"key", "token", "secret", "password", "passwd", "auth", "credential"}) {
        if (name.find(w) != std::string::npos) {
            return true;
        }
    }
    return false;
}

void digest_in_place(Value& v, bool whole_is_secret) {
    if (whole_is_secret && (v.is_object() || v.is_array())) {
        // A secret key over a structure (a registry's `auth`): every value in it is a secret,
        // each digested, so that a capture can carry each one (docs/stream.md, "Credentials").
        for (auto& item : v) {
            digest_in_place(item, true);
        }
        return;
    }
    if (whole_is_secret) {
        v = digest_value(v);
        return;
    }
    if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            const bool manifest_key = it.key() == "contents" || it.key() == "manifest";
            if (manifest_key && it.value().is_string() &&
                partly_secret_manifest(it.value().get_ref<const std::string&>())) {
                it.value() = digest_manifest_secrets(it.value().get_ref<const std::string&>());
                continue;
            }
            const bool manifest = manifest_key && secret_manifest(it.value());
            if (it.key() == "environment" && it.value().is_array()) {
                for (auto& e : it.value()) {
                    if (secret_environment_entry(e)) {
                        e = digest_value(e);
                    }
                }
                continue;
            }
            digest_in_place(it.value(), manifest || is_secret_key(it.key()));
        }
    } else if (v.is_array()) {
        for (auto& item : v) {
            digest_in_place(item, false);
        }
    }
}

void digest_document(Value& out) {
    // A field that carries a secret inside a free-form value (KubeEtcdEncryptionConfig's
    // EncryptionConfiguration) keeps its form, each key's `secret` digested as Talos's own
    // redaction does (machinery v1.14.1 config/types/k8s/etcd_encryption.go); given as text, which
    // Talos does not read, it is a secret as a whole.
    for (const auto& r : layout::rows()) {
        if (layout::wraps_secret(r.field->codec) && out.is_object() &&
            out.value("kind", "") == r.document->kind && out.contains(r.field->field) &&
            !out[std::string(r.field->field)].is_object()) {
            out[std::string(r.field->field)] = digest_value(out[std::string(r.field->field)]);
        }
    }
    digest_in_place(out, false);
}

} // namespace

bool partly_secret_manifest(std::string_view text) {
    return has_kind_line(text, "Secret") && has_kind_line(text, "DaemonSet");
}

std::string digest_manifest_secrets(std::string_view text) {
    const std::vector<std::string> lines = util::split(text, '\n');
    std::string out;
    out.reserve(text.size());
    std::vector<std::string_view> doc;
    auto flush = [&] {
        bool secret = false;
        for (auto line : doc) {
            secret = secret || has_kind_line(line, "Secret");
        }
        if (secret) {
            digest_secret_document(doc, out);
        } else {
            for (auto line : doc) {
                out.append(line);
                out += '\n';
            }
        }
        doc.clear();
    };
    for (std::string_view line : lines) {
        if (line == "---" || line.starts_with("--- ") || line == "---\r") {
            flush();
            out.append(line);
            out += '\n';
        } else {
            doc.push_back(line);
        }
    }
    flush();
    out.pop_back(); // the last line had no newline of its own
    return out;
}

Value digest_secrets(const Value& document) {
    Value out = document;
    digest_document(out);
    return out;
}

std::vector<Value> digest_secrets(std::vector<Value>&& documents) {
    for (auto& d : documents) {
        digest_document(d);
    }
    return std::move(documents);
}

std::vector<Value> digest_secrets(const std::vector<Value>& documents) {
    return digest_secrets(std::vector<Value>(documents));
}

std::string pem_from_field(std::string_view field) {
    std::string_view t = util::trim(field);
    if (t.starts_with("-----BEGIN")) {
        return std::string(t) + "\n";
    }
    auto decoded = util::base64_decode(t);
    return decoded ? *decoded : std::string();
}

namespace {

std::string str_at(const Value* v, std::string_view path) {
    return v == nullptr ? std::string() : doc::get_string(*v, path);
}

// A v1.14 document's value for a v1alpha1 path, as the table reads it back.
std::string v114_string(const Config& c, std::string_view path) {
    Value v = layout::read(c.documents, path);
    return v.is_string() ? v.get<std::string>() : std::string();
}

void read_install(const Config& c, const Value* legacy, Install& install) {
    if (legacy != nullptr) {
        if (const Value* inst = doc::find_path(*legacy, "machine.install");
            inst && inst->is_object()) {
            // Talos's encoder writes an unset field as null (after talosctl patch mc, say): a
            // null or mistyped value is taken as unset, never a crash.
            auto text = [&](const char* k) {
                auto it = inst->find(k);
                return it != inst->end() && it->is_string() ? it->get<std::string>()
                                                            : std::string();
            };
            install.disk = text("disk");
            install.image = text("image");
            auto wipe = inst->find("wipe");
            install.wipe = wipe != inst->end() && wipe->is_boolean() && wipe->get<bool>();
            if (inst->contains("diskSelector")) {
                install.disk_selector = (*inst)["diskSelector"].dump();
            }
        }
    }
    if (std::string image = v114_string(c, "machine.install.image"); !image.empty()) {
        install.image = image;
    }
    if (Value w = layout::read(c.documents, "machine.install.wipe"); w.is_boolean()) {
        install.wipe = w.get<bool>();
    }
    // The selector as the document writes it, whether a device path or another CEL match.
    if (const Value* m = layout::stored(c.documents, "machine.install.disk");
        m != nullptr && m->is_string() && !m->get<std::string>().empty()) {
        install.disk_selector = m->get<std::string>();
    }
}

// True when a v1.14 document of the configuration holds the v1alpha1 path's field.
bool in_document(const Config& c, std::string_view path) {
    auto row = layout::home(path);
    return row && c.typed(row->document->kind) != nullptr;
}

} // namespace

Facts extract_facts(const Config& c) {
    Facts f;
    const Value* legacy = c.v1alpha1();
    for (const auto& d : c.documents) {
        if (d.contains("kind")) {
            f.kinds.push_back(d.value("kind", ""));
        }
    }
    // The cluster's identity, name or CA in their documents make the v1.14 layout.
    bool v114 = in_document(c, "cluster.id") || in_document(c, "cluster.clusterName") ||
                in_document(c, "cluster.ca.crt");
    f.layout = v114 ? "v1.14" : (f.kinds.empty() ? "v1alpha1" : "multi-document");

    f.cluster_id = str_at(legacy, "cluster.id");
    if (f.cluster_id.empty()) {
        f.cluster_id = v114_string(c, "cluster.id");
    }
    f.cluster_name = str_at(legacy, "cluster.clusterName");
    if (f.cluster_name.empty()) {
        f.cluster_name = v114_string(c, "cluster.clusterName");
    }
    f.endpoint = str_at(legacy, "cluster.controlPlane.endpoint");
    if (f.endpoint.empty()) {
        f.endpoint = v114_string(c, "cluster.controlPlane.endpoint");
    }
    f.role = str_at(legacy, "machine.type");
    f.talos_ca_pem = pem_from_field(str_at(legacy, "machine.ca.crt"));
    if (legacy != nullptr) {
        if (const Value* acc = doc::find_path(*legacy, "machine.acceptedCAs");
            acc && acc->is_array()) {
            for (const auto& a : *acc) {
                if (a.is_object() && a.contains("crt") && a["crt"].is_string()) {
                    f.accepted_ca_pems.push_back(pem_from_field(a["crt"].get<std::string>()));
                }
            }
        }
    }
    read_install(c, legacy, f.install);

    // The contract is not written in a configuration; the documents tell it apart. Talos's
    // generator writes HostnameConfig and Registry*Config documents from contract 1.12 on.
    if (v114) {
        f.version_contract = "1.14";
    } else if (c.typed("HostnameConfig") != nullptr) {
        f.version_contract = "1.12+";
    } else {
        f.version_contract = "pre-1.12";
    }
    return f;
}

} // namespace ichor::machineconfig
