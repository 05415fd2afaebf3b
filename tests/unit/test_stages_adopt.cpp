// The adoption's flow (common/stages/adopt.h) over fakes of every seam: the nodes (Inspections
// and configurations of the render's golden data), the Ichor objects in memory
// (test_stages_support.h), the cluster's Kubernetes reads, a clock that never sleeps and a
// reporter that records its lines. Refusals and backups come before the first write, writes and
// releases in their order, a rerun resumes, the reads go --concurrency at once, --plan writes
// nothing.
#include "common/cli/errors.h"
#include "common/stages/adopt.h"
#include "test_kube_support.h"
#include "test_plan_support.h"
#include "test_stages_support.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

using namespace ichor;
using doc::Value;

namespace {

using test::FakeClock;

class Lines final : public stages::Reporter {
  public:
    std::vector<std::string> lines; // "status: ...", "step: ...", "warning: ..."
    void status(std::string_view l) override { lines.push_back("status: " + std::string(l)); }
    void end_status() override {}
    void step(std::string_view l) override { lines.push_back("step: " + std::string(l)); }
    void warning(std::string_view l) override { lines.push_back("warning: " + std::string(l)); }
};

// The nodes: an Inspection and the configuration bytes of each address, and a log of the calls
// (shared with the objects' writes, so that their order can be told).
class FakeNodes final : public stages::AdoptNodes {
  public:
    test::PlanFixture& fx;
    std::vector<std::string>& log;
    std::map<std::string, Value> inspections; // host -> the Inspection (before trustcheck)
    std::map<std::string, std::string> raw;   // host -> the configuration as the node returns it
    std::vector<int> read_at_once;            // the concurrency of each configs_reader call
    std::optional<ichor::talos::Address> endpoint; // what reach gives every read
    std::vector<std::string> released_via; // each zero-drift read: the endpoint, or "direct"

    FakeNodes(test::PlanFixture& f, std::vector<std::string>& l) : fx(f), log(l) {}

    void add(const std::string& address, const std::string& host, const std::string& config) {
        Value v = fx.inspection(address, host, config);
        v["status"].erase("trust");
        inspections[address] = v;
        raw[address] = test::PlanFixture::raw_config(config);
    }

    [[nodiscard]] stages::InspectOptions
    reach(std::vector<ichor::talos::Address> a) const override {
        stages::InspectOptions io;
        io.addresses = std::move(a);
        io.concurrency = 4;
        io.endpoint = endpoint;
        return io;
    }
    stages::Outcome inspect(doc::ResourceList& list, const stages::InspectOptions& io) override {
        return stages::run_stage("inspect", list, [&] {
            stages::Outcome out;
            for (const auto& a : io.addresses) {
                log.push_back("inspect " + a.host);
                list.items.push_back(inspections.at(a.host));
                ++out.done;
            }
            return out;
        });
    }
    Result<bundle::Bundle> load_bundle(stages::BundleSource source, const Value* /*cluster*/,
                                       const stages::Warn& /*warn*/) override {
        log.push_back("bundle " + (source.file.empty() ? source.recover_from : source.file));
        return fx.bundle;
    }
    Result<std::vector<stages::DiscoveryMember>> members(const Value& /*inspection*/) override {
        std::vector<stages::DiscoveryMember> out;
        for (const auto& [address, v] : inspections) {
            out.push_back({doc::get_string(v, "status.identity.hostname"), {address}});
        }
        return out;
    }
    stages::ReadConfigs configs_reader() override {
        return [this](const std::vector<ichor::talos::Address>& addresses, int concurrency) {
            read_at_once.push_back(concurrency);
            std::vector<Result<std::string>> out;
            for (const auto& a : addresses) {
                log.push_back("read " + a.host);
                out.emplace_back(raw.at(a.host));
            }
            return out;
        };
    }
    stages::ReadNode read_node(const stages::InspectOptions& reach) override {
        released_via.push_back(reach.endpoint ? reach.endpoint->text : "direct");
        return [this](const ichor::talos::Address& a, Value& /*results*/) {
            log.push_back("check " + a.host);
            return inspections.at(a.host);
        };
    }
};

// The cluster's own Kubernetes API: a Ready Node per host, no CNI objects, the Ichor API served.
class FakeCluster final : public stages::ClusterReads {
  public:
    std::vector<Value> kube_nodes;

    void add_node(const std::string& host) { kube_nodes.push_back(test::ready_node(host)); }
    Result<cni::ClusterObjects> cni_objects() override {
        cni::ClusterObjects c;
        c.nodes = kube_nodes;
        return c;
    }
    Result<std::vector<Value>> nodes() override { return kube_nodes; }
    std::pair<bool, std::string> ichor_api() override { return {true, ""}; }
};

// One adoption's world, every seam a fake; `log` holds the node calls and the writes in order.
struct World {
    test::PlanFixture fx;
    std::vector<std::string> log;
    test::FakeObjects objects;
    FakeNodes nodes{fx, log};
    FakeCluster cluster;
    FakeClock clock;
    Lines report;
    kube::testing::TempDir dir;
    std::vector<std::string> consented; // what each consent was asked for
    bool consent = true;
    stages::AdoptOptions options;

    World() {
        options.backup_dir = dir.path() + "/backups";
        options.yes = true;
        options.node_check = false;
        options.concurrency = 4;
        objects.before_write = [this](const std::string& w) { log.push_back(w); };
    }

    stages::AdoptWorld world() {
        return {&objects,
                {},
                &cluster,
                &nodes,
                &clock,
                &report,
                [this](const std::string& what, const std::vector<std::string>&) -> Status {
                    consented.push_back(what);
                    if (!consent) {
                        return make_error(ErrorKind::Findings, "consent declined", "", "NoConsent");
                    }
                    return ok_status();
                }};
    }

    // The Ichor objects written, in order ("create talosmachines/prod-w-2", ...).
    [[nodiscard]] std::vector<std::string> writes() const { return objects.writes(); }

    [[nodiscard]] std::vector<std::string> logged(const std::string& prefix) const {
        std::vector<std::string> out;
        for (const auto& l : log) {
            if (l.starts_with(prefix)) {
                out.push_back(l);
            }
        }
        return out;
    }

    // Where in the log the first line starting with `prefix` is (log.size() when none).
    [[nodiscard]] std::size_t first(const std::string& prefix) const {
        for (std::size_t i = 0; i < log.size(); ++i) {
            if (log[i].starts_with(prefix)) {
                return i;
            }
        }
        return log.size();
    }
};

// Machines to add to "prod" (the render's golden cluster): a worker and a second worker.
struct Add : World {
    stages::MachinesToAdd in;

    Add() {
        fx.cluster["metadata"]["resourceVersion"] = "7";
        objects.add("talosclusters", fx.cluster);
        nodes.add("10.0.0.21", "prod-w-2", "w-1.13");
        nodes.add("10.0.0.22", "prod-w-3", "w-1.13");
        in.cluster = "prod";
        in.talos_cluster = fx.cluster;
        in.addresses = {"10.0.0.21", "10.0.0.22"};
    }

    stages::Outcome run(stages::Adopted& out) { return stages::adopt(in, options, world(), out); }
};

// A whole cluster that Ichor did not make, "lab-u" (cni unmanaged): two control planes and two
// workers, etcd healthy, a Ready Node each.
struct Whole : World {
    stages::ClusterToAdopt in;

    void add(const std::string& address, const std::string& host, const std::string& config) {
        nodes.add(address, host, config);
        cluster.add_node(host);
        in.nodes.push_back(*ichor::talos::parse_address(address));
    }

    Whole() {
        add("10.0.0.2", "u-cp-1", "cp-1.13-unmanaged");
        add("10.0.0.5", "u-cp-2", "cp-1.13-unmanaged");
        add("10.0.0.3", "u-w-1", "w-1.13-unmanaged");
        add("10.0.0.4", "u-w-2", "w-1.13-unmanaged");
        Value members = Value::array();
        for (const char* a : {"10.0.0.2", "10.0.0.5"}) {
            const Value& v = nodes.inspections.at(a);
            members.push_back(
                Value{{"id", "00000000000000" + std::to_string(members.size() + 1)},
                      {"hostname", doc::get_string(v, "status.identity.hostname")},
                      {"peerURLs", Value::array({"https://" + std::string(a) + ":2380"})}});
        }
        for (const char* a : {"10.0.0.2", "10.0.0.5"}) {
            nodes.inspections.at(a)["status"]["etcd"]["members"] = members;
            nodes.inspections.at(a)["status"]["etcd"]["status"]["memberID"] = "0000000000000001";
        }
        in.cluster = "lab-u";
        in.cni.cni_unmanaged = true;
    }

    stages::Outcome run(stages::Adopted& out) { return stages::adopt(in, options, world(), out); }
};

std::vector<std::string> codes(const doc::ResourceList& l) {
    std::vector<std::string> out;
    for (const auto& r : l.results) {
        out.push_back(r["tags"].value(std::string(vocab::k_tag_code), ""));
    }
    return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

std::string messages(const doc::ResourceList& l) {
    std::string out;
    for (const auto& r : l.results) {
        out += r.value("message", "") + "\n";
    }
    return out;
}

} // namespace

TEST_CASE("adopt --add-machine --plan: the plan, and nothing written", "[stages][adopt]") {
    Add a;
    a.options.plan_only = true;
    stages::Adopted out;
    stages::Outcome o = a.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    CHECK(o.done == 2);
    CHECK(out.write);
    CHECK(out.plan);
    CHECK(a.writes().empty());
    CHECK(a.consented.empty());
    CHECK(a.nodes.read_at_once.empty());
    CHECK_FALSE(std::filesystem::exists(a.options.backup_dir));
    int machines = 0;
    for (const auto& i : out.list.items) {
        machines += i.value("kind", "") == "TalosMachine";
    }
    CHECK(machines == 2);
}

TEST_CASE("adopt --plan of a whole cluster writes nothing", "[stages][adopt]") {
    Whole w;
    w.options.plan_only = true;
    stages::Adopted out;
    stages::Outcome o = w.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    CHECK(o.done == 4);
    CHECK(out.plan);
    CHECK(w.writes().empty());
    CHECK(w.consented.empty());
    CHECK_FALSE(std::filesystem::exists(w.options.backup_dir));
    // the bundle recovered from the first control plane, read-only
    CHECK(w.logged("bundle ") == std::vector<std::string>{"bundle 10.0.0.2"});
}

TEST_CASE("adopt --add-machine reads the nodes' configurations --concurrency at once, as hold "
          "apply does",
          "[stages][adopt]") {
    Add a;
    a.options.concurrency = 3;
    stages::Adopted out;
    stages::Outcome o = a.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    // one read of both nodes, through the loop reader the product runs, 3 at a time
    CHECK(a.nodes.read_at_once == std::vector<int>{3});
    CHECK(a.logged("read ") == std::vector<std::string>{"read 10.0.0.21", "read 10.0.0.22"});
    CHECK(o.done == 2);
    CHECK(cli::exit_code(o) == 0);
}

TEST_CASE("adopt: every refusal comes before the first write", "[stages][adopt]") {
    SECTION("every machine refused: the plan is shown, nothing is read again or written") {
        Add a;
        for (auto& [address, v] : a.nodes.inspections) {
            v["status"]["mode"] = "maintenance";
        }
        stages::Adopted out;
        stages::Outcome o = a.run(out);
        INFO(messages(out.list));
        REQUIRE_FALSE(o.error); // the plan's own refusal, a result: exit 1
        CHECK(o.done == 0);
        CHECK(o.stopped == 2);
        CHECK(cli::exit_code(o) == 1);
        CHECK(has(codes(out.list), "NothingWritten"));
        CHECK(out.write);
        CHECK(out.plan);
        CHECK(a.consented.empty());
        CHECK(a.writes().empty());
        CHECK(a.logged("read ").empty());
        CHECK_FALSE(std::filesystem::exists(a.options.backup_dir));
    }
    SECTION("one machine refused: the other is written and released, the run is partial") {
        Add a;
        a.nodes.inspections.at("10.0.0.22")["status"]["mode"] = "maintenance";
        stages::Adopted out;
        stages::Outcome o = a.run(out);
        INFO(messages(out.list));
        REQUIRE_FALSE(o.error);
        CHECK(o.done == 1);
        CHECK(o.stopped == 1);
        CHECK(cli::exit_code(o) == 5);
        CHECK(has(codes(out.list), "Maintenance"));
        for (const auto& w : a.writes()) {
            CHECK(w.find("prod-w-3") == std::string::npos);
        }
    }
    SECTION("consent declined: nothing read again, nothing written") {
        Whole w;
        w.consent = false;
        stages::Adopted out;
        stages::Outcome o = w.run(out);
        REQUIRE(o.error);
        CHECK(o.error->code == "NoConsent");
        CHECK(w.consented.size() == 1);
        CHECK(w.consented[0].starts_with("adopt cluster lab-u: create the bundle Secret"));
        CHECK(w.writes().empty());
        CHECK(w.logged("read ").empty());
        CHECK_FALSE(out.write);
    }
    SECTION("a node that cannot be read again: nothing written, no backup") {
        Whole w;
        w.nodes.raw.at("10.0.0.4") = "changed: true\n";
        stages::Adopted out;
        stages::Outcome o = w.run(out);
        REQUIRE(o.error);
        CHECK(o.error->code == "StalePlan");
        CHECK(w.writes().empty());
        CHECK_FALSE(std::filesystem::exists(w.options.backup_dir));
    }
}

TEST_CASE("adopt: each node's configuration is backed up before the first write",
          "[stages][adopt]") {
    Whole w;
    std::vector<std::string> at_first_write;
    auto log = w.objects.before_write;
    w.objects.before_write = [&](const std::string& what) {
        if (at_first_write.empty() && std::filesystem::exists(w.options.backup_dir)) {
            for (const auto& e : std::filesystem::directory_iterator(w.options.backup_dir)) {
                at_first_write.push_back(e.path().filename().string());
            }
        }
        at_first_write.push_back("-");
        log(what);
    };
    stages::Adopted out;
    stages::Outcome o = w.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    // four backups, then the first write
    REQUIRE(at_first_write.size() > 4);
    CHECK(at_first_write[4] == "-");
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(at_first_write[i] != "-");
    }
    CHECK(w.first("read ") < w.first("create "));
}

TEST_CASE("adopt a whole cluster: the writes in order, control planes released one at a time, "
          "then the workers in waves",
          "[stages][adopt]") {
    Whole w;
    w.in.parallel = 2;
    stages::Adopted out;
    stages::Outcome o = w.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    CHECK(o.done == 4);
    CHECK(o.stopped == 0);
    CHECK(cli::exit_code(o) == 0);
    CHECK(out.write);
    CHECK_FALSE(out.plan);
    std::vector<std::string> creates;
    std::vector<std::string> releases;
    for (const auto& wr : w.writes()) {
        (wr.starts_with("create ") ? creates : releases).push_back(wr);
    }
    REQUIRE(creates.size() >= 6);
    CHECK(creates[0] == "create secrets/" + stages::bundle_secret_name("lab-u"));
    CHECK(creates[1] == "create talosclusters/lab-u");
    const std::vector<std::string> machines(creates.end() - 4, creates.end());
    CHECK(machines ==
          std::vector<std::string>{"create talosmachines/u-cp-1", "create talosmachines/u-cp-2",
                                   "create talosmachines/u-w-1", "create talosmachines/u-w-2"});
    CHECK(releases == std::vector<std::string>{
                          "merge_patch talosmachines/u-cp-1", "merge_patch talosmachines/u-cp-2",
                          "merge_patch talosmachines/u-w-1", "merge_patch talosmachines/u-w-2"});
    // Each control plane is released and waited for until Ready before the next one; the workers'
    // wave is released together, then waited for.
    std::vector<std::string> order;
    bool releasing = false;
    for (const auto& c : w.objects.calls) {
        releasing = releasing || c.verb == "merge_patch";
        if (releasing && c.plural == "talosmachines" &&
            (c.verb == "merge_patch" || c.verb == "get")) {
            order.push_back((c.verb == "get" ? "wait " : "release ") + c.name);
        }
    }
    CHECK(order == std::vector<std::string>{"release u-cp-1", "wait u-cp-1", "release u-cp-2",
                                            "wait u-cp-2", "release u-w-1", "release u-w-2",
                                            "wait u-w-1", "wait u-w-2"});
    // and each after its live zero-drift check
    CHECK(w.logged("check ") == std::vector<std::string>{"check 10.0.0.2", "check 10.0.0.5",
                                                         "check 10.0.0.3", "check 10.0.0.4"});
    CHECK(w.first("check 10.0.0.5") > w.first("merge_patch talosmachines/u-cp-1"));
    CHECK(w.clock.slept.empty()); // every machine was Ready at its first look
}

TEST_CASE("adopt: a rerun after an interrupted write resumes and converges", "[stages][adopt]") {
    Whole w;
    w.objects.fail["create talosmachines/u-w-1"] =
        make_error(ErrorKind::Unreachable, "connection reset", "", "Unreachable");
    stages::Adopted first;
    stages::Outcome o = w.run(first);
    REQUIRE(o.error);
    CHECK(o.error->message.find("connection reset") != std::string::npos);
    CHECK(w.logged("merge_patch ").empty()); // nothing released after a failed write
    const std::vector<std::string> before = w.writes();

    w.objects.fail.clear();
    w.objects.calls.clear();
    w.log.clear();
    stages::Adopted second;
    stages::Outcome again = w.run(second);
    INFO(messages(second.list));
    REQUIRE_FALSE(again.error);
    CHECK(again.done == 4);
    CHECK(cli::exit_code(again) == 0);
    // what the first run wrote is not written twice: only the creates that it had not made succeed
    std::vector<std::string> made;
    for (const auto& [plural, obj] : w.objects.objects) {
        made.push_back(plural + "/" + doc::get_string(obj, "metadata.name"));
    }
    CHECK(std::count(made.begin(), made.end(), "talosmachines/u-w-1") == 1);
    CHECK(std::count(made.begin(), made.end(), "talosclusters/lab-u") == 1);
    CHECK(w.logged("merge_patch talosmachines/").size() == 4);
    CHECK_FALSE(before.empty());
}

TEST_CASE("adopt --add-machine: a machine that is never Ready times out on the clock, without "
          "sleeping",
          "[stages][adopt]") {
    Add a;
    a.objects.never_ready.insert("prod-w-3");
    a.options.timeout_ms = 3000;
    stages::Adopted out;
    stages::Outcome o = a.run(out);
    INFO(messages(out.list));
    REQUIRE_FALSE(o.error);
    CHECK(o.done == 1);
    CHECK(o.stopped == 1);
    CHECK(cli::exit_code(o) == 5);
    CHECK(a.clock.slept == std::vector<std::int64_t>(6, 500));
    CHECK(has(codes(out.list), "Timeout"));
    // the wait was reported as it went
    CHECK(std::any_of(a.report.lines.begin(), a.report.lines.end(), [](const std::string& l) {
        return l.starts_with("status: machine 2 of 2: waiting for prod-w-3 to be Ready, 2s of 3s");
    }));
}

// Every zero-drift read of the release went through `endpoint` (a macro, so that a failure names
// the line of its section).
#define CHECK_ALL_VIA(nodes, endpoint)                                                             \
    do {                                                                                           \
        REQUIRE_FALSE((nodes).released_via.empty());                                               \
        for (const auto& via : (nodes).released_via) {                                             \
            CHECK(via == (endpoint).text);                                                         \
        }                                                                                          \
    } while (false)

TEST_CASE("adopt: the release's zero-drift read reaches the nodes the way every other read does",
          "[stages][adopt]") {
    const auto endpoint = *ichor::talos::parse_address("10.0.0.100");
    SECTION("a whole cluster") {
        Whole w;
        w.nodes.endpoint = endpoint;
        stages::Adopted out;
        REQUIRE_FALSE(w.run(out).error);
        CHECK_ALL_VIA(w.nodes, endpoint);
    }
    SECTION("--add-machine") {
        Add a;
        a.nodes.endpoint = endpoint;
        stages::Adopted out;
        REQUIRE_FALSE(a.run(out).error);
        CHECK_ALL_VIA(a.nodes, endpoint);
    }
    SECTION("--add-machine again, releasing the machines an earlier run left held") {
        Add a;
        a.nodes.endpoint = endpoint;
        a.objects.fail["merge_patch talosmachines/prod-w-2"] =
            make_error(ErrorKind::Unreachable, "connection reset", "", "Unreachable");
        stages::Adopted first;
        a.run(first);
        a.objects.fail.clear();
        a.nodes.released_via.clear();
        stages::Adopted second;
        stages::Outcome again = a.run(second);
        INFO(messages(second.list));
        REQUIRE_FALSE(again.error);
        CHECK_ALL_VIA(a.nodes, endpoint);
    }
}
