#include "common/talos/talosconfig.h"

#include "common/doc/limits.h"
#include "common/doc/value.h"
#include "common/doc/vocabulary.h"
#include "common/talos/certs.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

namespace ichor::talos {

namespace {

constexpr const char* k_service_account_path = "/var/run/secrets/talos.dev/config";

Error config_error(const std::string& message, std::string hint = {}) {
    return make_error(ErrorKind::Config, message, std::move(hint));
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> default_paths(const Environment& env) {
    std::vector<std::string> out;
    if (auto tc = env.get("TALOSCONFIG"); tc && !tc->empty()) {
        out.push_back(*tc);
    }
    auto talos_home = env.get("TALOS_HOME");
    if (talos_home && util::starts_with(*talos_home, "/")) {
        out.push_back(*talos_home + "/config");
    } else {
        out.push_back(env.home() + "/.talos/config");
    }
    out.emplace_back(k_service_account_path);
    return out;
}

Result<std::vector<std::string>> string_list(const doc::Value& ctx, const char* field,
                                             const std::string& where) {
    std::vector<std::string> out;
    auto it = ctx.find(field);
    if (it == ctx.end() || it->is_null()) {
        return out;
    }
    if (!it->is_array()) {
        return config_error(where + ": " + field + ": not a list");
    }
    for (const auto& v : *it) {
        if (!v.is_string()) {
            return config_error(where + ": " + field + ": not a list of strings");
        }
        out.push_back(v.get<std::string>());
    }
    return out;
}

// A base64-of-PEM field; empty when absent.
Result<std::string> pem_field(const doc::Value& ctx, const char* field, const std::string& where) {
    auto it = ctx.find(field);
    if (it == ctx.end() || it->is_null()) {
        return std::string();
    }
    if (!it->is_string()) {
        return config_error(where + ": " + field + ": not a string");
    }
    auto decoded = util::base64_decode(it->get<std::string>());
    if (!decoded) {
        return config_error(where + ": " + field + ": not valid base64");
    }
    return *decoded;
}

Result<TalosContext> parse_context(const std::string& name, const doc::Value& v,
                                   const std::string& path) {
    std::string where = path + ": context \"" + name + "\"";
    if (!v.is_object()) {
        return config_error(where + ": not a mapping");
    }
    TalosContext c;
    c.name = name;
    auto endpoints = string_list(v, "endpoints", where);
    auto nodes = string_list(v, "nodes", where);
    auto ca = pem_field(v, "ca", where);
    auto crt = pem_field(v, "crt", where);
    auto key = pem_field(v, "key", where);
    if (!endpoints) {
        return endpoints.error();
    }
    if (!nodes) {
        return nodes.error();
    }
    for (const auto* pem : {&ca, &crt, &key}) {
        if (!*pem) {
            return pem->error();
        }
    }
    c.endpoints = *endpoints;
    c.nodes = *nodes;
    c.ca_pem = *ca;
    c.crt_pem = *crt;
    c.key_pem = relabel_private_key(*key);
    return c;
}

Status check_field(const std::string& where, const char* field, const std::string& pem,
                   Status (*check)(std::string_view)) {
    if (pem.empty()) {
        return config_error(where + ": " + field + ": missing");
    }
    auto st = check(pem);
    return st ? st : Status(st.error().wrap(where + ": " + field));
}

} // namespace

Result<std::string> talosconfig_path(const std::string& explicit_path, const Environment& env) {
    if (!explicit_path.empty()) {
        return util::expand_home(explicit_path, env.home());
    }
    auto candidates = default_paths(env);
    for (const auto& p : candidates) {
        if (exists(p)) {
            return p;
        }
    }
    return config_error("no talosconfig: none of " + util::join(candidates, ", ") + " exists",
                        "pass --talosconfig FILE or set TALOSCONFIG");
}

Result<TalosConfig> parse_talosconfig(std::string_view text, const std::string& path) {
    auto root = doc::parse_one(text, path);
    if (!root) {
        if (root.error().code != vocab::code::k_input_limit) {
            return config_error(root.error().message);
        }
        Error e = root.error(); // a limit refusal keeps its code and hint
        e.kind = ErrorKind::Config;
        return e;
    }
    if (!root->is_object()) {
        return config_error(path + ": not a talosconfig (expected a mapping with contexts)");
    }
    TalosConfig cfg;
    cfg.path = path;
    if (auto it = root->find("context"); it != root->end() && it->is_string()) {
        cfg.current = it->get<std::string>();
    }
    auto contexts = root->find("contexts");
    if (contexts == root->end() || contexts->is_null()) {
        return cfg;
    }
    if (!contexts->is_object()) {
        return config_error(path + ": contexts: not a mapping");
    }
    for (const auto& [name, v] : contexts->items()) {
        auto c = parse_context(name, v, path);
        if (!c) {
            return c.error();
        }
        cfg.contexts.push_back(std::move(*c));
    }
    return cfg;
}

Result<TalosConfig> load_talosconfig(const std::string& explicit_path, const Environment& env) {
    auto path = talosconfig_path(explicit_path, env);
    if (!path) {
        return path.error();
    }
    if (!exists(*path)) {
        return config_error("talosconfig " + *path + " does not exist",
                            "pass --talosconfig FILE or set TALOSCONFIG");
    }
    auto text = util::read_file(*path, doc::k_limits.max_document_bytes);
    if (!text) {
        if (text.error().code != vocab::code::k_input_limit) {
            return config_error("talosconfig: " + text.error().message);
        }
        Error e = text.error(); // a limit refusal keeps its code and hint
        e.kind = ErrorKind::Config;
        e.message = "talosconfig: " + e.message;
        return e;
    }
    return parse_talosconfig(*text, *path);
}

Result<TalosContext> select_context(const TalosConfig& config, const std::string& name) {
    std::string wanted = name.empty() ? config.current : name;
    if (wanted.empty()) {
        return config_error(config.path + ": no current context (the file sets no `context:`)",
                            "pass --context NAME");
    }
    const TalosContext* found = nullptr;
    std::vector<std::string> names;
    for (const auto& c : config.contexts) {
        names.push_back(c.name);
        if (c.name == wanted) {
            found = &c;
        }
    }
    if (found == nullptr) {
        std::string have = names.empty() ? "it has none" : "it has " + util::join(names, ", ");
        return config_error(config.path + ": no context \"" + wanted + "\" (" + have + ")");
    }
    std::string where = config.path + ": context \"" + wanted + "\"";
    for (auto st : {check_field(where, "ca", found->ca_pem, check_certificate),
                    check_field(where, "crt", found->crt_pem, check_certificate),
                    check_field(where, "key", found->key_pem, check_private_key)}) {
        if (!st) {
            return st.error();
        }
    }
    if (auto st = check_key_matches(found->crt_pem, found->key_pem); !st) {
        return st.error().wrap(where + ": key");
    }
    return *found;
}

Result<LoadedContext> load_context(const std::string& explicit_path, const std::string& name,
                                   const Environment& env) {
    auto cfg = load_talosconfig(explicit_path, env);
    if (!cfg) {
        return cfg.error();
    }
    auto ctx = select_context(*cfg, name);
    if (!ctx) {
        return ctx.error();
    }
    return LoadedContext{std::move(*ctx), cfg->path};
}

} // namespace ichor::talos
