// The stage discovery add (common/stages/discovery.h) over a fake TalosCluster store and a fake
// probe: the merge patch and its idempotence, the refusals before the probe, and what is said for
// a machine in maintenance mode, one that does not answer, and one that runs a configuration
// (this cluster's PKI, another cluster's, or unknown).
#include "common/cli/errors.h"
#include "common/stages/discovery.h"
#include "test_plan_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {

// One TalosCluster "prod" in ichor-system; merge_patch applies RFC 7386 and checks the
// resourceVersion the patch carries, as the apiserver does.
class FakeClusters final : public stages::IchorObjects {
  public:
    Value cluster;
    std::vector<Value> patches;
    bool conflict = false;

    FakeClusters() {
        cluster["apiVersion"] = "ichor.maesh.dev/v1alpha1";
        cluster["kind"] = "TalosCluster";
        cluster["metadata"] =
            Value{{"name", "prod"}, {"namespace", m_ns}, {"resourceVersion", "7"}};
        cluster["spec"]["discovery"]["addresses"] = Value::array({"10.0.0.31", "10.0.1.0/24"});
    }
    [[nodiscard]] const std::string& ns() const override { return m_ns; }
    Result<std::vector<Value>> list(std::string_view, const std::string&) override {
        return std::vector<Value>{};
    }
    Result<Value> get(std::string_view plural, const std::string& ns,
                      const std::string& name) override {
        if (plural != "talosclusters" || ns != m_ns || name != "prod") {
            return make_error(ErrorKind::Config, "not found", "", "NotFound");
        }
        return cluster;
    }
    Result<Value> create(std::string_view, const std::string&, const Value&) override {
        FAIL("discovery add creates nothing");
        return Value();
    }
    Result<Value> merge_patch(std::string_view plural, const std::string& name,
                              const Value& patch) override {
        REQUIRE(plural == "talosclusters");
        REQUIRE(name == "prod");
        patches.push_back(patch);
        if (conflict || doc::get_string(patch, "metadata.resourceVersion") !=
                            doc::get_string(cluster, "metadata.resourceVersion")) {
            return make_error(ErrorKind::Config, "the object has been modified", "", "Conflict");
        }
        cluster.merge_patch(patch);
        cluster["metadata"]["resourceVersion"] = "8";
        return cluster;
    }
    Result<Value> remove(std::string_view, const std::string&, const std::string&) override {
        FAIL("discovery add deletes nothing");
        return Value();
    }

  private:
    std::string m_ns = "ichor-system";
};

struct Run {
    FakeClusters objects;
    test::PlanFixture fx;
    Value probed; // what the probe answers
    int probes = 0;
    doc::ResourceList list;

    stages::Outcome add(const std::string& text, bool with_bundle = true) {
        auto a = talos::parse_address(text);
        REQUIRE(a.ok());
        stages::DiscoveryAddOptions o;
        o.objects = &objects;
        o.cluster = "prod";
        o.address = *a;
        o.probe = [this](const talos::Address&, Value&) {
            ++probes;
            return probed;
        };
        o.bundle = with_bundle ? &fx.bundle : nullptr;
        o.talosconfig = "tc";
        return stages::discovery_add(list, o);
    }
    [[nodiscard]] std::vector<std::string> codes() const {
        std::vector<std::string> out;
        for (const auto& r : list.results) {
            out.push_back(r["tags"].value(std::string(doc::k_tag_code), ""));
        }
        return out;
    }
    [[nodiscard]] std::string message(size_t i) const {
        return list.results.at(i)["message"].get<std::string>();
    }
};

Value maintenance(const std::string& address) {
    Value v = Value::object();
    v["apiVersion"] = std::string(doc::k_adopt_api);
    v["kind"] = "Inspection";
    v["spec"]["address"] = address;
    v["status"]["mode"] = "maintenance";
    return v;
}

} // namespace

TEST_CASE("discovery add: appends the address with a merge patch that carries the "
          "resourceVersion",
          "[stages][discovery]") {
    Run r;
    r.probed = maintenance("10.0.0.32");
    stages::Outcome out = r.add("10.0.0.32");
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 1);
    CHECK(cli::exit_code(out) == 0);
    REQUIRE(r.objects.patches.size() == 1);
    CHECK(r.objects.patches[0] ==
          Value::parse(R"({"metadata":{"resourceVersion":"7"},"spec":{"discovery":{"addresses":)"
                       R"(["10.0.0.31","10.0.1.0/24","10.0.0.32"]}}})"));
    CHECK(r.codes() == std::vector<std::string>{"Added", "Maintenance"});
    CHECK(r.message(0) == "10.0.0.32: added to spec.discovery.addresses of TalosCluster prod");
    CHECK(r.message(1) == "10.0.0.32: is in maintenance mode: discovery records it as a pending "
                          "TalosMachine at its next pass; approve it then");
    REQUIRE(r.list.items.size() == 2);
    CHECK(r.list.items[0]["kind"] == "TalosCluster");
    CHECK(r.list.items[0]["spec"]["discovery"]["addresses"].size() == 3);
    CHECK(r.list.items[1]["kind"] == "Inspection");
}

TEST_CASE("discovery add: an address already listed, however written, is not written again",
          "[stages][discovery]") {
    Run r;
    r.probed = maintenance("10.0.0.31");
    stages::Outcome out = r.add("10.0.0.31:50000");
    REQUIRE_FALSE(out.error);
    CHECK(out.skipped == 1);
    CHECK(cli::exit_code(out) == 0);
    CHECK(r.objects.patches.empty());
    CHECK(r.codes() == std::vector<std::string>{"AlreadyListed", "Maintenance"});
    CHECK(r.message(0) == "10.0.0.31:50000: already in spec.discovery.addresses of TalosCluster "
                          "prod; nothing was written");
    // Another port is another address, recorded with its port.
    Run p;
    p.probed = maintenance("10.0.0.31");
    REQUIRE_FALSE(p.add("10.0.0.31:50001").error);
    REQUIRE(p.objects.patches.size() == 1);
    CHECK(p.objects.patches[0]["spec"]["discovery"]["addresses"].back() == "10.0.0.31:50001");
    CHECK(stages::discovery_entry(*talos::parse_address("[fd00::1]:50001")) == "[fd00::1]:50001");
    CHECK(stages::discovery_entry(*talos::parse_address("[fd00::1]")) == "fd00::1");
}

TEST_CASE("discovery add: a missing cluster or a conflicting write stops before the probe",
          "[stages][discovery]") {
    Run r;
    r.objects.cluster["metadata"]["name"] = "other";
    auto missing = talos::parse_address("10.0.0.32");
    stages::DiscoveryAddOptions o;
    o.objects = &r.objects;
    o.cluster = "staging";
    o.address = *missing;
    o.probe = [&r](const talos::Address&, Value&) {
        ++r.probes;
        return Value();
    };
    stages::Outcome out = stages::discovery_add(r.list, o);
    REQUIRE(out.error);
    CHECK(out.error->code == "ClusterNotFound");
    CHECK(out.error->message == "TalosCluster \"staging\" not found in namespace \"ichor-system\"");
    CHECK(cli::exit_code(out) == 3);

    Run c;
    c.objects.conflict = true;
    stages::Outcome conflict = c.add("10.0.0.32");
    REQUIRE(conflict.error);
    CHECK(conflict.error->code == "Conflict");
    CHECK(conflict.error->message.starts_with("adding 10.0.0.32 to TalosCluster prod: "));
    CHECK(c.probes == 0);
    CHECK(r.probes == 0);
}

TEST_CASE("discovery add: a configured machine names the command that applies, and the other",
          "[stages][discovery]") {
    SECTION("this cluster's PKI: adopt --add-machine") {
        Run r;
        r.probed = r.fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
        r.probed["status"].erase("trust");
        REQUIRE_FALSE(r.add("10.0.0.21").error);
        CHECK(r.codes() == std::vector<std::string>{"Added", "ThisCluster"});
        CHECK(r.message(1) ==
              "10.0.0.21: runs a configuration, so discovery does not enrol it; it carries the "
              "PKI of cluster prod: add it with --add-machine; hint: kubectl ichor adopt "
              "--cluster prod --add-machine 10.0.0.21 --talosconfig tc (kubectl ichor reclaim is "
              "for a machine of another cluster)");
    }
    SECTION("another cluster's: reclaim") {
        Run r;
        Value other = Value::object();
        other["apiVersion"] = std::string(doc::k_adopt_api);
        other["kind"] = "Inspection";
        other["spec"]["address"] = "10.0.0.22";
        other["status"]["mode"] = "configured";
        other["status"]["tls"]["outcome"] = "unknownAuthority";
        r.probed = other;
        REQUIRE_FALSE(r.add("10.0.0.22").error);
        CHECK(r.codes() == std::vector<std::string>{"Added", "OtherCluster"});
        CHECK(r.message(1) ==
              "10.0.0.22: runs a configuration, so discovery does not enrol it; another cluster "
              "configured it: reset and add it with reclaim; hint: kubectl ichor reclaim "
              "10.0.0.22 --talosconfig FILE --cluster prod (kubectl ichor adopt --add-machine "
              "is for a machine of this cluster's PKI)");
    }
    SECTION("no bundle: both commands, and when each applies") {
        Run r;
        r.probed = r.fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
        REQUIRE_FALSE(r.add("10.0.0.21", false).error);
        CHECK(r.codes() == std::vector<std::string>{"Added", "Configured"});
        CHECK(r.message(1) ==
              "10.0.0.21: runs a configuration, so discovery does not enrol it (the trust check "
              "could not tell whose it is); kubectl ichor adopt --cluster prod --add-machine "
              "10.0.0.21 --talosconfig tc applies when it carries this cluster's PKI (its "
              "cluster ID and Talos API CA), no reset; kubectl ichor reclaim 10.0.0.21 "
              "--talosconfig FILE --cluster prod applies when another cluster configured it "
              "(with that cluster's talosconfig; a reset, typed UUID)");
    }
}

TEST_CASE("discovery add: a machine that does not answer is a warning, the address stays",
          "[stages][discovery]") {
    Run r;
    Value gone = maintenance("10.0.0.40");
    gone["status"]["mode"] = "unreachable";
    r.probed = gone;
    stages::Outcome out = r.add("10.0.0.40");
    REQUIRE_FALSE(out.error);
    CHECK(cli::exit_code(out) == 0);
    CHECK(r.codes() == std::vector<std::string>{"Added", "Unreachable"});
    CHECK(r.message(1) == "10.0.0.40: did not answer; discovery probes it at each pass");
    CHECK(r.list.results[1]["severity"] == "warning");
}
