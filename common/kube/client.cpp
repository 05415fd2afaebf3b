#include "common/kube/client.h"

#include "common/doc/vocabulary.h"
#include "common/kube/status.h"
#include "common/kube/transport.h"
#include "common/util/strings.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace ichor::kube {

namespace {

// The clock's wall time to the second: an exec credential's expiry is read to the second
// (parse_rfc3339), so it expires at the same instant as against the exact time. A time the clock
// cannot tell counts as past every expiry.
std::chrono::system_clock::time_point wall_now(util::Clock& clock) {
    return parse_rfc3339(clock.now_rfc3339())
        .value_or(std::chrono::system_clock::time_point::max());
}

struct Collected {
    std::string body;
    std::string content_type;
    std::string retry_after;
    std::vector<std::string> warnings;
    std::size_t max_body = 0;
    bool too_large = false;
};

size_t on_body(char* p, size_t size, size_t n, void* ud) {
    auto* c = static_cast<Collected*>(ud);
    if (c->body.size() + size * n > c->max_body) {
        c->too_large = true;
        return 0; // libcurl ends the transfer (CURLE_WRITE_ERROR)
    }
    c->body.append(p, size * n);
    return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* ud) {
    auto* c = static_cast<Collected*>(ud);
    std::string_view line(p, size * n);
    if (util::starts_with(line, "HTTP/")) { // a new response (after 100 Continue): start over
        *c = Collected{.max_body = c->max_body};
        return size * n;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) {
        return size * n;
    }
    std::string name = util::to_lower(util::trim(line.substr(0, colon)));
    std::string value(util::trim(line.substr(colon + 1)));
    if (name == "warning") {
        for (auto& w : parse_warning_header(value)) {
            c->warnings.push_back(std::move(w));
        }
    } else if (name == "retry-after") {
        c->retry_after = value;
    } else if (name == "content-type") {
        c->content_type = value;
    }
    return size * n;
}

using SList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

void add_header(SList& list, const std::string& h) {
    list.reset(curl_slist_append(list.release(), h.c_str()));
}

void set_blob(CURL* h, CURLoption opt, const std::string& data) {
    curl_blob blob{const_cast<char*>(data.data()), data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &blob);
}

Error transport_error(CURLcode rc, const char* errbuf, const RestConfig& cfg) {
    std::string detail =
        errbuf[0] != '\0' ? std::string(util::trim(errbuf)) : curl_easy_strerror(rc);
    const std::string& server = cfg.cluster.server;
    const std::string view_hint =
        "kubectl config view --minify" +
        (cfg.context.empty() ? std::string() : " --context " + cfg.context);
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
        return make_error(ErrorKind::Config, "TLS verification of " + server + " failed: " + detail,
                          "check certificate-authority and tls-server-name: " + view_hint,
                          vocab::code::k_tls_verify_failed);
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
        return make_error(
            ErrorKind::Config, "TLS credentials for " + server + " cannot be used: " + detail,
            "check client-certificate, client-key and certificate-authority: " + view_hint,
            vocab::code::k_tls_client_certificate);
    case CURLE_OPERATION_TIMEDOUT:
        return make_error(ErrorKind::Unreachable,
                          "cannot reach the Kubernetes API at " + server + ": " + detail,
                          "kubectl cluster-info", vocab::code::k_timeout);
    default:
        return make_error(ErrorKind::Unreachable,
                          "cannot reach the Kubernetes API at " + server + ": " + detail,
                          "kubectl cluster-info", vocab::code::k_unreachable);
    }
}

std::string size_text(std::size_t bytes) {
    return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                   : std::to_string(bytes) + " bytes";
}

bool is_success(long status) {
    return status >= 200 && status < 300;
}

std::string write_query(const WriteOptions& o) {
    return query_string({{"fieldManager", o.field_manager},
                         {"dryRun", o.dry_run ? "All" : ""},
                         {"fieldValidation", o.field_validation}});
}

std::string apply_query(const ApplyOptions& o) {
    return query_string(
        {{"fieldManager", o.field_manager.empty() ? "kubectl-ichor" : o.field_manager},
         {"force", o.force ? "true" : ""},
         {"dryRun", o.dry_run ? "All" : ""}});
}

void init_curl_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

} // namespace

Client::Client(RestConfig config, Environment env, ClientOptions opts)
    : m_config(std::move(config)), m_env(std::move(env)), m_opts(std::move(opts)) {
    init_curl_once();
    if (m_opts.clock == nullptr) {
        m_opts.clock = &util::system_clock();
    }
    m_curl = curl_easy_init();
}

Client::~Client() {
    if (m_curl != nullptr) {
        curl_easy_cleanup(static_cast<CURL*>(m_curl));
    }
}

void Client::reset_handle() {
    if (m_curl != nullptr) {
        curl_easy_cleanup(static_cast<CURL*>(m_curl));
    }
    m_curl = curl_easy_init();
}

std::unique_ptr<Client> Client::clone() {
    if (!m_clone_warnings) {
        m_clone_warnings = std::make_shared<std::mutex>();
    }
    ClientOptions opts = m_opts;
    if (m_opts.on_warning) {
        opts.on_warning = [lock = m_clone_warnings, sink = m_opts.on_warning](std::string_view w) {
            std::lock_guard guard(*lock);
            sink(w);
        };
    }
    auto c = std::make_unique<Client>(m_config, m_env, std::move(opts));
    c->m_exec_cred = m_exec_cred;
    c->m_warned = m_warned;
    return c;
}

Status Client::ensure_credentials() {
    if (!m_config.user.exec || (m_exec_cred && !m_exec_cred->expired(wall_now(*m_opts.clock)))) {
        return ok_status();
    }
    auto cred = run_exec_plugin(*m_config.user.exec, m_config.cluster, m_env, m_opts.exec_io);
    if (!cred) {
        return cred.error();
    }
    bool new_cert = !m_exec_cred || m_exec_cred->client_cert_pem != cred->client_cert_pem ||
                    m_exec_cred->client_key_pem != cred->client_key_pem;
    if (m_exec_cred && new_cert) {
        reset_handle(); // connections made with the old certificate must not be reused
    }
    m_exec_cred = std::move(*cred);
    return ok_status();
}

void Client::report_warnings(const std::vector<std::string>& texts) {
    for (const auto& w : texts) {
        if (!w.empty() && m_warned.insert(w).second && m_opts.on_warning) {
            m_opts.on_warning(w);
        }
    }
}

namespace {

SList request_headers(const UserConfig& u, const Target& target, const std::string& token,
                      const std::string& content_type) {
    SList headers(nullptr, &curl_slist_free_all);
    add_header(headers, "Accept: application/json");
    add_header(headers, "Expect:"); // no 100-continue round trip for large bodies
    if (!content_type.empty()) {
        add_header(headers, "Content-Type: " + content_type);
    }
    if (!target.host_header.empty()) {
        add_header(headers, target.host_header);
    }
    if (!token.empty()) {
        add_header(headers, "Authorization: Bearer " + token);
    }
    if (!u.impersonate.empty()) {
        add_header(headers, "Impersonate-User: " + u.impersonate);
    }
    if (!u.impersonate_uid.empty()) {
        add_header(headers, "Impersonate-Uid: " + u.impersonate_uid);
    }
    for (const auto& g : u.impersonate_groups) {
        add_header(headers, "Impersonate-Group: " + g);
    }
    for (const auto& [k, v] : u.impersonate_extra) {
        add_header(headers, "Impersonate-Extra-" + url_encode(k) + ": " + v);
    }
    return headers;
}

// Server verification and the client certificate (`cert`/`key` may be empty).
void set_tls(CURL* h, const ClusterConfig& cluster, const std::string& cert,
             const std::string& key) {
    if (cluster.insecure_skip_tls_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!cluster.ca_pem.empty()) {
        curl_easy_setopt(h, CURLOPT_CAINFO, nullptr); // only the kubeconfig's CA, as kubectl does
        curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
        set_blob(h, CURLOPT_CAINFO_BLOB, cluster.ca_pem);
    }
    if (!cert.empty()) {
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        set_blob(h, CURLOPT_SSLCERT_BLOB, cert);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
        set_blob(h, CURLOPT_SSLKEY_BLOB, key);
    }
}

void set_method(CURL* h, const std::string& method, const std::string& body) {
    if (method != "GET") {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    }
}

} // namespace

Result<Response> Client::perform(const std::string& method, const std::string& path,
                                 const std::string& body, const std::string& content_type) {
    auto* h = static_cast<CURL*>(m_curl);
    auto server = parse_server_url(m_config.cluster.server);
    if (h == nullptr || !server) {
        return make_error(ErrorKind::Config,
                          m_config.source + ": server \"" + m_config.cluster.server +
                              "\" is not a URL (or libcurl failed to start)",
                          "kubectl config view --minify", vocab::code::k_kubeconfig_invalid);
    }
    curl_easy_reset(h); // keeps the connection cache
    char errbuf[CURL_ERROR_SIZE] = {0};
    Collected got;
    got.max_body = m_opts.max_response_bytes;
    const UserConfig& u = m_config.user;
    const bool exec_token = m_exec_cred && !m_exec_cred->token.empty();
    const bool exec_cert = m_exec_cred && !m_exec_cred->client_cert_pem.empty();
    const std::string& token = exec_token ? m_exec_cred->token : u.token;
    Target target = request_target(*server, m_config.cluster, path);
    ProxyChoice proxy = choose_proxy(*server, m_config.cluster, m_env);
    SList headers = request_headers(u, target, token, content_type);
    SList connect_to(
        target.connect_to.empty() ? nullptr : curl_slist_append(nullptr, target.connect_to.c_str()),
        &curl_slist_free_all);
    curl_easy_setopt(h, CURLOPT_URL, target.url.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to.get());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_USERAGENT, m_opts.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(m_opts.timeout_ms));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::min<std::int64_t>(m_opts.timeout_ms, 10000)));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &got);
    curl_easy_setopt(h, CURLOPT_PROXY,
                     proxy.proxy.c_str()); // "" = direct, whatever the process env says
    curl_easy_setopt(h, CURLOPT_NOPROXY, proxy.no_proxy.c_str());
    if (!m_config.cluster.disable_compression) {
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    }
    set_tls(h, m_config.cluster, exec_cert ? m_exec_cred->client_cert_pem : u.client_cert_pem,
            exec_cert ? m_exec_cred->client_key_pem : u.client_key_pem);
    if (token.empty() && !u.username.empty()) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERNAME, u.username.c_str());
        curl_easy_setopt(h, CURLOPT_PASSWORD, u.password.c_str());
    }
    set_method(h, method, body);
    CURLcode rc = curl_easy_perform(h);
    if (got.too_large) {
        reset_handle(); // the rest of that answer must not be read as the next one
        return make_error(ErrorKind::Unreachable,
                          method + " " + path + " on " + m_config.cluster.server +
                              ": the response is larger than " +
                              size_text(m_opts.max_response_bytes) + "; it was not read",
                          "kubectl get --raw '" + path + "' | wc -c",
                          vocab::code::k_response_too_large);
    }
    if (rc != CURLE_OK) {
        return transport_error(rc, errbuf, m_config);
    }
    Response r;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    r.body = std::move(got.body);
    r.content_type = std::move(got.content_type);
    r.retry_after = std::move(got.retry_after);
    report_warnings(got.warnings);
    return r;
}

Result<Response> Client::request(const std::string& method, const std::string& path,
                                 const std::string& body, const std::string& content_type) {
    bool reauthenticated = false;
    for (int attempt = 1;; ++attempt) {
        if (Status st = ensure_credentials(); !st) {
            return st.error();
        }
        auto r = perform(method, path, body, content_type);
        if (!r) {
            return r;
        }
        if (r->status == 401 && m_config.user.exec && !reauthenticated) {
            reauthenticated = true; // the plugin's credential may have been revoked: one fresh try
            m_exec_cred.reset();
            continue;
        }
        // 429 and 503 always (1 s when the server names no wait); any other 5xx only when the
        // server asks for a retry with Retry-After, as client-go's checkWait does. Only such a
        // status is looked into: the body of any other reply (a list of 256 Nodes) is not parsed
        // a second time for a Status it cannot be (bench/HISTORY.md, "the realistic plan's CPU").
        if (r->status != 429 && r->status < 500) {
            return r;
        }
        auto wait = retry_after_seconds(r->retry_after, r->body);
        bool retriable =
            r->status == 429 || r->status == 503 || (!r->retry_after.empty() && wait.has_value());
        if (retriable && attempt < m_opts.max_attempts) {
            long secs = wait.value_or(1);
            m_opts.clock->sleep_ms(
                std::clamp<std::int64_t>(secs * 1000, 0, m_opts.max_retry_wait_ms));
            continue;
        }
        return r;
    }
}

// The fields `omit` names are read past, never built.
doc::Value parse_list_answer(const std::string& body, const std::vector<std::string>& omit) {
    if (omit.empty()) {
        return doc::Value::parse(body, nullptr, false);
    }
    // The parser's depth of a key is the number of containers open around it: 1 for the list's
    // own keys ("items"), 3 for an item's, 4 for its metadata's.
    constexpr int k_item = 3;
    std::vector<std::vector<std::string>> paths;
    for (const auto& o : omit) {
        paths.push_back(util::split(o, '.'));
    }
    std::vector<std::string> keys; // keys[d]: the key last read at depth d
    auto keep = [&](int depth, doc::Value::parse_event_t event, doc::Value& parsed) {
        if (event != doc::Value::parse_event_t::key) {
            return true;
        }
        const auto d = static_cast<std::size_t>(depth);
        if (keys.size() <= d) {
            keys.resize(d + 1);
        }
        keys[d] = parsed.get<std::string>();
        if (depth < k_item || keys[1] != "items") {
            return true;
        }
        for (const auto& p : paths) {
            if (p.size() == d - k_item + 1 &&
                std::equal(p.begin(), p.end(), keys.begin() + k_item)) {
                return false;
            }
        }
        return true;
    };
    return doc::Value::parse(body, keep, false);
}

Result<doc::Value> Client::call(const std::string& method, const std::string& path,
                                const std::string& body, const std::string& content_type,
                                const std::vector<std::string>& omit) {
    auto r = request(method, path, body, content_type);
    if (!r) {
        return r.error();
    }
    if (!is_success(r->status)) {
        return status_error(r->status, r->body, RequestInfo{method, path, m_config.cluster.server});
    }
    if (util::trim(r->body).empty()) {
        return doc::Value();
    }
    doc::Value v = parse_list_answer(r->body, omit);
    if (v.is_discarded()) {
        return make_error(ErrorKind::Unreachable,
                          method + " " + m_config.cluster.server + path +
                              ": the answer is not JSON (content type " +
                              (r->content_type.empty() ? "unset" : r->content_type) + ")",
                          "kubectl cluster-info", vocab::code::k_bad_response);
    }
    return v;
}

Result<doc::Value> Client::get(const std::string& path) {
    return call("GET", path, {}, {});
}

Result<doc::Value> Client::list(const std::string& collection_path, const ListOptions& opts) {
    doc::Value out;
    std::string cont;
    int limit = opts.limit;
    while (true) {
        std::string q = query_string({{"labelSelector", opts.label_selector},
                                      {"fieldSelector", opts.field_selector},
                                      {"limit", limit > 0 ? std::to_string(limit) : ""},
                                      {"continue", cont}});
        auto page = call("GET", collection_path + q, {}, {}, opts.omit);
        if (!page && !cont.empty() &&
            (page.error().code == reason::k_expired || page.error().code == reason::k_gone)) {
            out = doc::Value(); // the snapshot expired between pages: list again in one piece
            cont.clear();
            limit = 0;
            continue;
        }
        if (!page) {
            return page.error();
        }
        doc::Value items = page->contains("items") && (*page)["items"].is_array()
                               ? std::move((*page)["items"])
                               : doc::Value::array();
        cont = doc::get_string(*page, "metadata.continue");
        if (out.is_null()) {
            out = std::move(*page);
            out["items"] = std::move(items);
        } else {
            for (auto& it : items) {
                out["items"].push_back(std::move(it));
            }
            out["metadata"]["resourceVersion"] = doc::get_string(*page, "metadata.resourceVersion");
        }
        if (cont.empty()) {
            break;
        }
    }
    if (out.contains("metadata") && out["metadata"].is_object()) {
        out["metadata"].erase("continue");
        out["metadata"].erase("remainingItemCount");
    }
    return out;
}

Result<doc::Value> Client::create(const std::string& collection_path, const doc::Value& obj,
                                  const WriteOptions& opts) {
    return call("POST", collection_path + write_query(opts), obj.dump(), "application/json");
}

Result<doc::Value> Client::replace(const std::string& path, const doc::Value& obj,
                                   const WriteOptions& opts) {
    return call("PUT", path + write_query(opts), obj.dump(), "application/json");
}

Result<doc::Value> Client::merge_patch(const std::string& path, const doc::Value& patch,
                                       const WriteOptions& opts) {
    return call("PATCH", path + write_query(opts), patch.dump(), "application/merge-patch+json");
}

Result<doc::Value> Client::apply(const std::string& path, const doc::Value& obj,
                                 const ApplyOptions& opts) {
    // JSON is YAML, so the apply body needs no YAML emitter
    return call("PATCH", path + apply_query(opts), obj.dump(), "application/apply-patch+yaml");
}

Result<doc::Value> Client::remove(const std::string& path, const DeleteOptions& opts) {
    doc::Value body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
    if (!opts.propagation_policy.empty()) {
        body["propagationPolicy"] = opts.propagation_policy;
    }
    if (!opts.uid.empty()) {
        body["preconditions"]["uid"] = opts.uid;
    }
    if (!opts.resource_version.empty()) {
        body["preconditions"]["resourceVersion"] = opts.resource_version;
    }
    if (opts.dry_run) {
        body["dryRun"] = doc::Value::array({"All"});
    }
    return call("DELETE", path, body.dump(), "application/json");
}

Result<doc::Value> Client::merge_patch_status(const std::string& path, const doc::Value& patch,
                                              const WriteOptions& opts) {
    return merge_patch(status_path(path), patch, opts);
}

Result<doc::Value> Client::replace_status(const std::string& path, const doc::Value& obj,
                                          const WriteOptions& opts) {
    return replace(status_path(path), obj, opts);
}

} // namespace ichor::kube
