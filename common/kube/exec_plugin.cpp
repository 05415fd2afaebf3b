#include "common/kube/exec_plugin.h"

#include "common/doc/vocabulary.h"
#include "common/kube/process.h"
#include "common/util/strings.h"

#include <cstdio>
#include <ctime>
#include <map>

namespace ichor::kube {

namespace {

Error plugin_error(const ExecConfig& exec, const std::string& what, std::string_view code,
                   std::string hint = {}) {
    if (hint.empty()) {
        hint = "run the plugin by hand to see its output: " + exec.command +
               (exec.args.empty() ? "" : " " + util::join(exec.args, " "));
    }
    return make_error(ErrorKind::Config, exec.where + ": " + what, std::move(hint), code);
}

// The last non-empty line of captured stderr, for the error message.
std::string last_line(std::string_view text) {
    text = util::trim(text);
    auto nl = text.rfind('\n');
    return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

std::vector<std::string> child_env(const Environment& env, const ExecConfig& exec,
                                   const std::string& info) {
    std::map<std::string, std::string> vars = env.vars;
    for (const auto& [k, v] : exec.env) {
        vars[k] = v;
    }
    vars["KUBERNETES_EXEC_INFO"] = info;
    std::vector<std::string> out;
    for (const auto& [k, v] : vars) {
        out.push_back(k + "=" + v);
    }
    return out;
}

} // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
    std::tm tm{};
    int consumed = 0;
    std::string s(text);
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
        consumed != 19) {
        return std::nullopt;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    std::string_view rest = text.substr(19);
    if (!rest.empty() && rest.front() == '.') {
        rest.remove_prefix(1);
        while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
            rest.remove_prefix(1);
        }
    }
    long offset = 0;
    if (rest == "Z" || rest == "z") {
        offset = 0;
    } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
        int h = 0;
        int m = 0;
        if (std::sscanf(std::string(rest.substr(1)).c_str(), "%2d:%2d", &h, &m) != 2) {
            return std::nullopt;
        }
        offset = (rest[0] == '+' ? 1 : -1) * (h * 3600L + m * 60L);
    } else {
        return std::nullopt;
    }
    std::time_t t = ::timegm(&tm);
    return std::chrono::system_clock::from_time_t(t - offset);
}

std::string exec_info_json(const ExecConfig& exec, const ClusterConfig& cluster, bool interactive) {
    doc::Value v = doc::Value::object();
    v["kind"] = "ExecCredential";
    v["apiVersion"] = exec.api_version;
    v["spec"] = doc::Value::object();
    if (exec.provide_cluster_info) {
        doc::Value c = doc::Value::object();
        c["server"] = cluster.server;
        if (!cluster.tls_server_name.empty()) {
            c["tls-server-name"] = cluster.tls_server_name;
        }
        if (cluster.insecure_skip_tls_verify) {
            c["insecure-skip-tls-verify"] = true;
        }
        if (!cluster.ca_pem.empty()) {
            c["certificate-authority-data"] = util::base64_encode(cluster.ca_pem);
        }
        if (!cluster.proxy_url.empty()) {
            c["proxy-url"] = cluster.proxy_url;
        }
        if (cluster.disable_compression) {
            c["disable-compression"] = true;
        }
        if (!cluster.exec_extension.is_null()) {
            c["config"] = cluster.exec_extension;
        }
        v["spec"]["cluster"] = std::move(c);
    }
    v["spec"]["interactive"] = interactive;
    return v.dump();
}

Result<ExecCredential> parse_exec_credential(std::string_view out, const ExecConfig& exec) {
    const std::string_view code = vocab::code::k_exec_plugin_bad_reply;
    doc::Value v = doc::Value::parse(out, nullptr, false);
    if (v.is_discarded() || !v.is_object()) {
        std::string shown(util::trim(out).substr(0, 60));
        return plugin_error(exec,
                            "\"" + exec.command +
                                "\" did not print an ExecCredential as JSON (got \"" + shown +
                                "\")",
                            code);
    }
    std::string kind = doc::get_string(v, "kind");
    std::string api_version = doc::get_string(v, "apiVersion");
    if (kind != "ExecCredential") {
        return plugin_error(
            exec, "\"" + exec.command + "\" replied with kind \"" + kind + "\", not ExecCredential",
            code);
    }
    if (api_version != exec.api_version) {
        return plugin_error(exec,
                            "\"" + exec.command + "\" replied with apiVersion \"" + api_version +
                                "\", but the kubeconfig asks for \"" + exec.api_version + "\"",
                            code);
    }
    const doc::Value* status = doc::find_path(v, "status");
    if (status == nullptr || !status->is_object()) {
        return plugin_error(exec, "\"" + exec.command + "\" replied without a status", code);
    }
    ExecCredential cred;
    cred.token = doc::get_string(*status, "token");
    cred.client_cert_pem = doc::get_string(*status, "clientCertificateData");
    cred.client_key_pem = doc::get_string(*status, "clientKeyData");
    if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
        return plugin_error(exec,
                            "\"" + exec.command +
                                "\" returned only one of clientCertificateData and "
                                "clientKeyData; both are needed",
                            code);
    }
    if (cred.token.empty() && cred.client_cert_pem.empty()) {
        return plugin_error(
            exec, "\"" + exec.command + "\" returned neither a token nor a client certificate",
            code);
    }
    std::string exp = doc::get_string(*status, "expirationTimestamp");
    if (!exp.empty()) {
        cred.expiry = parse_rfc3339(exp);
        if (!cred.expiry) {
            return plugin_error(exec,
                                "\"" + exec.command + "\" returned expirationTimestamp \"" + exp +
                                    "\", which is not an RFC 3339 time",
                                code);
        }
    }
    return cred;
}

Result<ExecCredential> run_exec_plugin(const ExecConfig& exec, const ClusterConfig& cluster,
                                       const Environment& env, const ExecIo& io) {
    bool interactive = io.stdin_is_terminal && exec.interactive_mode != "Never";
    if (exec.interactive_mode == "Always" && !interactive) {
        return plugin_error(exec, "interactiveMode is Always but standard input is not a terminal",
                            vocab::code::k_exec_plugin_interactive,
                            "run the command from a terminal, without piping into it");
    }
    auto path = find_executable(exec.command, exec.base_dir, env.get_or("PATH", ""));
    if (!path) {
        std::string hint =
            !exec.install_hint.empty()
                ? std::string(util::trim(exec.install_hint))
                : "install " + exec.command + ", or correct the command in the kubeconfig";
        return plugin_error(exec, "executable \"" + exec.command + "\" not found",
                            vocab::code::k_exec_plugin_not_found, hint);
    }
    ProcessSpec spec;
    spec.path = *path;
    spec.argv.push_back(exec.command);
    spec.argv.insert(spec.argv.end(), exec.args.begin(), exec.args.end());
    spec.envp = child_env(env, exec, exec_info_json(exec, cluster, interactive));
    spec.inherit_stdin = interactive;
    spec.stderr_fd = io.stderr_fd;
    spec.timeout_ms = interactive ? io.interactive_timeout_ms : io.timeout_ms;
    spec.max_output_bytes = io.max_output_bytes;
    auto res = run_process(spec);
    if (!res) {
        return plugin_error(exec, res.error().message, vocab::code::k_exec_plugin_failed);
    }
    std::string detail = res->err.empty() ? "" : ": " + last_line(res->err);
    if (res->output_too_large) {
        return plugin_error(exec,
                            "\"" + exec.command + "\" wrote more than " +
                                std::to_string(io.max_output_bytes) +
                                " bytes; it was stopped and its output not read",
                            vocab::code::k_exec_plugin_failed);
    }
    if (res->timed_out) {
        return plugin_error(exec,
                            "\"" + exec.command + "\" did not finish within " +
                                util::format_duration_ms(spec.timeout_ms) + detail,
                            vocab::code::k_exec_plugin_failed);
    }
    if (res->exit_code != 0) {
        std::string how = res->signal != 0 ? "was killed by signal " + std::to_string(res->signal)
                                           : "exited with status " + std::to_string(res->exit_code);
        return plugin_error(exec, "\"" + exec.command + "\" " + how + detail,
                            vocab::code::k_exec_plugin_failed);
    }
    return parse_exec_credential(res->out, exec);
}

} // namespace ichor::kube
