// A generic REST client of the Kubernetes API over libcurl, on doc::Value objects. One client
// holds one CURL handle (connections are kept alive between calls) and is not thread-safe: use one
// per thread. Paths come from common/kube/paths.h. libcurl runs with CURLOPT_NOSIGNAL, so the
// process should ignore SIGPIPE (common/cli does).
//
// Every call returns the API server's object (or list), or an Error typed as in status.h: `code`
// is the Status reason ("NotFound", "AlreadyExists", "Conflict", "Invalid", "Forbidden",
// "Unauthorized", ...), so callers branch on it. Transport failures are ErrorKind::Unreachable
// (code "Unreachable" or "Timeout", the message names the server URL); a server certificate that
// does not verify, or a client certificate that cannot be loaded, is ErrorKind::Config (code
// "TLSVerifyFailed" / "TLSClientCertificate"). Exec plugin failures are those of exec_plugin.h.
//
// Behaviour shared by all calls: Accept application/json; TLS always verified unless the
// kubeconfig says insecure-skip-tls-verify; the proxy is the cluster's proxy-url, else
// HTTPS_PROXY/HTTP_PROXY of the given Environment minus NO_PROXY, loopback and localhost (as Go
// does), never the process environment; 429 and 503 are retried after Retry-After (at most
// max_attempts tries, each wait capped), another 5xx only when it carries a Retry-After header
// (client-go's rule); a 401 with an exec plugin runs the plugin once more and
// retries once; `Warning:` response headers go to on_warning, each text once per client; a
// response body past max_response_bytes is refused (ResponseTooLarge) as it arrives.
#pragma once

#include "common/doc/value.h"
#include "common/kube/config.h"
#include "common/kube/exec_plugin.h"
#include "common/kube/paths.h"
#include "common/util/clock.h"
#include "common/util/env.h"
#include "common/util/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace ichor::kube {

struct ClientOptions {
    std::int64_t timeout_ms = 30000;        // one try of one request, connection included
    int max_attempts = 5;                   // tries of a request answered 429 or 503
    std::int64_t max_retry_wait_ms = 10000; // cap of one Retry-After wait (default wait: 1 s)
    // One response body, decompressed, at most: the stream limit (doc::Limits::max_stream_bytes,
    // 64 MiB), since every answer becomes part of a stream. A longer one is cut off and is the
    // error ResponseTooLarge (Unreachable): nothing of it is parsed.
    std::size_t max_response_bytes = std::size_t{64} << 20;
    std::string user_agent = "kubectl-ichor";
    WarningSink on_warning; // API server warnings; kubectl prints "Warning: <text>"
    ExecIo exec_io;
    // The pause before a retry and the wall clock an exec credential's expiry is read against
    // (its RFC 3339 seconds); null: the system clock. Tests give a fake one: nothing sleeps.
    util::Clock* clock = nullptr;
};

struct ListOptions {
    std::string label_selector;
    std::string field_selector;
    int limit = 500; // page size; 0: one unpaged request
    // Fields of each item left out as the answer is read (dotted paths from the item, such as
    // "metadata.managedFields"): for a large list of which the caller reads a few fields.
    std::vector<std::string> omit;
};

// A list's answer read as Client::list reads it: without the fields `omit` names in each item
// (ListOptions::omit); an answer that is not JSON is discarded (is_discarded()).
doc::Value parse_list_answer(const std::string& body, const std::vector<std::string>& omit);

struct WriteOptions {
    std::string field_manager;    // empty: the server's default for the client
    bool dry_run = false;         // dryRun=All
    std::string field_validation; // Ignore, Warn (server default), Strict
};

struct ApplyOptions {
    std::string field_manager = "kubectl-ichor"; // required by the API server
    bool force = false;
    bool dry_run = false;
};

struct DeleteOptions {
    std::string uid;                // precondition: delete only this incarnation
    std::string resource_version;   // precondition: delete only if unchanged
    std::string propagation_policy; // Orphan, Background, Foreground; empty: the server's default
    bool dry_run = false;
};

// A raw answer: any HTTP status. Only transport failures are errors at this level.
struct Response {
    long status = 0;
    std::string body;
    std::string content_type;
    std::string retry_after;
};

class Client {
  public:
    Client(RestConfig config, Environment env, ClientOptions opts = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    [[nodiscard]] const RestConfig& config() const { return m_config; }
    // The namespace chosen by load_config (-n, else the context's, else ichor-system).
    [[nodiscard]] const std::string& ns() const { return m_config.ns; }

    // A new client for another thread: this one's configuration, environment, options, exec
    // credential and warnings already reported, and its own connection. The clones' warnings
    // reach on_warning one at a time (a lock shared by every clone of this client); while clones
    // run, this client should not be used, since its own warnings do not take that lock. Call it on
    // the thread that uses this client.
    [[nodiscard]] std::unique_ptr<Client> clone();

    // GET one object.
    Result<doc::Value> get(const std::string& path);
    // GET a collection, following `continue` until the end; returns one list object whose items
    // are all pages' items (metadata.continue removed). An expired continue token restarts the
    // list unpaged once.
    Result<doc::Value> list(const std::string& collection_path, const ListOptions& opts = {});
    // POST to a collection; returns the created object.
    Result<doc::Value> create(const std::string& collection_path, const doc::Value& obj,
                              const WriteOptions& opts = {});
    // PUT a whole object (custom resources need metadata.resourceVersion).
    Result<doc::Value> replace(const std::string& path, const doc::Value& obj,
                               const WriteOptions& opts = {});
    // PATCH application/merge-patch+json (RFC 7386): null deletes a key, lists are replaced;
    // metadata.resourceVersion in the patch is a precondition.
    Result<doc::Value> merge_patch(const std::string& path, const doc::Value& patch,
                                   const WriteOptions& opts = {});
    // Server-side apply: PATCH application/apply-patch+yaml with fieldManager (and force); creates
    // the object when absent. Field conflicts are code "Conflict".
    Result<doc::Value> apply(const std::string& path, const doc::Value& obj,
                             const ApplyOptions& opts = {});
    // DELETE with DeleteOptions; returns the server's answer (the object while finalizers run, or
    // a Status). A failed precondition is code "Conflict".
    Result<doc::Value> remove(const std::string& path, const DeleteOptions& opts = {});

    // The status subresource of the object at `path` (PATH/status).
    Result<doc::Value> merge_patch_status(const std::string& path, const doc::Value& patch,
                                          const WriteOptions& opts = {});
    Result<doc::Value> replace_status(const std::string& path, const doc::Value& obj,
                                      const WriteOptions& opts = {});

    // One request with retries, authentication and warnings; `path` may carry a query.
    Result<Response> request(const std::string& method, const std::string& path,
                             const std::string& body = {}, const std::string& content_type = {});

  private:
    // `omit`: parse_list_answer's, for a list's pages.
    Result<doc::Value> call(const std::string& method, const std::string& path,
                            const std::string& body, const std::string& content_type,
                            const std::vector<std::string>& omit = {});
    Result<Response> perform(const std::string& method, const std::string& path,
                             const std::string& body, const std::string& content_type);
    Status ensure_credentials();
    void report_warnings(const std::vector<std::string>& texts);
    void reset_handle();

    RestConfig m_config;
    Environment m_env;
    ClientOptions m_opts;
    void* m_curl = nullptr; // CURL*, kept opaque so that users need no curl headers
    std::optional<ExecCredential> m_exec_cred;
    std::set<std::string> m_warned;
    std::shared_ptr<std::mutex> m_clone_warnings; // made by the first clone()
};

} // namespace ichor::kube
