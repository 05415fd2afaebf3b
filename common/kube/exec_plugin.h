// client-go credential plugins (kubeconfig `user.exec`, client.authentication.k8s.io v1 and
// v1beta1): the ExecCredential request given to the plugin, running it, and reading its reply.
#pragma once

#include "common/kube/config.h"
#include "common/util/env.h"
#include "common/util/result.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ichor::kube {

// How a plugin meets the terminal. kubectl passes stdin only when it is a terminal and the mode is
// not Never; our tools read documents from stdin pipes, so the caller says whether it is a
// terminal.
struct ExecIo {
    bool stdin_is_terminal = false;
    int stderr_fd = 2; // the plugin's prompts and errors go here (kubectl: its stderr); < 0:
                       // captured into error messages
    std::int64_t timeout_ms = 120000; // a non-interactive run; 0: none
    // A run with the terminal (a login the user types): kubectl waits forever; a plugin that
    // never ends must not hang the tool, so it gets a bound long enough for a person.
    std::int64_t interactive_timeout_ms = 10 * 60 * 1000;
    // An ExecCredential is a token or a certificate and key, a few KiB; a plugin writing more
    // than this on stdout (or on stderr when captured) is killed, its output not parsed.
    std::size_t max_output_bytes = 1u << 20;
};

// What a plugin returned: a bearer token, or a client certificate and key (PEM), and when it
// expires (nullopt: valid for the life of the process).
struct ExecCredential {
    std::string token;
    std::string client_cert_pem;
    std::string client_key_pem;
    std::optional<std::chrono::system_clock::time_point> expiry;

    [[nodiscard]] bool expired(std::chrono::system_clock::time_point now) const {
        return expiry && now >= *expiry;
    }
};

// The KUBERNETES_EXEC_INFO value: an ExecCredential of the plugin's apiVersion with
// spec.interactive and, when provideClusterInfo is set, spec.cluster.
std::string exec_info_json(const ExecConfig& exec, const ClusterConfig& cluster, bool interactive);

// Parses a plugin's stdout. Errors (Config, code ExecPluginBadReply) name the plugin: not JSON,
// not an ExecCredential, an apiVersion other than exec.api_version, no status, neither a token nor
// a certificate/key pair, only one of certificate and key, a malformed expirationTimestamp.
Result<ExecCredential> parse_exec_credential(std::string_view out, const ExecConfig& exec);

// Runs the plugin with env + exec.env + KUBERNETES_EXEC_INFO and parses its reply. Errors
// (Config): ExecPluginNotFound (hint: the installHint), ExecPluginInteractive (mode Always without
// a terminal; the plugin is not run), ExecPluginFailed (non-zero exit, signal, timeout, or output
// past ExecIo::max_output_bytes), and
// those of parse_exec_credential.
Result<ExecCredential> run_exec_plugin(const ExecConfig& exec, const ClusterConfig& cluster,
                                       const Environment& env, const ExecIo& io);

// Parses an RFC 3339 time ("2024-05-01T10:00:00Z", "…+02:00", fractional seconds allowed).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

} // namespace ichor::kube
