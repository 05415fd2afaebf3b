#include "common/talos/talosconfig.h"
#include "common/util/strings.h"
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace ichor;
using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;
namespace fs = std::filesystem;

namespace {

std::string b64(const char* pem) {
    return util::base64_encode(pem);
}

// A talosconfig with a good context "prod", a reader context whose key is someone else's, and
// a context with no credentials at all.
std::string sample() {
    return "context: prod\n"
           "contexts:\n"
           "  prod:\n"
           "    endpoints: [10.0.0.11, \"10.0.0.12:50001\"]\n"
           "    nodes: [10.0.0.21]\n"
           "    ca: " +
           b64(fx::k_ca_crt) +
           "\n"
           "    crt: " +
           b64(fx::k_client_crt) +
           "\n"
           "    key: " +
           b64(fx::k_client_key) +
           "\n"
           "  mismatched:\n"
           "    endpoints: [10.0.0.11]\n"
           "    ca: " +
           b64(fx::k_ca_crt) +
           "\n"
           "    crt: " +
           b64(fx::k_server_crt) +
           "\n"
           "    key: " +
           b64(fx::k_client_key) +
           "\n"
           "  empty:\n"
           "    endpoints: []\n";
}

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("ichor-talos-test-" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& rel, const std::string& text) const {
        fs::path p = path / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p.string();
    }
};

} // namespace

TEST_CASE("a talosconfig parses into contexts with PEM credentials", "[talos]") {
    auto cfg = parse_talosconfig(sample(), "/tc");
    REQUIRE(cfg.ok());
    CHECK(cfg->current == "prod");
    REQUIRE(cfg->contexts.size() == 3);
    CHECK(cfg->contexts[2].name == "empty");
    auto ctx = select_context(*cfg, "");
    REQUIRE(ctx.ok());
    CHECK(ctx->name == "prod");
    CHECK(ctx->endpoints == std::vector<std::string>{"10.0.0.11", "10.0.0.12:50001"});
    CHECK(ctx->nodes == std::vector<std::string>{"10.0.0.21"});
    CHECK(ctx->ca_pem == fx::k_ca_crt);
    CHECK(ctx->crt_pem == fx::k_client_crt);
    CHECK(ctx->key_pem.find("-----BEGIN PRIVATE KEY-----") == 0);
}

TEST_CASE("context errors name the file, the context and the field", "[talos]") {
    auto cfg = parse_talosconfig(sample(), "/tc");
    REQUIRE(cfg.ok());

    auto missing = select_context(*cfg, "staging");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().kind == ErrorKind::Config);
    CHECK(missing.error().message ==
          "/tc: no context \"staging\" (it has prod, mismatched, empty)");

    auto empty = select_context(*cfg, "empty");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().message == "/tc: context \"empty\": ca: missing");

    auto mismatched = select_context(*cfg, "mismatched");
    REQUIRE_FALSE(mismatched.ok());
    CHECK(mismatched.error().message ==
          "/tc: context \"mismatched\": key: the key does not belong to the certificate");

    auto bare = parse_talosconfig("context: x\n", "/bare");
    REQUIRE(bare.ok());
    CHECK(select_context(*bare, "").error().message == "/bare: no context \"x\" (it has none)");

    cfg->current.clear();
    auto none = select_context(*cfg, "");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message == "/tc: no current context (the file sets no `context:`)");
}

TEST_CASE("bad base64 and bad PEM are reported per field", "[talos]") {
    auto bad_b64 = parse_talosconfig("context: a\ncontexts:\n  a:\n    ca: '%%%'\n", "/tc");
    REQUIRE_FALSE(bad_b64.ok());
    CHECK(bad_b64.error().kind == ErrorKind::Config);
    CHECK(bad_b64.error().message == "/tc: context \"a\": ca: not valid base64");

    std::string bad_pem = "context: a\ncontexts:\n  a:\n"
                          "    ca: " +
                          b64(fx::k_ca_crt) +
                          "\n"
                          "    crt: " +
                          util::base64_encode("not a certificate") +
                          "\n"
                          "    key: " +
                          b64(fx::k_client_key) + "\n";
    auto cfg = parse_talosconfig(bad_pem, "/tc");
    REQUIRE(cfg.ok());
    auto ctx = select_context(*cfg, "a");
    REQUIRE_FALSE(ctx.ok());
    CHECK(ctx.error().message ==
          "/tc: context \"a\": crt: not a PEM certificate: no PEM block found");

    std::string bad_key = "context: a\ncontexts:\n  a:\n"
                          "    ca: " +
                          b64(fx::k_ca_crt) +
                          "\n"
                          "    crt: " +
                          b64(fx::k_client_crt) +
                          "\n"
                          "    key: " +
                          b64(fx::k_ca_crt) + "\n";
    auto key_cfg = parse_talosconfig(bad_key, "/tc");
    REQUIRE(key_cfg.ok());
    auto key_ctx = select_context(*key_cfg, "a");
    REQUIRE_FALSE(key_ctx.ok());
    CHECK(key_ctx.error().message.rfind("/tc: context \"a\": key: not a PEM private key: ", 0) ==
          0);

    auto not_list = parse_talosconfig("contexts:\n  a:\n    endpoints: 10.0.0.1\n", "/tc");
    REQUIRE_FALSE(not_list.ok());
    CHECK(not_list.error().message == "/tc: context \"a\": endpoints: not a list");

    auto not_yaml = parse_talosconfig("contexts: [\n", "/tc");
    REQUIRE_FALSE(not_yaml.ok());
    CHECK(not_yaml.error().kind == ErrorKind::Config);
}

TEST_CASE("the talosconfig is found as talosctl finds it", "[talos]") {
    TempDir dir;
    std::string home = (dir.path / "home").string();
    std::string in_home = dir.write("home/.talos/config", sample());
    std::string via_env = dir.write("env/talosconfig", sample());

    Environment env{{{"HOME", home}}};
    CHECK(*talosconfig_path("", env) == in_home);
    CHECK(*talosconfig_path("~/other", env) == home + "/other");

    env.vars["TALOSCONFIG"] = via_env;
    CHECK(*talosconfig_path("", env) == via_env);
    CHECK(*talosconfig_path("/explicit", env) == "/explicit");

    env.vars["TALOSCONFIG"] = (dir.path / "absent").string();
    CHECK(*talosconfig_path("", env) == in_home); // talosctl takes the first that exists

    env.vars["TALOS_HOME"] = (dir.path / "env").string();
    auto none = talosconfig_path("", env);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().kind == ErrorKind::Config);
    CHECK(none.error().message == "no talosconfig: none of " + (dir.path / "absent").string() +
                                      ", " + (dir.path / "env").string() +
                                      "/config, /var/run/secrets/talos.dev/config exists");

    auto loaded = load_talosconfig(via_env, env);
    REQUIRE(loaded.ok());
    CHECK(loaded->path == via_env);
    auto gone = load_talosconfig((dir.path / "nope").string(), env);
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.error().message ==
          "talosconfig " + (dir.path / "nope").string() + " does not exist");
}
