#include "common/cni/pinned.h"
#include "common/util/files.h"

#include <catch2/catch.hpp>

#include <set>

using namespace ichor;

TEST_CASE("the compiled-in data file parses and pins chart 1.19.6", "[cni][pinned]") {
    auto p = cni::parse_pinned(cni::pinned_text(), "deploy/cilium/ichor-cilium.yaml");
    REQUIRE(p.ok());
    CHECK(p->chart_name == "cilium");
    CHECK(p->chart_version == "1.19.6");
    CHECK(cni::pinned().chart_version == "1.19.6");
    CHECK(cni::pinned().compared.size() == p->compared.size());
    // The build embeds the repository's file, not a copy that could drift from it.
    auto file = util::read_file(std::string(ICHOR_SOURCE_DIR) + "/deploy/cilium/ichor-cilium.yaml");
    REQUIRE(file.ok());
    CHECK(*file == cni::pinned_text());
}

TEST_CASE("every owned value has a reason and is compared", "[cni][pinned]") {
    const auto& p = cni::pinned();
    REQUIRE(p.owned.size() >= 6);
    for (const auto& o : p.owned) {
        INFO(o.path);
        CHECK_FALSE(o.reason.empty());
        CHECK(p.compared_at(o.path) != nullptr);
    }
    CHECK(p.owned_at("ipam.mode")->value == "kubernetes");
    CHECK(p.owned_at("cgroup.autoMount.enabled")->value == false);
    CHECK(p.owned_at("hubble.relay.enabled") == nullptr);
}

TEST_CASE("every row names a chart template and the live field", "[cni][pinned]") {
    std::set<std::string> templates;
    for (const auto& c : cni::pinned().compared) {
        INFO(c.path);
        CHECK(c.template_file.rfind("templates/", 0) == 0);
        CHECK_FALSE(c.field().empty());
        templates.insert(c.template_file);
    }
    CHECK(templates.count("templates/cilium-configmap.yaml") == 1);
    CHECK(templates.count("templates/hubble-relay/deployment.yaml") == 1);
    const auto* relay = cni::pinned().compared_at("hubble.relay.enabled");
    REQUIRE(relay != nullptr);
    CHECK(relay->kind == cni::LiveKind::Deployment);
    CHECK(relay->requires_true == std::vector<std::string>{"hubble.enabled"});
    CHECK(relay->field() == "Deployment hubble-relay (present or not)");
    CHECK(cni::pinned().compared_at("ipam.mode")->field() == "ConfigMap cilium-config data.ipam");
}

TEST_CASE("a malformed data file is refused naming the row", "[cni][pinned]") {
    auto bad = [](const std::string& text) {
        auto p = cni::parse_pinned(text, "pin.yaml");
        REQUIRE_FALSE(p.ok());
        CHECK(p.error().kind == ErrorKind::Internal);
        return p.error().message;
    };
    const std::string head = "chart: {name: cilium, version: 1.0.0}\n";
    CHECK(bad("chart: {name: cilium}\ncompared: []\n") ==
          "pin.yaml: chart.name and chart.version are required");
    CHECK(bad(head + "compared: []\n") == "pin.yaml: compared: no rows");
    CHECK(bad(head + "compared: [{path: a, template: t, live: {kind: nope}}]\n") ==
          "pin.yaml: compared[0] (a): unknown live.kind \"nope\"");
    CHECK(
        bad(head + "compared: [{path: a, template: t, live: {kind: config}, format: string}]\n") ==
        "pin.yaml: compared[0] (a): live.key missing");
    CHECK(bad(head + "compared: [{path: a, template: t, live: {kind: config, key: k}}]\n") ==
          "pin.yaml: compared[0] (a): unknown format \"\"");
    CHECK(bad(head + "owned: [{path: a, value: 1}]\ncompared: [{path: a, template: t, live: "
                     "{kind: init, name: n}}]\n") ==
          "pin.yaml: owned entry \"a\": path, value and reason are required");
}

TEST_CASE("docs/cni.md lists every compared path and owned value", "[cni][pinned]") {
    auto text = util::read_file(std::string(ICHOR_SOURCE_DIR) + "/docs/cni.md");
    REQUIRE(text.ok());
    for (const auto& c : cni::pinned().compared) {
        INFO(c.path);
        CHECK(text->find("| `" + c.path + "` |") != std::string::npos);
    }
}
