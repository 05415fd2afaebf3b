// The Client against a small in-process HTTP server (plain http on loopback): retries, paging,
// warnings, request shapes, error typing, exec re-authentication and transport errors.
#include "common/doc/limits.h"
#include "common/kube/client.h"
#include "common/util/strings.h"
#include "test_kube_support.h"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

using namespace ichor;
using namespace ichor::kube;
using ichor::kube::testing::TempDir;

namespace {

class FakeServer {
  public:
    struct Request {
        std::string method;
        std::string target;
        std::map<std::string, std::string> headers; // lower-case names
        std::string body;
    };
    struct Reply {
        int status = 200;
        std::string body = "{}";
        std::vector<std::string> headers;
    };
    using Handler = std::function<Reply(const Request&)>;

    explicit FakeServer(Handler h) : m_handler(std::move(h)) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(m_fd, 8);
        socklen_t len = sizeof a;
        ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~FakeServer() {
        m_stop = true;
        m_thread.join();
        for (auto& t : m_conn_threads) {
            t.join();
        }
        ::close(m_fd);
    }
    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    std::vector<Request> requests() {
        std::lock_guard<std::mutex> l(m_mu);
        return m_requests;
    }
    int connections() const { return m_connections; }

  private:
    bool wait_readable(int fd) {
        while (!m_stop) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) > 0) {
                return true;
            }
        }
        return false;
    }
    void serve() {
        while (wait_readable(m_fd)) {
            int c = ::accept(m_fd, nullptr, nullptr);
            if (c >= 0) {
                ++m_connections;
                m_conn_threads.emplace_back([this, c] {
                    handle_connection(c);
                    ::close(c);
                });
            }
        }
    }
    // Reads requests off one connection until the client closes it.
    void handle_connection(int c) {
        std::string buf;
        char tmp[4096];
        while (true) {
            size_t end;
            while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
                if (!wait_readable(c)) {
                    return;
                }
                ssize_t n = ::read(c, tmp, sizeof tmp);
                if (n <= 0) {
                    return;
                }
                buf.append(tmp, static_cast<size_t>(n));
            }
            Request r = parse_head(buf.substr(0, end));
            buf.erase(0, end + 4);
            size_t want =
                r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
            while (buf.size() < want) {
                if (!wait_readable(c)) {
                    return;
                }
                ssize_t n = ::read(c, tmp, sizeof tmp);
                if (n <= 0) {
                    return;
                }
                buf.append(tmp, static_cast<size_t>(n));
            }
            r.body = buf.substr(0, want);
            buf.erase(0, want);
            {
                std::lock_guard<std::mutex> l(m_mu);
                m_requests.push_back(r);
            }
            Reply rep = m_handler(r);
            std::string out = "HTTP/1.1 " + std::to_string(rep.status) +
                              " X\r\nContent-Type: application/json\r\n"
                              "Content-Length: " +
                              std::to_string(rep.body.size()) + "\r\n";
            for (const auto& h : rep.headers) {
                out += h + "\r\n";
            }
            out += "\r\n" + rep.body;
            if (::write(c, out.data(), out.size()) < 0) {
                return;
            }
        }
    }
    static Request parse_head(const std::string& head) {
        Request r;
        auto lines = util::split(head, '\n');
        auto first = util::split(std::string(util::trim(lines[0])), ' ');
        r.method = first.at(0);
        r.target = first.at(1);
        for (size_t i = 1; i < lines.size(); ++i) {
            auto colon = lines[i].find(':');
            if (colon != std::string::npos) {
                r.headers[util::to_lower(util::trim(lines[i].substr(0, colon)))] =
                    std::string(util::trim(lines[i].substr(colon + 1)));
            }
        }
        return r;
    }

    Handler m_handler;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_connections{0};
    std::thread m_thread;
    std::vector<std::thread> m_conn_threads; // one per connection: clients keep theirs open
    std::mutex m_mu;
    std::vector<Request> m_requests;
};

RestConfig config_for(const std::string& server) {
    RestConfig rc;
    rc.source = "kubeconfig test";
    rc.context = "test";
    rc.ns = "ichor-system";
    rc.cluster.server = server;
    rc.user.token = "static-token";
    return rc;
}

std::vector<std::int64_t> g_sleeps;

// The client's clock in these tests: each pause is recorded in g_sleeps, never slept; the wall
// time is `now`.
class TestClock final : public util::Clock {
  public:
    explicit TestClock(std::string now) : m_now(std::move(now)) {}
    std::string now_rfc3339() override { return m_now; }
    std::int64_t monotonic_ms() override { return m_ms; }
    void sleep_ms(std::int64_t ms) override {
        g_sleeps.push_back(ms);
        m_ms += ms;
    }

  private:
    std::string m_now;
    std::int64_t m_ms = 0;
};
TestClock g_clock("2026-12-03T12:00:00Z");

ClientOptions test_options() {
    ClientOptions o;
    o.timeout_ms = 5000;
    o.clock = &g_clock;
    o.exec_io.stderr_fd = -1;
    return o;
}

const std::string k_tm = ichor_path("talosmachines", "ichor-system", "m1");

} // namespace

TEST_CASE("client: request shapes of get, create, merge patch, apply, status and delete",
          "[kube][client]") {
    FakeServer srv([](const FakeServer::Request& r) {
        return FakeServer::Reply{200, R"({"kind":"TalosMachine","echo":")" + r.method + "\"}", {}};
    });
    Client c(config_for(srv.url()), Environment{}, test_options());
    doc::Value obj = {{"apiVersion", "ichor.maesh.dev/v1alpha1"}, {"kind", "TalosMachine"}};

    auto got = c.get(k_tm);
    REQUIRE(got.ok());
    CHECK((*got)["echo"] == "GET");
    REQUIRE(
        c.create(ichor_path("talosmachines", "ichor-system"), obj, {"mgr", true, "Strict"}).ok());
    REQUIRE(c.merge_patch(k_tm, {{"spec", {{"address", nullptr}}}}).ok());
    REQUIRE(c.apply(k_tm, obj, {"ichor-adopt", true, false}).ok());
    REQUIRE(c.merge_patch_status(k_tm, {{"status", {{"maintenanceFingerprint", "x"}}}}).ok());
    REQUIRE(c.replace_status(k_tm, obj).ok());
    REQUIRE(c.remove(k_tm, {"uid-1", "42", "Foreground", false}).ok());

    auto reqs = srv.requests();
    REQUIRE(reqs.size() == 7);
    CHECK(reqs[0].target == k_tm);
    CHECK(reqs[0].headers["authorization"] == "Bearer static-token");
    CHECK(reqs[0].headers["accept"] == "application/json");
    CHECK(reqs[1].method == "POST");
    CHECK(reqs[1].target == "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/"
                            "talosmachines?fieldManager=mgr&dryRun=All&fieldValidation=Strict");
    CHECK(reqs[1].headers["content-type"] == "application/json");
    CHECK(doc::Value::parse(reqs[1].body) == obj);
    CHECK(reqs[2].method == "PATCH");
    CHECK(reqs[2].headers["content-type"] == "application/merge-patch+json");
    CHECK(reqs[2].body == R"({"spec":{"address":null}})");
    CHECK(reqs[3].target == k_tm + "?fieldManager=ichor-adopt&force=true");
    CHECK(reqs[3].headers["content-type"] == "application/apply-patch+yaml");
    CHECK(reqs[4].target == k_tm + "/status");
    CHECK(reqs[5].method == "PUT");
    CHECK(reqs[5].target == k_tm + "/status");
    CHECK(reqs[6].method == "DELETE");
    CHECK(doc::Value::parse(reqs[6].body) ==
          doc::Value::parse(
              R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground",)"
              R"("preconditions":{"uid":"uid-1","resourceVersion":"42"}})"));
    CHECK(srv.connections() == 1); // keep-alive: one connection for all calls
}

TEST_CASE("client: list follows continue tokens", "[kube][client]") {
    FakeServer srv([](const FakeServer::Request& r) {
        if (r.target.find("continue=") == std::string::npos) {
            return FakeServer::Reply{
                200,
                R"({"kind":"TalosMachineList","metadata":{"resourceVersion":"1",)"
                R"("continue":"t1","remainingItemCount":1},"items":[{"n":1}]})",
                {}};
        }
        return FakeServer::Reply{
            200,
            R"({"kind":"TalosMachineList","metadata":{"resourceVersion":"1"},"items":[{"n":2}]})",
            {}};
    });
    Client c(config_for(srv.url()), Environment{}, test_options());
    auto l = c.list(ichor_path("talosmachines", "ichor-system"), {"app=x", "", 1});
    REQUIRE(l.ok());
    CHECK((*l)["items"] == doc::Value::parse(R"([{"n":1},{"n":2}])"));
    CHECK((*l)["metadata"] == doc::Value::parse(R"({"resourceVersion":"1"})"));
    auto reqs = srv.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].target ==
          ichor_path("talosmachines", "ichor-system") + "?labelSelector=app%3Dx&limit=1");
    CHECK(reqs[1].target == ichor_path("talosmachines", "ichor-system") +
                                "?labelSelector=app%3Dx&limit=1&continue=t1");
}

TEST_CASE("client: a list leaves out the fields it is told to, in every item and page alone",
          "[kube][client]") {
    const std::string page1 =
        R"({"kind":"NodeList","metadata":{"continue":"t1","managedFields":"the list's own"},)"
        R"("items":[{"metadata":{"name":"a","managedFields":[{"manager":"kubelet"}],)"
        R"("labels":{"managedFields":"a label"}},"status":{"images":[{"names":["x"]}],)"
        R"("addresses":[{"address":"10.0.0.1"}]},"managedFields":"an item's own key"}]})";
    const std::string page2 =
        R"({"kind":"NodeList","metadata":{},"items":[{"metadata":{"name":"b",)"
        R"("managedFields":[]},"status":{"images":[]}},"not an object",[1,2]]})";
    FakeServer srv([&](const FakeServer::Request& r) {
        return FakeServer::Reply{
            200, r.target.find("continue=") == std::string::npos ? page1 : page2, {}};
    });
    Client c(config_for(srv.url()), Environment{}, test_options());
    ListOptions lo{"", "", 1};
    lo.omit = {"metadata.managedFields", "status.images"};
    auto l = c.list("/api/v1/nodes", lo);
    REQUIRE(l.ok());
    CHECK((*l)["items"] ==
          doc::Value::parse(R"([{"metadata":{"name":"a","labels":{"managedFields":"a label"}},)"
                            R"("status":{"addresses":[{"address":"10.0.0.1"}]},)"
                            R"("managedFields":"an item's own key"},)"
                            R"({"metadata":{"name":"b"},"status":{}},"not an object",[1,2]])"));
    // the list's own metadata is not an item's
    CHECK(parse_list_answer(page1, lo.omit)["metadata"]["managedFields"] == "the list's own");
    // without `omit`, everything; an answer that is not JSON is discarded either way
    CHECK(parse_list_answer(page1, {}) == doc::Value::parse(page1));
    CHECK(parse_list_answer("{\"items\":[", lo.omit).is_discarded());
    CHECK(parse_list_answer("{\"items\":[", {}).is_discarded());
    // other fields of the same names elsewhere stay
    auto all = c.list("/api/v1/nodes", {"", "", 1});
    REQUIRE(all.ok());
    CHECK((*all)["items"][0]["metadata"]["managedFields"][0]["manager"] == "kubelet");
    CHECK((*all)["items"][0]["status"]["images"].size() == 1);
}

TEST_CASE("client: list restarts unpaged when the continue token expired", "[kube][client]") {
    FakeServer srv([](const FakeServer::Request& r) {
        if (r.target.find("continue=") != std::string::npos) {
            return FakeServer::Reply{
                410, R"({"kind":"Status","reason":"Expired","message":"too old","code":410})", {}};
        }
        if (r.target.find("limit=") != std::string::npos) {
            return FakeServer::Reply{
                200, R"({"metadata":{"continue":"t1"},"items":[{"n":1}]})", {}};
        }
        return FakeServer::Reply{200, R"({"metadata":{},"items":[{"n":1},{"n":2},{"n":3}]})", {}};
    });
    Client c(config_for(srv.url()), Environment{}, test_options());
    auto l = c.list("/api/v1/namespaces/x/secrets", {"", "", 1});
    REQUIRE(l.ok());
    CHECK((*l)["items"].size() == 3);
}

TEST_CASE("client: 429 and 503 are retried after Retry-After, at most max_attempts tries",
          "[kube][client]") {
    int calls = 0;
    FakeServer srv([&](const FakeServer::Request&) {
        ++calls;
        if (calls == 1) {
            return FakeServer::Reply{429,
                                     R"({"kind":"Status","reason":"TooManyRequests","code":429})",
                                     {"Retry-After: 2"}};
        }
        if (calls == 2) {
            return FakeServer::Reply{503, "unavailable", {}};
        }
        return FakeServer::Reply{200, R"({"ok":true})", {}};
    });
    g_sleeps.clear();
    Client c(config_for(srv.url()), Environment{}, test_options());
    auto got = c.get(k_tm);
    REQUIRE(got.ok());
    CHECK(g_sleeps == std::vector<std::int64_t>{2000, 1000});

    FakeServer busy([](const FakeServer::Request&) {
        return FakeServer::Reply{
            503,
            R"({"kind":"Status","reason":"ServiceUnavailable","message":"busy","code":503})",
            {"Retry-After: 120"}};
    });
    g_sleeps.clear();
    Client b(config_for(busy.url()), Environment{}, test_options());
    auto e = b.get(k_tm);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == "ServiceUnavailable");
    CHECK(e.error().kind == ErrorKind::Unreachable);
    CHECK(busy.requests().size() == 5);
    CHECK(g_sleeps == std::vector<std::int64_t>(4, 10000)); // capped
}

TEST_CASE("client: another 5xx is retried only when it carries Retry-After", "[kube][client]") {
    int calls = 0;
    FakeServer srv([&](const FakeServer::Request& r) {
        ++calls;
        if (r.target.find("asked") != std::string::npos && calls == 1) {
            return FakeServer::Reply{500, "{}", {"Retry-After: 3"}};
        }
        if (r.target.find("plain") != std::string::npos) {
            return FakeServer::Reply{502, "{}", {}};
        }
        return FakeServer::Reply{200, R"({"ok":true})", {}};
    });
    g_sleeps.clear();
    Client c(config_for(srv.url()), Environment{}, test_options());
    REQUIRE(c.get("/api/asked").ok());
    CHECK(g_sleeps == std::vector<std::int64_t>{3000});
    CHECK(calls == 2);
    g_sleeps.clear();
    auto e = c.get("/api/plain");
    REQUIRE_FALSE(e.ok());
    CHECK(calls == 3); // not retried
    CHECK(g_sleeps.empty());
}

TEST_CASE("client: a response body past max_response_bytes is refused, not read",
          "[kube][client]") {
    const std::string big = R"({"items":[")" + std::string(5000, 'x') + R"("]})";
    FakeServer srv([&](const FakeServer::Request& r) {
        return r.target.find("small") != std::string::npos
                   ? FakeServer::Reply{200, R"({"ok":true})", {}}
                   : FakeServer::Reply{200, big, {}};
    });
    ClientOptions o = test_options();
    o.max_response_bytes = 4096;
    Client c(config_for(srv.url()), Environment{}, o);
    auto e = c.get("/api/big");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == "ResponseTooLarge");
    CHECK(e.error().kind == ErrorKind::Unreachable);
    CHECK(e.error().message == "GET /api/big on " + srv.url() +
                                   ": the response is larger than 4096 bytes; it was not "
                                   "read");
    // The client goes on: the next answer is read whole, not mixed with the rest of the last.
    auto ok = c.get("/api/small");
    REQUIRE(ok.ok());
    CHECK((*ok)["ok"] == true);
    // The default is the stream limit.
    CHECK(ClientOptions{}.max_response_bytes == doc::k_limits.max_stream_bytes);
}

TEST_CASE("client: warnings reach the callback once each", "[kube][client]") {
    FakeServer srv([](const FakeServer::Request&) {
        return FakeServer::Reply{
            200,
            "{}",
            {R"(Warning: 299 - "unknown field \"spec.foo\"")", R"(Warning: 299 - "second")"}};
    });
    std::vector<std::string> warnings;
    ClientOptions o = test_options();
    o.on_warning = [&](std::string_view w) { warnings.emplace_back(w); };
    Client c(config_for(srv.url()), Environment{}, o);
    REQUIRE(c.get(k_tm).ok());
    REQUIRE(c.get(k_tm).ok());
    CHECK(warnings == std::vector<std::string>{"unknown field \"spec.foo\"", "second"});
}

TEST_CASE("client: API errors are typed by reason", "[kube][client]") {
    FakeServer srv([](const FakeServer::Request& r) {
        if (r.method == "POST") {
            return FakeServer::Reply{
                409,
                R"({"kind":"Status","status":"Failure","reason":"AlreadyExists",)"
                R"("message":"talosmachines.ichor.maesh.dev \"m1\" already exists","code":409})",
                {}};
        }
        return FakeServer::Reply{
            404,
            R"({"kind":"Status","status":"Failure","reason":"NotFound",)"
            R"("message":"talosmachines.ichor.maesh.dev \"m1\" not found","code":404})",
            {}};
    });
    Client c(config_for(srv.url()), Environment{}, test_options());
    auto nf = c.get(k_tm);
    REQUIRE_FALSE(nf.ok());
    CHECK(nf.error().kind == ErrorKind::Config);
    CHECK(nf.error().code == "NotFound");
    CHECK(nf.error().message == "talosmachines.ichor.maesh.dev \"m1\" not found");
    auto ae = c.create(ichor_path("talosmachines", "ichor-system"), doc::Value::object());
    REQUIRE_FALSE(ae.ok());
    CHECK(ae.error().code == "AlreadyExists");
}

TEST_CASE("client: 401 with an exec plugin runs the plugin again and retries once",
          "[kube][client]") {
    TempDir t;
    // Each run prints a new token: tok-1, tok-2, ...
    t.write("plug",
            "#!/bin/sh\nn=$(cat \"" + t.path() +
                "/count\" 2>/dev/null || echo 0)\nn=$((n+1))\n"
                "echo $n > \"" +
                t.path() +
                "/count\"\n"
                "printf "
                "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                "\"status\":{\"token\":\"tok-%s\",\"expirationTimestamp\":\"2100-01-01T00:00:00Z\"}"
                "}' $n\n",
            0755);
    FakeServer srv([](const FakeServer::Request& r) {
        if (r.headers.at("authorization") == "Bearer tok-1") {
            return FakeServer::Reply{
                401,
                R"({"kind":"Status","reason":"Unauthorized","message":"Unauthorized","code":401})",
                {}};
        }
        return FakeServer::Reply{200, R"({"who":")" + r.headers.at("authorization") + "\"}", {}};
    });
    RestConfig rc = config_for(srv.url());
    rc.user.token.clear();
    ExecConfig ex;
    ex.command = t.path() + "/plug";
    ex.api_version = "client.authentication.k8s.io/v1";
    ex.interactive_mode = "Never";
    ex.where = "test exec";
    rc.user.exec = ex;
    Environment env;
    env.vars["PATH"] = "/usr/bin:/bin";
    Client c(rc, env, test_options());
    auto got = c.get(k_tm);
    REQUIRE(got.ok());
    CHECK((*got)["who"] == "Bearer tok-2");
    REQUIRE(c.get(k_tm).ok()); // cached until expiry: no third run
    CHECK(util::trim(t.read("count")) == "2");

    // An expired credential is renewed before the request.
    ClientOptions later = test_options();
    TestClock after_2100("2103-02-04T02:40:00Z");
    later.clock = &after_2100;
    Client c2(rc, env, later);
    REQUIRE(c2.get(k_tm).ok());
    REQUIRE(c2.get(k_tm).ok());
    CHECK(util::trim(t.read("count")) == "4");
}

TEST_CASE("client: transport failures name the server, the process proxy is not used",
          "[kube][client]") {
    int port;
    {
        FakeServer gone([](const FakeServer::Request&) { return FakeServer::Reply{}; });
        port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
    }
    std::string server = "http://127.0.0.1:" + std::to_string(port);
    Client c(config_for(server), Environment{}, test_options());
    auto e = c.get(k_tm);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::Unreachable);
    CHECK(e.error().code == "Unreachable");
    CHECK(util::starts_with(e.error().message,
                            "cannot reach the Kubernetes API at " + server + ": "));

    FakeServer srv([](const FakeServer::Request&) { return FakeServer::Reply{}; });
    Environment env;
    env.vars["HTTP_PROXY"] = "http://127.0.0.1:1";   // loopback targets bypass environment proxies
    ::setenv("http_proxy", "http://127.0.0.1:1", 1); // and libcurl must not pick this up itself
    Client direct(config_for(srv.url()), env, test_options());
    auto ok = direct.get(k_tm);
    ::unsetenv("http_proxy");
    CHECK(ok.ok());

    RestConfig via = config_for(srv.url());
    via.cluster.proxy_url = "http://127.0.0.1:1"; // the kubeconfig's proxy-url is always used
    Client proxied(via, Environment{}, test_options());
    auto pe = proxied.get(k_tm);
    REQUIRE_FALSE(pe.ok());
    CHECK(pe.error().kind == ErrorKind::Unreachable);
}
