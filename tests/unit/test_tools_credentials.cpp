// kubectl ichor credentials' options (tools/credentials/credentials.cpp): every usage error,
// help, version, and a command line into Options.
#include "test_tools_support.h"
#include "tools/credentials/credentials.h"

#include <catch2/catch.hpp>

using namespace ichor;
using tools::credentials::parse_options;

namespace {
constexpr std::string_view k_verb = "credentials";
const cli::RunFn k_run = tools::credentials::run;

tools::credentials::Options parsed(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-credentials");
    auto p = parse_options(args);
    REQUIRE(p.ok());
    REQUIRE(p->options);
    return *p->options;
}
} // namespace

TEST_CASE("credentials: every usage error is one line and exit 2", "[tools][credentials]") {
    const std::string ttl = "--ttl must be a duration of at least 1m, e.g. 8760h";
    test::check_usage(k_run, k_verb, {}, "give exactly one cluster NAME",
                      "kubectl ichor credentials NAME");
    test::check_usage(k_run, k_verb, {"prod", "staging"}, "give exactly one cluster NAME",
                      "kubectl ichor credentials NAME");
    test::check_usage(k_run, k_verb, {"prod", "--ttl", "10s"}, ttl);
    test::check_usage(k_run, k_verb, {"prod", "--ttl", "59s"}, ttl);
    test::check_usage(k_run, k_verb, {"prod", "--ttl", "a year"}, ttl);
    test::check_usage(k_run, k_verb, {"prod", "--cluster", "prod"},
                      "Option \u2018cluster\u2019 does not exist", "see --help");
}

TEST_CASE("credentials: --help and --version", "[tools][credentials]") {
    test::check_help(k_run, k_verb,
                     "Write a talosconfig for a cluster from its secrets bundle: an os:admin "
                     "client certificate signed by the cluster's Talos API CA.");
    test::check_version(k_run, k_verb);
}

TEST_CASE("credentials: a command line fills the options", "[tools][credentials]") {
    auto o = parsed({"prod", "-n", "ops", "--secrets-bundle", "s.yaml", "--endpoint", "10.0.0.11",
                     "--endpoint", "10.0.0.12", "--role", "os:reader", "--role", "os:etcd:backup",
                     "--ttl", "1m", "--output-file", "tc-prod"});
    CHECK(o.kube.cluster == "prod");
    CHECK(o.kube.ns == "ops");
    CHECK(o.bundle.file == "s.yaml");
    CHECK(o.endpoints == std::vector<std::string>{"10.0.0.11", "10.0.0.12"});
    CHECK(o.roles == std::vector<std::string>{"os:reader", "os:etcd:backup"});
    CHECK(o.ttl_seconds == 60);
    CHECK(o.output_file == "tc-prod");

    auto d = parsed({"prod"});
    CHECK(d.roles == std::vector<std::string>{"os:admin"});
    CHECK(d.ttl_seconds == 8760LL * 3600);
    CHECK(d.output_file == "talosconfig-prod");
    CHECK(d.endpoints.empty());
    CHECK(d.bundle.from_secret());
}

TEST_CASE("credentials: --endpoints, the other tools' spelling, beside --endpoint",
          "[tools][credentials]") {
    auto o =
        parsed({"prod", "--endpoints", "10.0.0.11,10.0.0.12:50001", "--endpoint", "10.0.0.13"});
    CHECK(o.endpoints == std::vector<std::string>{"10.0.0.11", "10.0.0.12:50001", "10.0.0.13"});
    test::check_usage(k_run, k_verb, {"prod", "--endpoints", "https://10.0.0.11"},
                      "--endpoints: bad address \"https://10.0.0.11\": give a host or host:port, "
                      "not a URL");
    test::check_usage(k_run, k_verb, {"prod", "--endpoint", "10.0.0.11:0"},
                      "--endpoint: bad address \"10.0.0.11:0\": port 0 is out of range");
}
