// The hold stages (common/stages/hold.h): apply, release and abort over a fake IchorObjects that
// keeps the objects in memory and records every call, and a fake node read for the zero-drift
// check; the plans come from the plan stage over the render's golden data (test_plan_support.h).
#include "common/cli/errors.h"
#include "common/stages/hold.h"
#include "common/stages/plan.h"
#include "common/util/strings.h"
#include "test_kube_support.h"
#include "test_loop_support.h"
#include "test_plan_support.h"
#include "test_stages_support.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace ichor;
using doc::Value;

namespace {

const std::string k_now = "2025-03-04T05:06:07Z";

using test::Call;
using test::FakeObjects;

std::string annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    return a != nullptr && a->contains(std::string(key)) ? (*a)[std::string(key)].get<std::string>()
                                                         : std::string();
}

bool has_annotation(const Value& obj, std::string_view key) {
    const Value* a = doc::find_path(obj, "metadata.annotations");
    return a != nullptr && a->contains(std::string(key));
}

std::vector<std::string> codes(const doc::ResourceList& l) {
    std::vector<std::string> out;
    for (const auto& r : l.results) {
        out.push_back(r["tags"].value(std::string(doc::k_tag_code), ""));
    }
    return out;
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The nodes of the tests: a worker whose sysctl is captured into its patch, and a control plane
// equal to the render.
struct Nodes {
    test::PlanFixture fx;
    Value worker = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    Value cp = fx.inspection("10.0.0.11", "prod-cp-1", "cp-1.13");
    // What each node answers when its configuration is read again: the bytes it was planned from.
    std::map<std::string, std::string> raw{{"10.0.0.21", test::PlanFixture::raw_config("w-1.13")},
                                           {"10.0.0.11", test::PlanFixture::raw_config("cp-1.13")}};

    Nodes() {
        worker["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
        fx.cluster["metadata"]["resourceVersion"] = "7";
    }

    // The plan of `inspections`, as kubectl ichor drift writes it.
    doc::ResourceList plan(std::vector<Value> inspections) {
        doc::ResourceList list;
        for (auto& i : inspections) {
            list.items.push_back(std::move(i));
        }
        auto out = fx.run(list);
        REQUIRE_FALSE(out.error);
        return list;
    }
};

// hold apply over the fake objects (the TalosCluster of `n` in them) and nodes that answer the
// bytes of `raw`, unless an address is in `unreachable`.
struct Apply {
    FakeObjects objects;
    kube::testing::TempDir dir;
    std::vector<std::string> said;
    test::Said reporter{said};
    std::map<std::string, std::string> raw;
    std::vector<std::string> read; // the addresses whose configuration was read, in order
    stages::ApplyOptions options;

    explicit Apply(const Nodes& n) : raw(n.raw) {
        objects.add("talosclusters", n.fx.cluster);
        options.objects = &objects;
        options.backup_dir = dir.path() + "/backups";
        options.now_rfc3339 = k_now;
        options.report = &reporter;
        // The product's reads on talos::Loops; only the call on the node is faked.
        options.read_configs = stages::configs_reader(
            [this](talos::Loop& /*loop*/, const talos::Address& a,
                   const std::function<void(Result<std::string>)>& done) { done(answer(a)); });
    }

    Result<std::string> answer(const talos::Address& a) {
        read.push_back(a.text);
        auto it = raw.find(a.host);
        if (it == raw.end()) {
            return make_error(ErrorKind::Unreachable, a.text + ": connection refused", "",
                              "Unreachable");
        }
        return it->second;
    }
};

} // namespace

TEST_CASE("hold apply: class C blocks that machine, not the run", "[stages][hold]") {
    // ADR 0128 decision 1 step 4: one writable worker and one blocked control plane; the worker
    // is written, the control plane is named, and the outcome is partial (exit 5).
    Nodes n;
    Value blocked = n.cp;
    // another cluster's Kubernetes CA accepted beside the bundle's: no patch can carry a CA
    blocked["status"]["config"][0]["cluster"]["acceptedCAs"] = Value::array({Value{
        {"crt",
         "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJxekNDQVZHZ0F3SUJBZ0lVUXBWRHUxdnQxNHJBRlV2N1JXb"
         "zJQZTNKRTk4d0NnWUlLb1pJemowRUF3SXcKS2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsY2kxamJIVnpkR1Z5TVE0d0"
         "RBWURWUVFEREFWMFlXeHZjekFnRncweQpOakV5TURJd05UUTVNVEZhR0E4eU1USTJNVEV3T0RBMU5Ea3hNVm93S2p"
         "FWU1CWUdBMVVFQ2d3UFlXNXZkR2hsCmNpMWpiSFZ6ZEdWeU1RNHdEQVlEVlFRRERBVjBZV3h2Y3pCWk1CTUdCeXFH"
         "U000OUFnRUdDQ3FHU000OUF3RUgKQTBJQUJPRXRxNERvalZtM1J0OHFEdmlkNW9SOFdXK1ZIUUwxK1JzZzI4VVpJe"
         "khnc2Q3a3d2ZzVTbE5VWnJqSgp1V2RZb2RiYSt0SHB4TmU3QW1vdmZiSm4rNmVqVXpCUk1CMEdBMVVkRGdRV0JCVE"
         "xaZXVManp2RDdydFFSV2Y2CnVhNjZsYVREdkRBZkJnTlZIU01FR0RBV2dCVExaZXVManp2RDdydFFSV2Y2dWE2Nmx"
         "hVER2REFQQmdOVkhSTUIKQWY4RUJUQURBUUgvTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFEN2FRWStTS0RCbkhU"
         "ZmptZFpYclFBN2ovRApoSDNpbjJwMVlVSmd3cFlPNUFJZ1pRUDFnSU1sRnVhbXk3cXBOSnpUWkh4U0hoMkcxNFI4N"
         "GJEQ0hRa3Q4d0k9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"}}});
    doc::ResourceList plan = n.plan({n.worker, blocked});
    REQUIRE(plan.has_errors());
    REQUIRE(stages::check_plan_writable(plan).ok());

    Apply a{n};
    stages::Outcome out = stages::hold_apply(plan, a.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 2);
    CHECK(out.stopped == 1);
    CHECK(cli::exit_code(out) == 5);
    CHECK(a.objects.writes() ==
          std::vector<std::string>{"create talosconfigpatches/prod-w-2-adopted",
                                   "create talosmachines/prod-w-2"});
    REQUIRE(codes(plan) == std::vector<std::string>{"StoppedByPlan"});
    CHECK(plan.results[0]["message"] ==
          "10.0.0.11: refused or blocked by the plan (its results say why); nothing was written "
          "for it");
}

TEST_CASE("hold apply refuses a plan whose error names no node, writing nothing",
          "[stages][hold]") {
    Nodes n;
    doc::ResourceList plan = n.plan({n.worker});
    plan.add_result(doc::Severity::Error, "every machine is blocked: nothing was written",
                    "NothingWritten");

    Apply a{n};
    stages::Outcome out = stages::hold_apply(plan, a.options);
    REQUIRE(out.error);
    CHECK(out.error->kind == ErrorKind::Findings);
    CHECK(out.error->code == "PlanHasErrors");
    CHECK(out.error->message ==
          "the plan carries 1 error result(s) (refused or blocked machines); nothing was written");
    CHECK(out.done == 0);
    CHECK(cli::exit_code(out) == 1);
    CHECK(a.objects.calls.empty());
    CHECK_FALSE(std::filesystem::exists(a.options.backup_dir)); // not even a backup
}

TEST_CASE("hold apply refuses a plan that creates nothing", "[stages][hold]") {
    Nodes n;
    doc::ResourceList plan;
    plan.items.push_back(n.worker); // Inspections only: not planned
    Apply a{n};
    stages::Outcome out = stages::hold_apply(plan, a.options);
    REQUIRE(out.error);
    CHECK(out.error->code == "NothingToAdopt");
    CHECK(out.error->message == "the plan creates nothing; nothing was written");
    CHECK(cli::exit_code(out) == 1);
    CHECK(a.objects.calls.empty());
    CHECK(stages::check_plan_writable(plan).error().code == "NothingToAdopt");
}

TEST_CASE("hold apply creates the held machines and patches, stamped with the plan's digest",
          "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = n.plan({n.worker, n.cp});
    const std::string digest = stages::plan_digest(plan);
    CHECK(digest.starts_with("sha256:"));
    CHECK(digest.size() == 7 + 64);

    Apply a{n};
    doc::ResourceList list = plan;
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK(out.stopped == 0);
    CHECK(out.skipped == 0);
    CHECK(cli::exit_code(out) == 0);
    CHECK(a.objects.writes() == std::vector<std::string>{
                                    "create talosconfigpatches/prod-w-2-adopted",
                                    "create talosmachines/prod-w-2",
                                    "create talosmachines/prod-cp-1",
                                });
    for (const auto& c : a.objects.calls) {
        if (c.verb != "create") {
            continue; // the stale-plan check's reads
        }
        INFO(c.plural << "/" << c.name);
        CHECK(annotation(c.body, vocab::k_annotation_plan_digest) == digest);
        CHECK(annotation(c.body, vocab::k_annotation_applied_at) == k_now);
        CHECK(c.body["metadata"]["namespace"] == "ichor-system");
        if (c.plural == "talosmachines") {
            CHECK(annotation(c.body, vocab::k_annotation_hold_apply) == "true");
            CHECK(c.body["spec"]["approval"] == "Approved");
            CHECK(annotation(c.body, vocab::k_annotation_consented_drift) ==
                  "[]"); // no class B in this plan
        } else {
            CHECK_FALSE(has_annotation(c.body, vocab::k_annotation_consented_drift));
            CHECK(c.body["spec"]["machine"] == "prod-w-2");
        }
    }
    // The list now holds the objects as the cluster has them, and no result.
    REQUIRE(list.items.size() == 3);
    CHECK(list.items[1]["metadata"]["uid"] == "uid-prod-w-2"); // after its patch
    CHECK(list.results.empty());
    CHECK(std::count(a.said.begin(), a.said.end(), "created TalosMachine ichor-system/prod-w-2") ==
          1);
    // The same plan gives the same digest; another plan another.
    CHECK(stages::plan_digest(n.plan({n.worker, n.cp})) == digest);
    CHECK(stages::plan_digest(n.plan({n.cp})) != digest);
    // The suite's own annotations do not count: a plan replanned from stamped objects keeps it.
    doc::ResourceList stamped = plan;
    for (auto& item : stamped.items) {
        if (item.value("kind", "") == "TalosMachine") {
            auto& ann = item["metadata"]["annotations"];
            ann[std::string(vocab::k_annotation_plan_digest)] = digest;
            ann[std::string(vocab::k_annotation_applied_at)] = k_now;
            ann[std::string(vocab::k_annotation_consented_drift)] = "[]";
        }
    }
    CHECK(stages::plan_digest(stamped) == digest);
}

TEST_CASE("hold apply run again over the same plan converges", "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = n.plan({n.worker, n.cp});
    Apply a{n};
    doc::ResourceList first = plan;
    REQUIRE_FALSE(stages::hold_apply(first, a.options).error);
    const auto before = a.objects.objects;
    a.objects.calls.clear();

    doc::ResourceList again = plan;
    stages::Outcome out = stages::hold_apply(again, a.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK(out.skipped == 3);
    CHECK(out.stopped == 0);
    CHECK(cli::exit_code(out) == 0);
    CHECK(again.results.empty());
    CHECK(again.items.size() == 3);
    CHECK(a.objects.objects == before); // nothing changed
    // The stale-plan check's two reads, then a refused create and a get for each.
    CHECK(a.objects.calls.size() == 8);
    CHECK(std::count(a.said.begin(), a.said.end(),
                     "TalosMachine ichor-system/prod-cp-1 already exists from this plan") == 1);
}

TEST_CASE("hold apply leaves an object of another plan and names it (Conflict)", "[stages][hold]") {
    Nodes n;
    SECTION("one of three: partial, exit 5") {
        const doc::ResourceList plan = n.plan({n.worker, n.cp});
        Apply a{n};
        Value other = Value::object();
        other["apiVersion"] = std::string(doc::k_ichor_api);
        other["kind"] = "TalosMachine";
        other["metadata"]["name"] = "prod-cp-1";
        other["metadata"]["annotations"][std::string(vocab::k_annotation_plan_digest)] =
            "sha256:other";
        a.objects.add("talosmachines", other);
        const Value kept = *a.objects.find("talosmachines", "prod-cp-1");

        doc::ResourceList list = plan;
        stages::Outcome out = stages::hold_apply(list, a.options);
        REQUIRE_FALSE(out.error);
        CHECK(out.done == 2);
        CHECK(out.stopped == 1);
        CHECK(cli::exit_code(out) == 5);
        CHECK(codes(list) == std::vector<std::string>{"Conflict"});
        CHECK(list.results[0]["severity"] == "error");
        CHECK(list.results[0]["message"] ==
              "TalosMachine ichor-system/prod-cp-1 already exists and was not written by this "
              "plan; it was left as it is");
        CHECK(list.results[0]["resourceRef"]["name"] == "prod-cp-1");
        CHECK(*a.objects.find("talosmachines", "prod-cp-1") == kept);
        CHECK(list.results[0]["tags"][std::string(stages::k_tag_stage)] == "hold-apply");
    }
    SECTION("the only object: findings, exit 1") {
        const doc::ResourceList plan = n.plan({n.cp});
        Apply a{n};
        Value other = Value::object();
        other["metadata"]["name"] = "prod-cp-1"; // made by hand: no digest at all
        a.objects.add("talosmachines", other);
        doc::ResourceList list = plan;
        stages::Outcome out = stages::hold_apply(list, a.options);
        REQUIRE_FALSE(out.error);
        CHECK(out.done == 0);
        CHECK(out.stopped == 1);
        CHECK(cli::exit_code(out) == 1);
        CHECK(codes(list) == std::vector<std::string>{"Conflict"});
    }
}

TEST_CASE("a create that fails mid-way is the outcome's error, done counts what was written",
          "[stages][hold]") {
    Nodes n;
    doc::ResourceList list = n.plan({n.worker, n.cp});
    Apply a{n};
    a.objects.fail.emplace(
        "create talosmachines/prod-cp-1",
        make_error(ErrorKind::Config, "admission webhook denied the request", "", "Forbidden"));
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE(out.error);
    CHECK(out.error->message ==
          "creating TalosMachine ichor-system/prod-cp-1: admission webhook denied the request");
    CHECK(out.error->code == "Forbidden");
    CHECK(out.done == 2); // the patch and the machine before the failure
    CHECK(cli::exit_code(out) == 3);
    // Nothing after the failure was tried.
    CHECK(a.objects.writes() == std::vector<std::string>{
                                    "create talosconfigpatches/prod-w-2-adopted",
                                    "create talosmachines/prod-w-2",
                                    "create talosmachines/prod-cp-1",
                                });
}

TEST_CASE("hold apply saves each configuration as the node returned it first, secrets included, "
          "0600 in a 0700 folder, never over a backup",
          "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = n.plan({n.worker, n.cp});
    Apply a{n};
    a.objects.fail.emplace("create talosmachines/prod-w-2",
                           make_error(ErrorKind::Unreachable, "connection refused"));
    doc::ResourceList list = plan;
    REQUIRE(stages::hold_apply(list, a.options).error); // the backups come before any create
    CHECK(a.read == std::vector<std::string>{"10.0.0.21", "10.0.0.11"}); // a fresh read each

    const std::string dir = a.options.backup_dir;
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(files_in(dir) ==
          std::vector<std::string>{"10.0.0.11-" + k_now + ".yaml", "10.0.0.21-" + k_now + ".yaml"});
    const std::string path = dir + "/10.0.0.21-" + k_now + ".yaml";
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    // The bytes the node returned, byte for byte: its secrets in the clear, so that it restores.
    const std::string backup = a.dir.read("backups/10.0.0.21-" + k_now + ".yaml");
    CHECK(backup == n.raw["10.0.0.21"]);
    CHECK(backup.find("token: s8a5ni.qjzqcuasztiqgula") != std::string::npos);
    CHECK(backup.find("sha256:") == std::string::npos);
    CHECK(a.dir.read("backups/10.0.0.11-" + k_now + ".yaml") == n.raw["10.0.0.11"]);
    CHECK(std::count(a.said.begin(), a.said.end(),
                     "saved the configuration of 10.0.0.21 as the node returned it to " + path +
                         " (0600); it holds the machine's secrets: keep it safe") == 1);

    // A second run in the same second: the next free name, the first one left as it was.
    a.objects.fail.clear();
    doc::ResourceList again = plan;
    REQUIRE_FALSE(stages::hold_apply(again, a.options).error);
    CHECK(files_in(dir) == std::vector<std::string>{
                               "10.0.0.11-" + k_now + "-2.yaml", "10.0.0.11-" + k_now + ".yaml",
                               "10.0.0.21-" + k_now + "-2.yaml", "10.0.0.21-" + k_now + ".yaml"});
    CHECK(a.dir.read("backups/10.0.0.21-" + k_now + ".yaml") == backup);
}

TEST_CASE("hold apply refuses a backup folder that group or others may enter", "[stages][hold]") {
    Nodes n;
    doc::ResourceList list = n.plan({n.worker});
    Apply a{n};
    REQUIRE(::mkdir(a.options.backup_dir.c_str(), 0755) == 0);
    ::chmod(a.options.backup_dir.c_str(), 0755);
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE(out.error);
    CHECK(out.error->code == "BackupFolderOpen");
    CHECK(out.error->message == "the backup folder " + a.options.backup_dir +
                                    " can be entered by group or others, and backups hold "
                                    "secrets; nothing was written");
    CHECK(out.error->hint == "chmod 700 " + a.options.backup_dir);
    CHECK(a.objects.writes().empty());
    CHECK(files_in(a.options.backup_dir).empty());
}

TEST_CASE("hold apply refuses a node it cannot read again, writing nothing", "[stages][hold]") {
    Nodes n;
    doc::ResourceList list = n.plan({n.worker, n.cp});
    Apply a{n};
    a.raw.erase("10.0.0.11");
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE(out.error);
    CHECK(out.error->message == "reading the configuration of 10.0.0.11 before the first write "
                                "(nothing was written): 10.0.0.11: connection refused");
    CHECK(cli::exit_code(out) == 4);
    CHECK(a.objects.writes().empty());
    CHECK_FALSE(std::filesystem::exists(a.options.backup_dir));
}

TEST_CASE("hold apply reads read_concurrency nodes at once, and names the first failure in the "
          "plan's order as one read at a time would",
          "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = n.plan({n.worker, n.cp});
    auto refused = [](const talos::Address& addr) -> Result<std::string> {
        return make_error(ErrorKind::Unreachable, addr.text + ": connection refused", "",
                          "Unreachable");
    };
    Apply one{n};
    one.raw.clear();
    doc::ResourceList first = plan;
    stages::Outcome sequential = stages::hold_apply(first, one.options);
    REQUIRE(sequential.error);

    Apply a{n};
    a.options.read_concurrency = 2;
    std::mutex mu;
    std::map<std::string, test::LoopCall*> in_flight; // the reads not yet over, by address
    int met = 0; // reads that saw the other one in flight while they were
    // The product's loops; each read stays in flight until the other has started, or 2 s: one
    // read after the other, the first waits out the bound alone and `met` stays below 2.
    a.options.read_configs =
        stages::configs_reader([&](talos::Loop& loop, const talos::Address& addr,
                                   std::function<void(Result<std::string>)> done) {
            std::lock_guard lock(mu);
            auto* op = new test::LoopCall(loop, std::chrono::seconds(2),
                                          [&, addr, done = std::move(done)] {
                                              {
                                                  std::lock_guard over(mu);
                                                  in_flight.erase(addr.text);
                                              }
                                              done(refused(addr));
                                          });
            in_flight[addr.text] = op;
            if (in_flight.size() == 2) {
                met += 2;
                for (auto& entry : in_flight) {
                    entry.second->release();
                }
            }
        });
    doc::ResourceList list = plan;
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE(out.error);
    CHECK(met == 2);
    CHECK(out.error->message == sequential.error->message);
    CHECK(out.error->message.starts_with("reading the configuration of "));
    CHECK(a.objects.writes().empty());
    CHECK_FALSE(std::filesystem::exists(a.options.backup_dir));
}

namespace {

// The fake objects shared by concurrent writers, one call at a time. Before a create of NAME, a
// writer waits (at most 2 s, so that creates one after the other end too) until the create of
// waits_for[NAME] has ended (waits_for_start: has begun): the creates end in an order the test
// chooses.
class SharedFake {
  public:
    explicit SharedFake(FakeObjects& f) : m_f(f) {}

    std::map<std::string, std::string> waits_for;
    std::map<std::string, std::string> waits_for_start; // the same, until that create has begun
    std::vector<std::string> begun; // the creates' names, in the order they began
    std::vector<std::string> ended; // the creates' names, in the order they ended

    stages::ObjectsFactory factory() {
        return [this] { return std::make_unique<Writer>(*this); };
    }

  private:
    class Writer final : public stages::IchorObjects {
      public:
        explicit Writer(SharedFake& s) : m_s(s) {}
        [[nodiscard]] const std::string& ns() const override { return m_s.m_f.ns(); }
        Result<std::vector<Value>> list(std::string_view plural,
                                        const std::string& selector) override {
            std::lock_guard g(m_s.m_mu);
            return m_s.m_f.list(plural, selector);
        }
        Result<Value> get(std::string_view plural, const std::string& ns,
                          const std::string& name) override {
            std::lock_guard g(m_s.m_mu);
            return m_s.m_f.get(plural, ns, name);
        }
        Result<Value> create(std::string_view plural, const std::string& ns,
                             const Value& obj) override {
            const std::string name = doc::get_string(obj, "metadata.name");
            std::unique_lock lock(m_s.m_mu);
            m_s.begun.push_back(name);
            m_s.m_cv.notify_all();
            if (auto it = m_s.waits_for_start.find(name); it != m_s.waits_for_start.end()) {
                m_s.m_cv.wait_for(lock, std::chrono::seconds(2), [&] {
                    return std::find(m_s.begun.begin(), m_s.begun.end(), it->second) !=
                           m_s.begun.end();
                });
            }
            if (auto it = m_s.waits_for.find(name); it != m_s.waits_for.end()) {
                m_s.m_cv.wait_for(lock, std::chrono::seconds(2), [&] {
                    return std::find(m_s.ended.begin(), m_s.ended.end(), it->second) !=
                           m_s.ended.end();
                });
            }
            auto r = m_s.m_f.create(plural, ns, obj);
            m_s.ended.push_back(name);
            m_s.m_cv.notify_all();
            return r;
        }
        Result<Value> merge_patch(std::string_view plural, const std::string& name,
                                  const Value& patch) override {
            std::lock_guard g(m_s.m_mu);
            return m_s.m_f.merge_patch(plural, name, patch);
        }
        Result<Value> remove(std::string_view plural, const std::string& name,
                             const std::string& uid) override {
            std::lock_guard g(m_s.m_mu);
            return m_s.m_f.remove(plural, name, uid);
        }

      private:
        SharedFake& m_s;
    };

    FakeObjects& m_f;
    std::mutex m_mu;
    std::condition_variable m_cv;
};

// Three workers, the patches before the machines as a whole-cluster plan orders them, so that the
// three TalosMachines are one run of one role.
doc::ResourceList three_workers(Nodes& n) {
    n.raw["10.0.0.22"] = n.raw["10.0.0.21"];
    n.raw["10.0.0.23"] = n.raw["10.0.0.21"];
    doc::ResourceList plan = n.plan({n.worker, n.fx.inspection("10.0.0.22", "prod-w-3", "w-1.13"),
                                     n.fx.inspection("10.0.0.23", "prod-w-4", "w-1.13")});
    std::stable_partition(plan.items.begin(), plan.items.end(),
                          [](const Value& i) { return i.value("kind", "") != "TalosMachine"; });
    return plan;
}

std::vector<std::string> names(const std::vector<Value>& items) {
    std::vector<std::string> out;
    for (const auto& i : items) {
        out.push_back(i.value("kind", "") + "/" + doc::get_string(i, "metadata.name"));
    }
    return out;
}

} // namespace

TEST_CASE("hold apply creates write_concurrency machines at once, and reports them in the plan's "
          "order as one at a time would",
          "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = three_workers(n);
    REQUIRE_FALSE(plan.has_errors());
    auto other = [&](Apply& a) { // prod-w-3 exists, from another plan: a Conflict
        Value m = Value{{"apiVersion", "ichor.maesh.dev/v1alpha1"},
                        {"kind", "TalosMachine"},
                        {"metadata", {{"name", "prod-w-3"}}}};
        a.objects.add("talosmachines", m);
    };
    Apply one{n};
    other(one);
    doc::ResourceList first = plan;
    stages::Outcome sequential = stages::hold_apply(first, one.options);
    REQUIRE_FALSE(sequential.error);

    Apply a{n};
    other(a);
    SharedFake shared(a.objects);
    // The creates end in the reverse of the plan's order: prod-w-4, prod-w-3, prod-w-2.
    shared.waits_for = {{"prod-w-2", "prod-w-3"}, {"prod-w-3", "prod-w-4"}};
    a.options.writers = shared.factory();
    a.options.write_concurrency = 3;
    doc::ResourceList list = plan;
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE_FALSE(out.error);
    CHECK(shared.ended == std::vector<std::string>{"prod-w-4", "prod-w-3", "prod-w-2"});
    CHECK(out.done == sequential.done);
    CHECK(out.stopped == 1);
    CHECK(out.stopped == sequential.stopped);
    auto writes_said = [](const std::vector<std::string>& said) {
        std::vector<std::string> out;
        std::copy_if(said.begin(), said.end(), std::back_inserter(out),
                     [](const std::string& l) { return !l.starts_with("saved "); });
        return out;
    };
    CHECK(writes_said(a.said) == writes_said(one.said));
    CHECK(writes_said(a.said).size() == 3); // the patch, prod-w-2 and prod-w-4
    CHECK(names(list.items) == names(first.items));
    CHECK(names(list.items).back() == "TalosMachine/prod-w-4");
    CHECK(codes(list) == std::vector<std::string>{"Conflict"});
    CHECK(list.results == first.results);
}

TEST_CASE(
    "hold apply's concurrent creates: a failure stops the next ones, and the first failure in "
    "the plan's order is the error",
    "[stages][hold]") {
    Nodes n;
    const doc::ResourceList plan = three_workers(n);
    Apply a{n};
    for (const char* m : {"prod-w-3", "prod-w-4"}) {
        a.objects.fail.emplace(
            std::string("create talosmachines/") + m,
            make_error(ErrorKind::Config, std::string(m) + " denied", "", "Forbidden"));
    }
    SharedFake shared(a.objects);
    shared.waits_for = {{"prod-w-4", "prod-w-2"}, {"prod-w-3", "prod-w-4"}}; // prod-w-4 fails first
    a.options.writers = shared.factory();
    a.options.write_concurrency = 3;
    doc::ResourceList list = plan;
    stages::Outcome out = stages::hold_apply(list, a.options);
    REQUIRE(out.error);
    CHECK(shared.ended == std::vector<std::string>{"prod-w-2", "prod-w-4", "prod-w-3"});
    CHECK(out.error->message == "creating TalosMachine ichor-system/prod-w-3: prod-w-3 denied");
    CHECK(out.done == 2); // the patch and prod-w-2
    CHECK(cli::exit_code(out) == 3);

    // Two at a time: prod-w-2 fails while prod-w-3 is in flight (it waits out the bound for a
    // create that is never made), and prod-w-4 is not started.
    Nodes m;
    const doc::ResourceList again = three_workers(m);
    Apply b{m};
    b.objects.fail.emplace("create talosmachines/prod-w-2",
                           make_error(ErrorKind::Config, "denied", "", "Forbidden"));
    SharedFake second(b.objects);
    second.waits_for_start = {{"prod-w-2", "prod-w-3"}};
    second.waits_for = {{"prod-w-3", "prod-w-4"}};
    b.options.writers = second.factory();
    b.options.write_concurrency = 2;
    doc::ResourceList l2 = again;
    stages::Outcome out2 = stages::hold_apply(l2, b.options);
    REQUIRE(out2.error);
    CHECK(out2.error->message == "creating TalosMachine ichor-system/prod-w-2: denied");
    CHECK(second.ended == std::vector<std::string>{"prod-w-2", "prod-w-3"});
    CHECK(out2.done == 2); // the patch and prod-w-3, in flight when prod-w-2 failed
    CHECK(b.objects.find("talosmachines", "prod-w-4") == nullptr);
}

TEST_CASE("plan records what it was made from in a PlanBasis", "[stages][hold][plan]") {
    Nodes n;
    Value other = Value{{"apiVersion", "ichor.maesh.dev/v1alpha1"},
                        {"kind", "TalosConfigPatch"},
                        {"metadata", {{"name", "other-sysctls"}, {"resourceVersion", "3"}}},
                        {"spec", {{"cluster", "other"}, {"layer", "cluster"}, {"patch", "{}"}}}};
    Value mine = other;
    mine["metadata"] = {{"name", "prod-ntp"}, {"resourceVersion", "11"}};
    mine["spec"]["cluster"] = "prod";
    doc::ResourceList list;
    list.items.push_back(n.worker);
    REQUIRE_FALSE(n.fx.run(list, {}, {other, mine}).error);
    const Value* basis = nullptr;
    for (const auto& i : list.items) {
        basis = stages::is_plan_basis(i) ? &i : basis;
    }
    REQUIRE(basis != nullptr);
    CHECK((*basis)["apiVersion"] == "adopt.ichor.maesh.dev/v1alpha1");
    CHECK((*basis)["metadata"]["name"] == "prod");
    CHECK((*basis)["spec"]["talosCluster"] ==
          Value{{"namespace", "ichor-system"}, {"name", "prod"}, {"resourceVersion", "7"}});
    CHECK((*basis)["spec"]["patches"] ==
          Value::array({Value{{"name", "prod-ntp"}, {"resourceVersion", "11"}}}));
    CHECK((*basis)["spec"]["nodes"] ==
          Value::array({Value{{"address", "10.0.0.21"},
                              {"configDigest", util::sha256_digest(n.raw["10.0.0.21"])}}}));
    // Planned again: one basis, not two.
    REQUIRE_FALSE(n.fx.run(list, {}, {other, mine}).error);
    CHECK(std::count_if(list.items.begin(), list.items.end(),
                        [](const Value& i) { return stages::is_plan_basis(i); }) == 1);
}

namespace {

Value cluster_patch(const std::string& name, const std::string& rv) {
    return Value{{"apiVersion", "ichor.maesh.dev/v1alpha1"},
                 {"kind", "TalosConfigPatch"},
                 {"metadata", {{"name", name}, {"resourceVersion", rv}}},
                 {"spec", {{"cluster", "prod"}, {"layer", "cluster"}, {"patch", "{}"}}}};
}

} // namespace

TEST_CASE("hold apply refuses a stale plan, naming every change, before any write",
          "[stages][hold]") {
    Nodes n;
    Value ntp = cluster_patch("prod-ntp", "11");
    Value dns = cluster_patch("prod-dns", "12");
    doc::ResourceList plan;
    plan.items.push_back(n.worker);
    plan.items.push_back(n.cp);
    REQUIRE_FALSE(n.fx.run(plan, {}, {ntp, dns}).error);

    SECTION("unchanged, the plan applies") {
        Apply a{n};
        a.objects.add("talosconfigpatches", ntp);
        a.objects.add("talosconfigpatches", dns);
        REQUIRE_FALSE(stages::hold_apply(plan, a.options).error);
    }
    SECTION("every change is named") {
        Apply a{n};
        a.objects.find("talosclusters", "prod")->at("metadata")["resourceVersion"] = "8";
        ntp["metadata"]["resourceVersion"] = "15"; // edited
        a.objects.add("talosconfigpatches", ntp);  // prod-dns deleted
        a.objects.add("talosconfigpatches", cluster_patch("prod-new", "16"));
        a.raw["10.0.0.11"] += "# edited on the node\n";
        const std::string was = util::sha256_digest(n.raw["10.0.0.11"]);
        const std::string now = util::sha256_digest(a.raw["10.0.0.11"]);
        stages::Outcome out = stages::hold_apply(plan, a.options);
        REQUIRE(out.error);
        CHECK(out.error->code == "StalePlan");
        CHECK(out.error->kind == ErrorKind::Findings);
        CHECK(out.error->message ==
              "the plan is stale: TalosCluster ichor-system/prod changed (resourceVersion 7, now "
              "8); TalosConfigPatch prod-ntp changed (resourceVersion 11, now 15); "
              "TalosConfigPatch prod-new was added; TalosConfigPatch prod-dns was deleted; the "
              "configuration of 10.0.0.11 changed (" +
                  was + ", now " + now + "); nothing was written");
        CHECK(a.objects.writes().empty());
        CHECK_FALSE(std::filesystem::exists(a.options.backup_dir));
    }
    SECTION("a TalosCluster deleted since") {
        Apply a{n};
        a.objects.objects.clear();
        a.objects.add("talosconfigpatches", ntp);
        a.objects.add("talosconfigpatches", dns);
        stages::Outcome out = stages::hold_apply(plan, a.options);
        REQUIRE(out.error);
        CHECK(out.error->message ==
              "the plan is stale: TalosCluster ichor-system/prod was deleted; nothing was written");
    }
    SECTION("a plan without a PlanBasis") {
        Apply a{n};
        doc::ResourceList old = plan;
        old.items.erase(std::remove_if(old.items.begin(), old.items.end(),
                                       [](const Value& i) { return stages::is_plan_basis(i); }),
                        old.items.end());
        stages::Outcome out = stages::hold_apply(old, a.options);
        REQUIRE(out.error);
        CHECK(out.error->code == "NoPlanBasis");
        CHECK(a.objects.writes().empty());
    }
}

namespace {

// A cluster with the plan of a worker and a control plane applied (held), the worker listed
// first, and the nodes answering as they were planned.
struct Release {
    Nodes n;
    Apply a{n};
    std::map<std::string, Value> node; // address -> what read_node answers
    std::vector<std::string> read;     // the addresses read, in order
    test::FakeClock clock;
    std::vector<std::int64_t>& slept = clock.slept;
    std::vector<std::string> said;
    test::Said reporter{said};
    stages::ReleaseOptions options;

    Release() {
        doc::ResourceList list = n.plan({n.worker, n.cp});
        REQUIRE_FALSE(stages::hold_apply(list, a.options).error);
        a.objects.calls.clear();
        node["10.0.0.21"] = n.worker;
        node["10.0.0.11"] = n.cp;
        for (auto& [addr, v] : node) {
            v["status"].erase("trust"); // the live read has not been trust-checked
        }
        options.objects = &a.objects;
        options.cluster = "prod";
        options.bundle = &n.fx.bundle;
        options.talos_cluster = &n.fx.cluster;
        options.read_node = [this](const talos::Address& addr, Value& /*results*/) {
            read.push_back(addr.host);
            return node.at(addr.host);
        };
        options.clock = &clock;
        options.report = &reporter;
    }

    [[nodiscard]] std::vector<std::string> patched() const {
        std::vector<std::string> out;
        for (const auto& c : a.objects.calls) {
            if (c.verb == "merge_patch") {
                out.push_back(c.plural + "/" + c.name);
            }
        }
        return out;
    }
};

} // namespace

TEST_CASE("hold release: control planes first, each after a clean zero-drift check",
          "[stages][hold]") {
    Release r;
    REQUIRE(r.a.objects.objects[0].first == "talosclusters");
    REQUIRE(doc::get_string(r.a.objects.objects[2].second, "metadata.name") == "prod-w-2");
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, r.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 2);
    CHECK(out.stopped == 0);
    CHECK(cli::exit_code(out) == 0);
    CHECK(r.read == std::vector<std::string>{"10.0.0.11", "10.0.0.21"});
    CHECK(r.patched() ==
          std::vector<std::string>{"talosmachines/prod-cp-1", "talosmachines/prod-w-2"});
    for (const auto& c : r.a.objects.calls) {
        if (c.verb == "merge_patch") {
            CHECK(c.body == Value{{"metadata",
                                   {{"annotations",
                                     {{std::string(vocab::k_annotation_hold_apply), nullptr}}}}}});
        }
    }
    CHECK_FALSE(has_annotation(*r.a.objects.find("talosmachines", "prod-w-2"),
                               vocab::k_annotation_hold_apply));
    CHECK(codes(list) == std::vector<std::string>{"Released", "Released"});
    CHECK(list.results[0]["message"] == "prod-cp-1: released and Ready");
    CHECK(list.items.size() == 2);
    CHECK(r.said == std::vector<std::string>{
                        "released the hold on prod-cp-1; waiting for Ready", "prod-cp-1 is Ready",
                        "released the hold on prod-w-2; waiting for Ready", "prod-w-2 is Ready"});
    CHECK(r.slept.empty()); // Ready at once: no wait
}

TEST_CASE("hold release: a machine that drifted since the plan keeps its hold, the others go on",
          "[stages][hold]") {
    Release r;
    r.node["10.0.0.11"]["status"]["config"][0]["machine"]["sysctls"] =
        Value{{"net.core.somaxconn", "4096"}};
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, r.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 1);
    CHECK(out.stopped == 1);
    CHECK(cli::exit_code(out) == 5);
    CHECK(r.patched() == std::vector<std::string>{"talosmachines/prod-w-2"});
    CHECK(annotation(*r.a.objects.find("talosmachines", "prod-cp-1"),
                     vocab::k_annotation_hold_apply) == "true");
    REQUIRE(codes(list) == std::vector<std::string>{"DriftSincePlan", "Released"});
    const std::string m = list.results[0]["message"];
    INFO(m);
    CHECK(m.starts_with("prod-cp-1: the live zero-drift check failed; the hold stays: "));
    CHECK(m.find("machine.sysctls") != std::string::npos);
    CHECK(m.ends_with("; hint: kubectl ichor inspect 10.0.0.11 | kubectl ichor trustcheck "
                      "--cluster prod | kubectl ichor drift --cluster prod"));
    CHECK(list.results[0]["severity"] == "error");
    CHECK(list.results[0]["resourceRef"]["name"] == "prod-cp-1");
}

TEST_CASE("hold release: a node of another cluster fails the check", "[stages][hold]") {
    Release r;
    r.node["10.0.0.21"]["status"]["facts"]["clusterID"] = "another-id";
    r.options.machines = {"prod-w-2"};
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, r.options);
    CHECK(out.done == 0);
    CHECK(out.stopped == 1);
    CHECK(cli::exit_code(out) == 1);
    CHECK(r.patched().empty());
    CHECK(r.read == std::vector<std::string>{"10.0.0.21"}); // only the machine asked for
    REQUIRE(codes(list) == std::vector<std::string>{"DriftSincePlan"});
    CHECK(list.results[0]["message"].get<std::string>().find("belongs to") != std::string::npos);
}

TEST_CASE("hold release: a machine not Ready in time is named, the wait uses the clock given",
          "[stages][hold]") {
    Release r;
    r.a.objects.never_ready.insert("prod-w-2");
    r.options.timeout_ms = 20; // on the fake clock: the first pause ends the wait
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, r.options);
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 1);
    CHECK(out.stopped == 1);
    REQUIRE(codes(list) == std::vector<std::string>{"Released", "Timeout"});
    CHECK(list.results[1]["message"] ==
          "prod-w-2: not Ready within 20ms (Ready=False); hint: kubectl get talosmachine -n "
          "ichor-system prod-w-2 -o yaml");
    CHECK_FALSE(r.slept.empty());
    CHECK(std::all_of(r.slept.begin(), r.slept.end(), [](std::int64_t ms) { return ms == 500; }));
    // The hold is gone (the check passed); only Ready is missing.
    CHECK_FALSE(has_annotation(*r.a.objects.find("talosmachines", "prod-w-2"),
                               vocab::k_annotation_hold_apply));
}

TEST_CASE("hold release: an API that cannot be listed is the outcome's error", "[stages][hold]") {
    Release r;
    r.a.objects.fail.emplace("list talosconfigpatches/",
                             make_error(ErrorKind::Unreachable, "connection refused"));
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, r.options);
    REQUIRE(out.error);
    CHECK(out.error->message == "connection refused");
    CHECK(cli::exit_code(out) == 4);
    CHECK(r.read.empty());
    CHECK(r.patched().empty());

    Release none;
    none.options.cluster = "staging";
    doc::ResourceList empty;
    stages::Outcome nothing = stages::hold_release(empty, none.options);
    CHECK(cli::exit_code(nothing) == 0);
    CHECK(codes(empty) == std::vector<std::string>{"NothingHeld"});
    CHECK(none.a.objects.calls[0].name == "ichor.maesh.dev/cluster=staging");
}

namespace {

Value machine(const std::string& name, const std::string& cluster, bool held, bool digest) {
    Value m = Value::object();
    m["apiVersion"] = std::string(doc::k_ichor_api);
    m["kind"] = "TalosMachine";
    m["metadata"]["name"] = name;
    m["metadata"]["labels"]["ichor.maesh.dev/cluster"] = cluster;
    m["metadata"]["annotations"] = Value::object();
    if (held) {
        m["metadata"]["annotations"][std::string(vocab::k_annotation_hold_apply)] = "true";
    }
    if (digest) {
        m["metadata"]["annotations"][std::string(vocab::k_annotation_plan_digest)] = "sha256:abc";
    }
    m["spec"]["cluster"] = cluster;
    return m;
}

Value patch(const std::string& name, const std::string& machine_name, bool digest) {
    Value p = Value::object();
    p["apiVersion"] = std::string(doc::k_ichor_api);
    p["kind"] = "TalosConfigPatch";
    p["metadata"]["name"] = name;
    p["metadata"]["annotations"] = Value::object();
    if (digest) {
        p["metadata"]["annotations"][std::string(vocab::k_annotation_plan_digest)] = "sha256:abc";
    }
    p["spec"]["machine"] = machine_name;
    return p;
}

// Ours and held (w-2, w-3), held by hand (w-9), ours but released (cp-1), another cluster's
// (other-1), and a patch a user added to w-2.
void populate(FakeObjects& f) {
    f.add("talosmachines", machine("prod-w-2", "prod", true, true));
    f.add("talosconfigpatches", patch("prod-w-2-adopted", "prod-w-2", true));
    f.add("talosconfigpatches", patch("prod-w-2-extra", "prod-w-2", false));
    f.add("talosmachines", machine("prod-w-3", "prod", true, true));
    f.add("talosmachines", machine("prod-w-9", "prod", true, false));
    f.add("talosconfigpatches", patch("prod-w-9-adopted", "prod-w-9", false));
    f.add("talosmachines", machine("prod-cp-1", "prod", false, true));
    f.add("talosconfigpatches", patch("prod-cp-1-adopted", "prod-cp-1", true));
    f.add("talosmachines", machine("other-1", "other", true, true));
    f.add("talosconfigpatches", patch("other-1-adopted", "other-1", true));
}

} // namespace

TEST_CASE("hold abort removes only the held machines this suite wrote, and their patches",
          "[stages][hold]") {
    FakeObjects f;
    populate(f);
    const auto before = f.objects;
    doc::ResourceList list;
    stages::Outcome out = stages::hold_abort(list, {&f, "prod", {}});
    REQUIRE_FALSE(out.error);
    CHECK(out.done == 3);
    CHECK(out.stopped == 0);
    CHECK(cli::exit_code(out) == 0);
    // allow-delete first, then the delete of that very object (its uid); the patch before its
    // machine.
    CHECK(f.writes() == std::vector<std::string>{
                            "merge_patch talosconfigpatches/prod-w-2-adopted",
                            "remove talosconfigpatches/prod-w-2-adopted",
                            "merge_patch talosmachines/prod-w-2",
                            "remove talosmachines/prod-w-2",
                            "merge_patch talosmachines/prod-w-3",
                            "remove talosmachines/prod-w-3",
                        });
    for (const auto& c : f.calls) {
        if (c.verb == "merge_patch") {
            CHECK(c.body == Value{{"metadata",
                                   {{"annotations",
                                     {{std::string(vocab::k_annotation_allow_delete), "true"}}}}}});
        }
        if (c.verb == "remove") {
            CHECK(c.body == "uid-" + c.name);
        }
    }
    CHECK(codes(list) == std::vector<std::string>{"Removed", "Removed", "Removed"});
    CHECK(list.results[0]["message"] == "removed TalosConfigPatch prod-w-2-adopted");
    CHECK(list.results[1]["message"] == "removed TalosMachine prod-w-2");
    // Every other object is as it was.
    for (const auto& [plural, obj] : before) {
        std::string name = doc::get_string(obj, "metadata.name");
        if (name == "prod-w-2" || name == "prod-w-2-adopted" || name == "prod-w-3") {
            CHECK(f.find(plural, name) == nullptr);
        } else {
            INFO(name);
            REQUIRE(f.find(plural, name) != nullptr);
            CHECK(*f.find(plural, name) == obj);
        }
    }
}

TEST_CASE("hold abort: --machine chooses, a failed removal is named and the rest goes on",
          "[stages][hold]") {
    FakeObjects f;
    populate(f);
    f.fail.emplace("remove talosconfigpatches/prod-w-2-adopted",
                   make_error(ErrorKind::Config, "forbidden by the webhook", "", "Forbidden"));
    doc::ResourceList list;
    stages::Outcome out = stages::hold_abort(list, {&f, "prod", {"prod-w-2", "prod-w-9"}});
    CHECK(out.done == 1);
    CHECK(out.stopped == 1);
    CHECK(cli::exit_code(out) == 5);
    CHECK(f.writes() == std::vector<std::string>{
                            "merge_patch talosconfigpatches/prod-w-2-adopted",
                            "remove talosconfigpatches/prod-w-2-adopted",
                            "merge_patch talosmachines/prod-w-2",
                            "remove talosmachines/prod-w-2",
                        });
    CHECK(codes(list) == std::vector<std::string>{"Forbidden", "Removed"});
    CHECK(list.results[0]["message"] == "removing prod-w-2-adopted: forbidden by the webhook");
    CHECK(list.results[0]["severity"] == "error");
    CHECK(f.find("talosmachines", "prod-w-3") != nullptr);

    // allow-delete refused: no delete is tried.
    FakeObjects g;
    populate(g);
    g.fail.emplace("merge_patch talosmachines/prod-w-3",
                   make_error(ErrorKind::Config, "patch refused"));
    doc::ResourceList l2;
    stages::Outcome o2 = stages::hold_abort(l2, {&g, "prod", {"prod-w-3"}});
    CHECK(o2.stopped == 1);
    CHECK(cli::exit_code(o2) == 1);
    CHECK(g.writes() == std::vector<std::string>{"merge_patch talosmachines/prod-w-3"});
}
