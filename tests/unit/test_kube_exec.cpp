#include "common/kube/exec_plugin.h"
#include "common/util/strings.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>

#include <chrono>

using namespace ichor;
using namespace ichor::kube;
using ichor::kube::testing::TempDir;

namespace {

const char* const k_v1 = "client.authentication.k8s.io/v1";

// A plugin: a shell script printing `reply` (after recording its inputs in the folder).
ExecConfig plugin(const TempDir& t, const std::string& reply, const std::string& extra = {}) {
    t.write("bin/plug",
            "#!/bin/sh\n"
            "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"" +
                t.path() +
                "/info\"\n"
                "printf '%s ' \"$@\" > \"" +
                t.path() +
                "/args\"\n"
                "printf '%s' \"$FROM_KUBECONFIG\" > \"" +
                t.path() + "/env\"\n" + extra + "cat <<'EOF'\n" + reply + "\nEOF\n",
            0755);
    ExecConfig e;
    e.command = "bin/plug"; // relative: resolved against the kubeconfig folder
    e.base_dir = t.path();
    e.api_version = k_v1;
    e.interactive_mode = "IfAvailable";
    e.where = "kubeconfig " + t.path() + "/kc: users[u].user.exec";
    e.args = {"--flag", "two words"};
    e.env = {{"FROM_KUBECONFIG", "yes"}};
    return e;
}

Environment base_env() {
    Environment e;
    e.vars = {{"PATH", "/usr/bin:/bin"}};
    return e;
}

ExecIo quiet_io() {
    ExecIo io;
    io.stderr_fd = -1;
    io.timeout_ms = 10000;
    return io;
}

} // namespace

TEST_CASE("exec plugin: token reply, inputs passed", "[kube][exec]") {
    TempDir t;
    auto e = plugin(t, R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
                       R"("status":{"token":"tok-1"}})");
    ClusterConfig c;
    c.server = "https://h:6443";
    c.ca_pem = "CA";
    auto cred = run_exec_plugin(e, c, base_env(), quiet_io());
    REQUIRE(cred.ok());
    CHECK(cred->token == "tok-1");
    CHECK_FALSE(cred->expiry);
    CHECK(t.read("args") == "--flag two words ");
    CHECK(t.read("env") == "yes");
    auto info = doc::parse_one(t.read("info"), "info");
    REQUIRE(info.ok());
    CHECK(*info == doc::Value::parse(
                       R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
                       R"("spec":{"interactive":false}})"));

    e.provide_cluster_info = true;
    REQUIRE(run_exec_plugin(e, c, base_env(), quiet_io()).ok());
    auto with_cluster = doc::parse_one(t.read("info"), "info");
    CHECK(doc::get_string(*with_cluster, "spec.cluster.server") == "https://h:6443");
    CHECK(doc::get_string(*with_cluster, "spec.cluster.certificate-authority-data") ==
          util::base64_encode("CA"));
}

TEST_CASE("exec plugin: client certificate reply with expiry", "[kube][exec]") {
    TempDir t;
    auto e = plugin(
        t,
        R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":)"
        R"({"clientCertificateData":"CERT","clientKeyData":"KEY",)"
        R"("expirationTimestamp":"2030-01-02T03:04:05Z"}})");
    e.api_version = "client.authentication.k8s.io/v1beta1";
    auto cred = run_exec_plugin(e, {}, base_env(), quiet_io());
    REQUIRE(cred.ok());
    CHECK(cred->client_cert_pem == "CERT");
    CHECK(cred->client_key_pem == "KEY");
    REQUIRE(cred->expiry);
    CHECK(std::chrono::system_clock::to_time_t(*cred->expiry) == 1893553445);
    CHECK_FALSE(cred->expired(std::chrono::system_clock::from_time_t(1893553444)));
    CHECK(cred->expired(std::chrono::system_clock::from_time_t(1893553445)));
}

TEST_CASE("exec plugin: bad replies are clear errors", "[kube][exec]") {
    TempDir t;
    const std::string where = "kubeconfig " + t.path() + "/kc: users[u].user.exec: ";
    struct Case {
        const char* reply;
        std::string message;
    };
    std::vector<Case> cases = {
        {"not json", "\"bin/plug\" did not print an ExecCredential as JSON (got \"not json\")"},
        {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}})",
         "\"bin/plug\" replied with apiVersion \"client.authentication.k8s.io/v1beta1\", but the "
         "kubeconfig asks "
         "for \"client.authentication.k8s.io/v1\""},
        {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Status"})",
         "\"bin/plug\" replied with kind \"Status\", not ExecCredential"},
        {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})",
         "\"bin/plug\" replied without a status"},
        {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
         "\"bin/plug\" returned neither a token nor a client certificate"},
        {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientKeyData":"K"}})",
         "\"bin/plug\" returned only one of clientCertificateData and clientKeyData; both are "
         "needed"},
        {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x",)"
         R"("expirationTimestamp":"tomorrow"}})",
         "\"bin/plug\" returned expirationTimestamp \"tomorrow\", which is not an RFC 3339 time"},
    };
    for (const auto& c : cases) {
        auto cred = run_exec_plugin(plugin(t, c.reply), {}, base_env(), quiet_io());
        REQUIRE_FALSE(cred.ok());
        CHECK(cred.error().kind == ErrorKind::Config);
        CHECK(cred.error().code == "ExecPluginBadReply");
        CHECK(cred.error().message == where + c.message);
    }
}

TEST_CASE("exec plugin: missing command shows the installHint", "[kube][exec]") {
    TempDir t;
    ExecConfig e = plugin(t, "{}");
    e.command = "no-such-plugin-xyz"; // bare name: looked up in the Environment's PATH
    e.install_hint = "install it with: apt install no-such-plugin-xyz\n";
    auto cred = run_exec_plugin(e, {}, base_env(), quiet_io());
    REQUIRE_FALSE(cred.ok());
    CHECK(cred.error().kind == ErrorKind::Config);
    CHECK(cred.error().code == "ExecPluginNotFound");
    CHECK(cred.error().message == e.where + ": executable \"no-such-plugin-xyz\" not found");
    CHECK(cred.error().hint == "install it with: apt install no-such-plugin-xyz");

    Environment env = base_env();
    env.vars["PATH"] = "/nonexistent:" + t.path() + "/bin:/usr/bin:/bin";
    e.command = "plug"; // found through PATH
    auto found = run_exec_plugin(e, {}, env, quiet_io());
    REQUIRE_FALSE(found.ok()); // runs, but "{}" is no ExecCredential
    CHECK(found.error().code == "ExecPluginBadReply");
}

TEST_CASE("exec plugin: failures and interactive mode", "[kube][exec]") {
    TempDir t;
    auto e = plugin(t, "{}", "echo 'login required: run plug login' >&2\nexit 3\n");
    auto cred = run_exec_plugin(e, {}, base_env(), quiet_io());
    REQUIRE_FALSE(cred.ok());
    CHECK(cred.error().code == "ExecPluginFailed");
    CHECK(cred.error().message ==
          e.where + ": \"bin/plug\" exited with status 3: login required: run plug login");

    auto slow = plugin(t, "{}", "sleep 5\n");
    ExecIo io = quiet_io();
    io.timeout_ms = 200;
    auto timed_out = run_exec_plugin(slow, {}, base_env(), io);
    REQUIRE_FALSE(timed_out.ok());
    CHECK(timed_out.error().message == e.where + ": \"bin/plug\" did not finish within 200ms");

    auto always = plugin(
        t,
        R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}})");
    always.interactive_mode = "Always";
    std::filesystem::remove(t.path() + "/info");
    auto refused = run_exec_plugin(always, {}, base_env(), quiet_io());
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == "ExecPluginInteractive");
    CHECK(t.read("info").empty()); // not run

    ExecIo tty = quiet_io();
    tty.stdin_is_terminal = true;
    REQUIRE(run_exec_plugin(always, {}, base_env(), tty).ok());
    CHECK(doc::parse_one(t.read("info"), "i")->at("spec").at("interactive") == true);
    always.interactive_mode = "Never";
    REQUIRE(run_exec_plugin(always, {}, base_env(), tty).ok());
    CHECK(doc::parse_one(t.read("info"), "i")->at("spec").at("interactive") == false);
}

TEST_CASE("exec plugin: output and time are bounded", "[kube][exec]") {
    TempDir t;
    // A plugin that never stops writing: killed once past the limit, in bounded time.
    auto flood = plugin(t, "{}", "yes 0123456789abcdef\n");
    ExecIo io = quiet_io();
    io.max_output_bytes = 64 * 1024;
    auto start = std::chrono::steady_clock::now();
    auto flooded = run_exec_plugin(flood, {}, base_env(), io);
    REQUIRE_FALSE(flooded.ok());
    CHECK(flooded.error().code == "ExecPluginFailed");
    CHECK(flooded.error().message ==
          flood.where + ": \"bin/plug\" wrote more than 65536 bytes; it was stopped and its "
                        "output not read");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));

    // The same on a captured stderr.
    auto noisy = plugin(t, "{}", "yes 0123456789abcdef >&2\n");
    REQUIRE_FALSE(run_exec_plugin(noisy, {}, base_env(), io).ok());

    // With the terminal too, a plugin that never ends is stopped.
    auto stuck = plugin(t, "{}", "sleep 5\n");
    ExecIo tty = quiet_io();
    tty.stdin_is_terminal = true;
    tty.interactive_timeout_ms = 200;
    auto timed_out = run_exec_plugin(stuck, {}, base_env(), tty);
    REQUIRE_FALSE(timed_out.ok());
    CHECK(timed_out.error().message == stuck.where + ": \"bin/plug\" did not finish within 200ms");
    CHECK(ExecIo{}.max_output_bytes == 1u << 20);
}

TEST_CASE("RFC 3339 times", "[kube][exec]") {
    using std::chrono::system_clock;
    CHECK(system_clock::to_time_t(*parse_rfc3339("1970-01-01T00:00:10Z")) == 10);
    CHECK(system_clock::to_time_t(*parse_rfc3339("1970-01-01T02:00:10.123456+02:00")) == 10);
    CHECK(system_clock::to_time_t(*parse_rfc3339("1969-12-31T23:00:10-01:00")) == 10);
    CHECK_FALSE(parse_rfc3339("1970-01-01 00:00:10Z"));
    CHECK_FALSE(parse_rfc3339("1970-01-01T00:00:10"));
    CHECK_FALSE(parse_rfc3339(""));
}
