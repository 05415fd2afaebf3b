// Where and how to reach the Kubernetes API, read the way kubectl reads it: a kubeconfig (one file,
// or KUBECONFIG's list merged by kubectl's rules), a context, or the in-cluster service account.
// docs/kube-client.md has the rules with examples.
#pragma once

#include "common/doc/value.h"
#include "common/util/env.h"
#include "common/util/result.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::kube {

// Receives one warning sentence (no "Warning: " prefix, no newline). May be empty: then dropped.
using WarningSink = std::function<void(std::string_view)>;

// The namespace our suite uses when neither -n nor the context names one.
inline constexpr std::string_view k_default_namespace = "ichor-system";
inline constexpr std::string_view k_service_account_dir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// `user.exec` of a kubeconfig: a client-go credential plugin.
struct ExecConfig {
    std::string command; // as written; resolved when run (relative to `base_dir` if it has a '/')
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env; // added to the caller's environment
    std::string api_version; // client.authentication.k8s.io/v1 or /v1beta1
    std::string install_hint;
    bool provide_cluster_info = false;
    std::string interactive_mode; // Never, IfAvailable, Always (v1beta1 default IfAvailable)
    std::string base_dir;         // folder of the kubeconfig that defined it
    std::string where;            // "kubeconfig FILE: users[NAME].exec", for messages
};

struct ClusterConfig {
    std::string name;
    std::string server; // "https://host:port[/prefix]", no trailing slash
    std::string ca_pem; // empty: the system's trust store
    bool insecure_skip_tls_verify = false;
    std::string tls_server_name;
    std::string proxy_url;
    bool disable_compression = false;
    doc::Value exec_extension; // extensions[name=client.authentication.k8s.io/exec], else null
};

struct UserConfig {
    std::string name;
    std::string client_cert_pem;
    std::string client_key_pem;
    std::string token; // token, else the content of tokenFile (read at load)
    std::string username;
    std::string password;
    std::string impersonate;
    std::string impersonate_uid;
    std::vector<std::string> impersonate_groups;
    std::vector<std::pair<std::string, std::string>> impersonate_extra;
    std::optional<ExecConfig> exec;
};

// Everything a Client needs. `source` names where it came from (file paths, or "in-cluster
// config"), for messages.
struct RestConfig {
    std::string source;
    std::string context; // empty for in-cluster
    std::string ns;
    ClusterConfig cluster;
    UserConfig user;
};

struct LoadOptions {
    std::string kubeconfig; // --kubeconfig: only this file (it must exist)
    std::string context;    // --context
    std::string ns;         // -n: wins over the context's namespace
    std::string service_account_dir =
        std::string(k_service_account_dir); // tests point it elsewhere
    WarningSink warn; // e.g. "certificate-authority-data overrides certificate-authority"
};

// Loads the configuration. Order: opts.kubeconfig, else KUBECONFIG (':'-separated, empty entries
// and missing files skipped), else $HOME/.kube/config; when no file is found (and neither
// --kubeconfig nor --context was given) and KUBERNETES_SERVICE_HOST/PORT are set, the in-cluster
// config. Namespace: opts.ns, else the context's, else ichor-system (in cluster: POD_NAMESPACE,
// then the service account's namespace file). Errors are ErrorKind::Config naming the file and
// field, with a hint command; nothing is printed and no plugin is run here (the Client runs exec
// plugins).
Result<RestConfig> load_config(const LoadOptions& opts, const Environment& env);

// A merged view of kubeconfig files, exposed for tests and for `kubectl config`-like listings.
struct NamedEntry {
    doc::Value value; // the inner "cluster" / "user" / "context" object
    std::string file; // the file it was taken from
};
struct MergedKubeconfig {
    std::vector<std::string> files; // files read, in order
    std::string current_context;
    std::string current_context_file;
    std::map<std::string, NamedEntry> clusters;
    std::map<std::string, NamedEntry> users;
    std::map<std::string, NamedEntry> contexts;
};

// Reads and merges files by kubectl's rules: the first file to define a name wins the whole entry;
// the first non-empty current-context wins. Missing files are skipped when `skip_missing`; an
// unreadable or unparsable file is an error. No files at all gives an empty MergedKubeconfig.
Result<MergedKubeconfig> merge_kubeconfigs(const std::vector<std::string>& files,
                                           bool skip_missing);

// The files load_config would read (before existence checks): [--kubeconfig], KUBECONFIG's
// entries, or [$HOME/.kube/config].
std::vector<std::string> kubeconfig_files(const LoadOptions& opts, const Environment& env);

// Resolves one context of a merged config into a RestConfig (reads referenced files).
Result<RestConfig> resolve_context(const MergedKubeconfig& kc, const LoadOptions& opts);

// The in-cluster config: https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT with the token and
// CA of opts.service_account_dir. Error (Config) if the variables or files are missing.
Result<RestConfig> in_cluster_config(const LoadOptions& opts, const Environment& env);

} // namespace ichor::kube
