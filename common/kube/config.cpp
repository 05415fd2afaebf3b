#include "common/kube/config.h"

#include "common/doc/limits.h"
#include "common/doc/vocabulary.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

#include <cerrno>
#include <set>

namespace ichor::kube {

namespace {

const char* const k_hint_contexts = "kubectl config get-contexts";

Error config_error(std::string message, std::string hint = {}) {
    return make_error(ErrorKind::Config, std::move(message), std::move(hint),
                      vocab::code::k_kubeconfig_invalid);
}

// A reader's limit refusal (common/doc/limits.h) keeps its code and hint: it is not a malformed
// kubeconfig that kubectl config view would explain.
Error input_limit(Error e) {
    e.kind = ErrorKind::Config;
    e.message = "kubeconfig: " + e.message;
    return e;
}

bool file_missing(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

std::string resolve_path(const std::string& base_dir, const std::string& p) {
    if (p.empty() || p.front() == '/') {
        return p;
    }
    return base_dir + "/" + p;
}

std::string str(const doc::Value& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return {};
    }
    return it->is_string() ? it->get<std::string>() : it->dump();
}

bool flag(const doc::Value& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() &&
           ((it->is_boolean() && it->get<bool>()) || (it->is_string() && *it == "true"));
}

// Reads one kubeconfig file into an object; an empty file is an empty config.
Result<doc::Value> read_kubeconfig(const std::string& path) {
    auto text = util::read_file(path, doc::k_limits.max_document_bytes);
    if (!text) {
        if (text.error().code == vocab::code::k_input_limit) {
            return input_limit(text.error());
        }
        return config_error("kubeconfig: " + text.error().message,
                            "pass --kubeconfig FILE or set KUBECONFIG");
    }
    auto v = doc::parse_one(*text, path);
    if (!v) {
        if (v.error().code == vocab::code::k_input_limit) {
            return input_limit(v.error());
        }
        return config_error("kubeconfig: " + v.error().message,
                            "kubectl config view --kubeconfig " + path);
    }
    if (v->is_null()) {
        return doc::Value::object();
    }
    if (!v->is_object()) {
        return config_error("kubeconfig " + path +
                                ": not a kubeconfig (expected a mapping with kind: Config)",
                            "kubectl config view --kubeconfig " + path);
    }
    return std::move(*v);
}

// Adds the named entries of list `key` (inner object `inner`) that are not defined yet.
void merge_entries(const doc::Value& file_doc, const std::string& file, const char* key,
                   const char* inner, std::map<std::string, NamedEntry>& into) {
    auto it = file_doc.find(key);
    if (it == file_doc.end() || !it->is_array()) {
        return;
    }
    for (const auto& e : *it) {
        if (!e.is_object()) {
            continue;
        }
        std::string name = str(e, "name");
        if (name.empty() || into.count(name) != 0) {
            continue;
        }
        auto in = e.find(inner);
        doc::Value v = (in != e.end() && in->is_object()) ? *in : doc::Value::object();
        into.emplace(name, NamedEntry{std::move(v), file});
    }
}

// "kubeconfig FILE: users[NAME].user.FIELD"
std::string where(const NamedEntry& e, const char* list, const std::string& name, const char* inner,
                  std::string_view field) {
    std::string w = "kubeconfig " + e.file + ": " + list + "[" + name + "]." + inner;
    if (!field.empty()) {
        w += ".";
        w += field;
    }
    return w;
}

// Reads "<field>-data" (base64) or "<field>" (a path relative to the file's folder).
Result<std::string> data_or_file(const NamedEntry& e, const char* list, const std::string& name,
                                 const char* inner, const std::string& field,
                                 const WarningSink& warn) {
    std::string data = str(e.value, (field + "-data").c_str());
    std::string path = str(e.value, field.c_str());
    if (!data.empty()) {
        if (!path.empty() && warn) {
            warn(where(e, list, name, inner, "") + ": " + field + "-data and " + field +
                 " are both set; " + field + "-data is used");
        }
        auto decoded = util::base64_decode(data);
        if (!decoded) {
            return config_error(where(e, list, name, inner, field + "-data") + ": not valid base64",
                                "kubectl config view --raw --minify");
        }
        return std::move(*decoded);
    }
    if (path.empty()) {
        return std::string();
    }
    auto content = util::read_file(resolve_path(util::dirname(e.file), path));
    if (!content) {
        return config_error(where(e, list, name, inner, field) + ": " + content.error().message,
                            "kubectl config view --minify");
    }
    return std::move(*content);
}

Result<ClusterConfig> resolve_cluster(const NamedEntry& e, const std::string& name,
                                      const WarningSink& warn) {
    const doc::Value& c = e.value;
    ClusterConfig out;
    out.name = name;
    out.server = str(c, "server");
    if (out.server.empty()) {
        return config_error(where(e, "clusters", name, "cluster", "server") + ": not set",
                            "kubectl config set-cluster " + name + " --server=https://HOST:6443");
    }
    if (out.server.find("://") == std::string::npos) {
        out.server = "https://" + out.server;
    }
    while (util::ends_with(out.server, "/")) {
        out.server.pop_back();
    }
    auto ca = data_or_file(e, "clusters", name, "cluster", "certificate-authority", warn);
    if (!ca) {
        return ca.error();
    }
    out.ca_pem = std::move(*ca);
    out.insecure_skip_tls_verify = flag(c, "insecure-skip-tls-verify");
    if (out.insecure_skip_tls_verify && !out.ca_pem.empty()) {
        return config_error(
            where(e, "clusters", name, "cluster", "") +
                ": certificate-authority and insecure-skip-tls-verify cannot be used together",
            "kubectl config view --minify");
    }
    out.tls_server_name = str(c, "tls-server-name");
    out.proxy_url = str(c, "proxy-url");
    out.disable_compression = flag(c, "disable-compression");
    if (auto ext = c.find("extensions"); ext != c.end() && ext->is_array()) {
        for (const auto& x : *ext) {
            if (x.is_object() && str(x, "name") == "client.authentication.k8s.io/exec") {
                out.exec_extension = x.value("extension", doc::Value());
            }
        }
    }
    return out;
}

Result<ExecConfig> resolve_exec(const NamedEntry& e, const std::string& name, const doc::Value& x) {
    ExecConfig ex;
    ex.where = where(e, "users", name, "user", "exec");
    ex.base_dir = util::dirname(e.file);
    ex.command = str(x, "command");
    ex.api_version = str(x, "apiVersion");
    ex.install_hint = str(x, "installHint");
    ex.provide_cluster_info = flag(x, "provideClusterInfo");
    ex.interactive_mode = str(x, "interactiveMode");
    const std::string hint = "kubectl config view --minify";
    if (ex.command.empty()) {
        return config_error(ex.where + ".command: not set", hint);
    }
    if (ex.api_version != "client.authentication.k8s.io/v1" &&
        ex.api_version != "client.authentication.k8s.io/v1beta1") {
        return config_error(
            ex.where + ".apiVersion: \"" + ex.api_version +
                "\" is not supported (use client.authentication.k8s.io/v1 or v1beta1)",
            hint);
    }
    if (ex.interactive_mode.empty()) {
        if (util::ends_with(ex.api_version, "/v1")) {
            return config_error(ex.where + ".interactiveMode: required by " + ex.api_version +
                                    " (Never, IfAvailable or Always)",
                                hint);
        }
        ex.interactive_mode = "IfAvailable";
    }
    if (ex.interactive_mode != "Never" && ex.interactive_mode != "IfAvailable" &&
        ex.interactive_mode != "Always") {
        return config_error(ex.where + ".interactiveMode: \"" + ex.interactive_mode +
                                "\" is not one of Never, IfAvailable, Always",
                            hint);
    }
    if (auto a = x.find("args"); a != x.end() && a->is_array()) {
        for (const auto& s : *a) {
            ex.args.push_back(s.is_string() ? s.get<std::string>() : s.dump());
        }
    }
    if (auto en = x.find("env"); en != x.end() && en->is_array()) {
        for (const auto& kv : *en) {
            if (kv.is_object() && !str(kv, "name").empty()) {
                ex.env.emplace_back(str(kv, "name"), str(kv, "value"));
            }
        }
    }
    return ex;
}

void resolve_impersonation(const doc::Value& u, UserConfig& out) {
    out.impersonate = str(u, "as");
    out.impersonate_uid = str(u, "as-uid");
    if (auto g = u.find("as-groups"); g != u.end() && g->is_array()) {
        for (const auto& s : *g) {
            out.impersonate_groups.push_back(s.is_string() ? s.get<std::string>() : s.dump());
        }
    }
    if (auto x = u.find("as-user-extra"); x != u.end() && x->is_object()) {
        for (const auto& [k, vals] : x->items()) {
            for (const auto& v : vals.is_array() ? vals : doc::Value::array({vals})) {
                out.impersonate_extra.emplace_back(k,
                                                   v.is_string() ? v.get<std::string>() : v.dump());
            }
        }
    }
}

Result<UserConfig> resolve_user(const NamedEntry& e, const std::string& name,
                                const WarningSink& warn) {
    const doc::Value& u = e.value;
    UserConfig out;
    out.name = name;
    if (u.contains("auth-provider")) {
        return config_error(
            where(e, "users", name, "user", "auth-provider") +
                ": legacy auth providers are not supported; use an exec credential plugin",
            "see https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
            "#client-go-credential-plugins");
    }
    auto cert = data_or_file(e, "users", name, "user", "client-certificate", warn);
    if (!cert) {
        return cert.error();
    }
    auto key = data_or_file(e, "users", name, "user", "client-key", warn);
    if (!key) {
        return key.error();
    }
    if (cert->empty() != key->empty()) {
        return config_error(where(e, "users", name, "user", "") + ": " +
                                (cert->empty() ? "client-key is set without client-certificate"
                                               : "client-certificate is set without client-key"),
                            "kubectl config view --minify");
    }
    out.client_cert_pem = std::move(*cert);
    out.client_key_pem = std::move(*key);
    out.token = str(u, "token");
    std::string token_file = str(u, "tokenFile");
    if (out.token.empty() && !token_file.empty()) {
        auto t = util::read_file(resolve_path(util::dirname(e.file), token_file));
        if (!t) {
            return config_error(where(e, "users", name, "user", "tokenFile") + ": " +
                                    t.error().message,
                                "kubectl config view --minify");
        }
        out.token = std::string(util::trim(*t));
    }
    out.username = str(u, "username");
    out.password = str(u, "password");
    resolve_impersonation(u, out);
    if (auto x = u.find("exec"); x != u.end() && x->is_object()) {
        auto ex = resolve_exec(e, name, *x);
        if (!ex) {
            return ex.error();
        }
        out.exec = std::move(*ex);
    }
    return out;
}

std::string describe_files(const std::vector<std::string>& files) {
    return files.size() == 1 ? "kubeconfig " + files.front()
                             : "kubeconfig files " + util::join(files, ", ");
}

} // namespace

std::vector<std::string> kubeconfig_files(const LoadOptions& opts, const Environment& env) {
    if (!opts.kubeconfig.empty()) {
        return {opts.kubeconfig};
    }
    std::string list = env.get_or("KUBECONFIG", "");
    if (list.empty()) {
        return {env.home() + "/.kube/config"};
    }
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (auto& f : util::split(list, ':')) {
        if (!f.empty() && seen.insert(f).second) {
            out.push_back(f);
        }
    }
    return out;
}

Result<MergedKubeconfig> merge_kubeconfigs(const std::vector<std::string>& files,
                                           bool skip_missing) {
    MergedKubeconfig kc;
    for (const auto& f : files) {
        if (skip_missing && file_missing(f)) {
            continue;
        }
        auto d = read_kubeconfig(f);
        if (!d) {
            return d.error();
        }
        kc.files.push_back(f);
        std::string cc = str(*d, "current-context");
        if (kc.current_context.empty() && !cc.empty()) {
            kc.current_context = cc;
            kc.current_context_file = f;
        }
        merge_entries(*d, f, "clusters", "cluster", kc.clusters);
        merge_entries(*d, f, "users", "user", kc.users);
        merge_entries(*d, f, "contexts", "context", kc.contexts);
    }
    return kc;
}

Result<RestConfig> resolve_context(const MergedKubeconfig& kc, const LoadOptions& opts) {
    const std::string files = describe_files(kc.files);
    std::string name = opts.context.empty() ? kc.current_context : opts.context;
    if (name.empty()) {
        return config_error(files + ": current-context is not set",
                            std::string(k_hint_contexts) + ", then pass --context NAME");
    }
    auto ctx = kc.contexts.find(name);
    if (ctx == kc.contexts.end()) {
        return config_error(files + ": context \"" + name + "\" not found", k_hint_contexts);
    }
    const NamedEntry& ce = ctx->second;
    std::string cluster_name = str(ce.value, "cluster");
    std::string user_name = str(ce.value, "user");
    auto cl = kc.clusters.find(cluster_name);
    if (cluster_name.empty() || cl == kc.clusters.end()) {
        return config_error(where(ce, "contexts", name, "context", "cluster") + ": cluster \"" +
                                cluster_name + "\" is not defined",
                            "kubectl config get-clusters");
    }
    auto us = kc.users.find(user_name);
    if (user_name.empty() || us == kc.users.end()) {
        return config_error(where(ce, "contexts", name, "context", "user") + ": user \"" +
                                user_name + "\" is not defined",
                            "kubectl config get-users");
    }
    auto cluster = resolve_cluster(cl->second, cluster_name, opts.warn);
    if (!cluster) {
        return cluster.error();
    }
    auto user = resolve_user(us->second, user_name, opts.warn);
    if (!user) {
        return user.error();
    }
    RestConfig rc;
    rc.source = files;
    rc.context = name;
    std::string ctx_ns = str(ce.value, "namespace");
    rc.ns = !opts.ns.empty()  ? opts.ns
            : !ctx_ns.empty() ? ctx_ns
                              : std::string(k_default_namespace);
    rc.cluster = std::move(*cluster);
    rc.user = std::move(*user);
    return rc;
}

Result<RestConfig> in_cluster_config(const LoadOptions& opts, const Environment& env) {
    std::string host = env.get_or("KUBERNETES_SERVICE_HOST", "");
    std::string port = env.get_or("KUBERNETES_SERVICE_PORT", "");
    if (host.empty() || port.empty()) {
        return config_error(
            "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set",
            "pass --kubeconfig FILE or set KUBECONFIG");
    }
    RestConfig rc;
    rc.source = "in-cluster config";
    rc.cluster.name = "in-cluster";
    rc.cluster.server =
        "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
    const std::string& dir = opts.service_account_dir;
    auto token = util::read_file(dir + "/token");
    if (!token) {
        return config_error("in-cluster config: " + token.error().message,
                            "mount a service account token, or pass --kubeconfig FILE");
    }
    rc.user.name = "in-cluster";
    rc.user.token = std::string(util::trim(*token));
    if (auto ca = util::read_file(dir + "/ca.crt"); ca) {
        rc.cluster.ca_pem = std::move(*ca);
    } else if (opts.warn) {
        opts.warn("in-cluster config: " + ca.error().message + "; using the system's trust store");
    }
    std::string ns = opts.ns;
    if (ns.empty()) {
        ns = env.get_or("POD_NAMESPACE", "");
    }
    if (ns.empty()) {
        if (auto f = util::read_file(dir + "/namespace"); f) {
            ns = std::string(util::trim(*f));
        }
    }
    rc.ns = ns.empty() ? std::string(k_default_namespace) : ns;
    return rc;
}

Result<RestConfig> load_config(const LoadOptions& opts, const Environment& env) {
    std::vector<std::string> files = kubeconfig_files(opts, env);
    auto kc = merge_kubeconfigs(files, opts.kubeconfig.empty());
    if (!kc) {
        return kc.error();
    }
    bool empty = kc->contexts.empty() && kc->current_context.empty();
    bool explicit_choice = !opts.kubeconfig.empty() || !opts.context.empty();
    if (empty && !explicit_choice && env.get("KUBERNETES_SERVICE_HOST") &&
        env.get("KUBERNETES_SERVICE_PORT")) {
        return in_cluster_config(opts, env);
    }
    if (kc->files.empty()) {
        std::string why =
            !opts.kubeconfig.empty() || env.get_or("KUBECONFIG", "").empty()
                ? util::join(files, ", ") + " does not exist and KUBECONFIG is not set"
                : "none of the files in KUBECONFIG exist (" + util::join(files, ", ") + ")";
        return config_error("no kubeconfig: " + why, "pass --kubeconfig FILE or set KUBECONFIG");
    }
    return resolve_context(*kc, opts);
}

} // namespace ichor::kube
