#include "common/cli/flags.h"

#include <catch2/catch.hpp>

using namespace ichor;

namespace {
Result<cli::TalosOptions> parse(std::vector<std::string> args) {
    cxxopts::Options opts("t");
    cli::add_talos_flags(opts, true);
    args.insert(args.begin(), "t");
    auto r = cli::parse_args(opts, args);
    if (!r) {
        return r.error();
    }
    return cli::to_talos_options(*r, true);
}
talos::TalosContext context(std::vector<std::string> endpoints, std::vector<std::string> nodes) {
    talos::TalosContext c;
    c.name = "prod";
    c.endpoints = std::move(endpoints);
    c.nodes = std::move(nodes);
    return c;
}
} // namespace

TEST_CASE("the endpoints flag: the first endpoint given reaches every node", "[cli][talos]") {
    auto t = parse({"--endpoints", "10.0.0.1,10.0.0.2:50001"});
    REQUIRE(t.ok());
    REQUIRE(t->endpoints.size() == 2);
    CHECK(t->endpoints[1].port == 50001);
    auto ep = t->endpoint_for(context({"10.0.0.9"}, {"10.0.0.5"}));
    REQUIRE(ep.ok());
    REQUIRE(ep->has_value());
    CHECK((*ep)->text == "10.0.0.1");
}

TEST_CASE("without --endpoints the context decides: through its endpoint when it names nodes",
          "[cli][talos]") {
    auto t = parse({});
    REQUIRE(t.ok());
    auto with_nodes = t->endpoint_for(context({"10.0.0.9", "10.0.0.8"}, {"10.0.0.5"}));
    REQUIRE(with_nodes.ok());
    REQUIRE(with_nodes->has_value());
    CHECK((*with_nodes)->text == "10.0.0.9");
    auto no_nodes = t->endpoint_for(context({"10.0.0.9"}, {}));
    REQUIRE(no_nodes.ok());
    CHECK_FALSE(no_nodes->has_value());
    auto no_endpoints = t->endpoint_for(context({}, {"10.0.0.5"}));
    REQUIRE(no_endpoints.ok());
    CHECK_FALSE(no_endpoints->has_value());

    auto direct = parse({"--direct"});
    REQUIRE(direct.ok());
    auto d = direct->endpoint_for(context({"10.0.0.9"}, {"10.0.0.5"}));
    REQUIRE(d.ok());
    CHECK_FALSE(d->has_value());

    auto bad = t->endpoint_for(context({"[::1"}, {"10.0.0.5"}));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("talosconfig context \"prod\": endpoints:") == 0);
}

TEST_CASE("the endpoints flag refuses a bad address and --direct beside it", "[cli][talos]") {
    auto bad = parse({"--endpoints", "10.0.0.1:notaport"});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().kind == ErrorKind::Usage);
    CHECK(bad.error().message.find("--endpoints: ") == 0);
    auto both = parse({"--endpoints", "10.0.0.1", "--direct"});
    REQUIRE_FALSE(both.ok());
    CHECK(both.error().message == "give --endpoints or --direct, not both");
}
