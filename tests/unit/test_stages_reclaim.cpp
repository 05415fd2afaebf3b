// The reclaim stage: assessment texts, the typed confirmation, the reset options, the wait for
// maintenance mode and the registration, with a fake node and a fake registry.
#include "common/stages/reclaim.h"
#include "test_stages_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;
using stages::Registration;

namespace {

const std::string k_uuid = "5a1c0b9e-7d42-4c1a-9f3e-2b8d6c4a1e07";
const std::string k_old_fp = "b2xkLWZpbmdlcnByaW50LW9sZC1vbGQtb2xkLW9sZC0=";
const std::string k_new_fp = "bmV3LWZpbmdlcnByaW50LW5ldy1uZXctbmV3LW5ldy0=";

Value member(const std::string& id, const std::string& host, bool learner = false) {
    Value m = Value::object();
    m["id"] = id;
    m["hostname"] = host;
    m["peerURLs"] = Value::array({"https://" + host + ":2380"});
    m["clientURLs"] = Value::array({"https://" + host + ":2379"});
    m["learner"] = learner;
    return m;
}

// A configured control plane of cluster lab-c read with an os:admin talosconfig.
Value configured(const std::string& role = "controlplane") {
    Value v = Value::object();
    v["apiVersion"] = "adopt.ichor.maesh.dev/v1alpha1";
    v["kind"] = "Inspection";
    v["metadata"]["name"] = "10.0.0.41";
    v["spec"]["address"] = "10.0.0.41";
    v["spec"]["port"] = 50000;
    auto& st = v["status"];
    st["mode"] = "configured";
    st["access"] = "os:admin";
    st["tls"]["outcome"] = "verified";
    st["talosVersion"] = "v1.13.9";
    st["identity"]["uuid"] = k_uuid;
    st["identity"]["serial"] = "SER-41";
    st["identity"]["macs"] = Value::array({"02:00:00:00:00:41"});
    st["identity"]["hostname"] = "lab-c-cp-1";
    st["facts"]["clusterID"] = "lab-c-id";
    st["facts"]["clusterName"] = "lab-c";
    st["facts"]["role"] = role;
    if (role == "controlplane") {
        st["etcd"]["members"] = Value::array(
            {member("a1", "10.0.0.41"), member("a2", "10.0.0.42"), member("a3", "10.0.0.43")});
        st["etcd"]["status"]["memberID"] = "a1";
    }
    return v;
}

Value maintenance(const std::string& fp = k_new_fp, const std::string& uuid = k_uuid) {
    Value v = Value::object();
    v["kind"] = "Inspection";
    v["spec"]["address"] = "10.0.0.41";
    auto& st = v["status"];
    st["mode"] = "maintenance";
    st["tls"]["outcome"] = "insecure";
    st["tls"]["fingerprint"] = fp;
    st["identity"]["uuid"] = uuid;
    st["identity"]["serial"] = "SER-41";
    st["identity"]["macs"] = Value::array({"02:00:00:00:00:41"});
    st["machineStatus"]["stage"] = "maintenance";
    Value disk = Value::object();
    disk["name"] = "sda";
    disk["devPath"] = "/dev/sda";
    disk["size"] = 107374182400LL;
    disk["model"] = "QEMU HARDDISK";
    disk["serial"] = "D1";
    st["disks"] = Value::array({disk});
    Value link = Value::object();
    link["name"] = "eth0";
    link["permanentAddr"] = "02:00:00:00:00:41";
    link["hardwareAddr"] = "02:00:00:00:00:41";
    st["links"] = Value::array({link});
    return v;
}

Value tm_obj(const std::string& name, const std::string& cluster, const std::string& approval,
             const std::string& uuid = k_uuid, const std::string& serial = "SER-41",
             const std::string& mac = "02:00:00:00:00:41") {
    Value m = Value::object();
    m["apiVersion"] = "ichor.maesh.dev/v1alpha1";
    m["kind"] = "TalosMachine";
    m["metadata"]["name"] = name;
    m["metadata"]["namespace"] = "ichor-system";
    m["metadata"]["uid"] = "uid-" + name;
    m["spec"]["cluster"] = cluster;
    m["spec"]["approval"] = approval;
    m["spec"]["identity"]["uuid"] = uuid;
    m["spec"]["identity"]["serial"] = serial;
    m["spec"]["identity"]["macs"] = Value::array({mac});
    return m;
}

stages::Known known_with(Value machines = Value::array()) {
    stages::Known k;
    k.machines = std::move(machines);
    k.clusters = {{"prod", "prod-id", {}}};
    return k;
}

const stages::AssessOptions k_opts{"10.0.0.41", "/tc", "prod", false};
const stages::PeerHealth k_all_up{{"a2", true}, {"a3", true}};

std::string refusal_text(const Value& item, const stages::Known& k, const stages::PeerHealth& p,
                         const stages::AssessOptions& o = k_opts) {
    auto a = stages::assess(item, k, p, o);
    REQUIRE_FALSE(a.ok());
    return a.error().message;
}

class FakeNode final : public stages::ReclaimNode {
  public:
    Value item = configured();
    Value inspect_results = Value::array();
    std::vector<std::string> asked_members;
    std::vector<ichor::talos::ResetOptions> resets;
    std::vector<Result<Value>> probes; // answered in order; the last one repeats
    int probed = 0;

    Value inspect(Value& results) override {
        for (const auto& r : inspect_results) {
            results.push_back(r);
        }
        return item;
    }
    bool member_answers(const std::string& host) override {
        asked_members.push_back(host);
        return true;
    }
    Result<std::string> reset(const ichor::talos::ResetOptions& o) override {
        resets.push_back(o);
        return std::string("actor-1");
    }
    Result<Value> probe_maintenance(std::int64_t /*timeout_ms*/) override {
        auto& r = probes[std::min<size_t>(static_cast<size_t>(probed), probes.size() - 1)];
        ++probed;
        return r;
    }
};

class FakeRegistry final : public stages::ReclaimRegistry {
  public:
    stages::Known k = known_with();
    std::vector<Value> created;
    std::vector<std::pair<std::string, Value>> status_patches;

    Result<stages::Known> known(const std::function<void(std::string_view)>& /*warn*/) override {
        return k;
    }
    Result<Value> machines() override { return k.machines; }
    Result<Value> create_machine(const Value& m) override {
        created.push_back(m);
        return m;
    }
    Result<Value> patch_machine_status(const std::string& name, const Value& status) override {
        status_patches.emplace_back(name, status);
        Value m = created.empty() ? Value::object() : created.back();
        for (const auto& x : k.machines) {
            if (x["metadata"]["name"] == name) {
                m = x;
            }
        }
        m["status"] = status;
        return m;
    }
};

// The harness's time as the stage reads it: it passes when the stage pauses, nothing sleeps.
class HarnessClock final : public util::Clock {
  public:
    explicit HarnessClock(std::chrono::steady_clock::time_point& t) : m_t(t) {}
    std::string now_rfc3339() override { return "2025-03-04T05:06:07Z"; }
    std::int64_t monotonic_ms() override {
        return std::chrono::duration_cast<std::chrono::milliseconds>(m_t.time_since_epoch())
            .count();
    }
    void sleep_ms(std::int64_t ms) override { m_t += std::chrono::milliseconds(ms); }

  private:
    std::chrono::steady_clock::time_point& m_t;
};

struct Harness {
    FakeNode node;
    FakeRegistry reg;
    stages::ReclaimOptions opts;
    std::vector<std::string> steps, warnings, questions;
    test::Said reporter{steps, &warnings};
    std::vector<std::string> answers;
    std::chrono::steady_clock::time_point clock{};
    HarnessClock ticking{clock};
    bool terminal = true;

    Harness() {
        opts.address = *ichor::talos::parse_address("10.0.0.41");
        opts.talosconfig_path = "/tc";
        opts.context_name = "lab-c";
        opts.cluster = "prod";
        opts.ns = "ichor-system";
        opts.wait_timeout_ms = 60000;
        node.probes.push_back(maintenance());
    }
    // What the flow did, read back from the stage's list and outcome.
    struct Ran {
        doc::ResourceList list;
        std::optional<Error> failure;
        bool reset_done = false;
        std::string fingerprint;
        std::optional<Registration::Action> registered;
    };
    Ran run() {
        stages::ReclaimUi ui;
        ui.report = &reporter;
        if (terminal) {
            ui.ask = [this](std::string_view q) -> std::optional<std::string> {
                questions.emplace_back(q);
                if (answers.empty()) {
                    return std::nullopt;
                }
                std::string a = answers.front();
                answers.erase(answers.begin());
                return a;
            };
        }
        ui.clock = &ticking;
        opts.node = &node;
        opts.registry = &reg;
        opts.ui = ui;
        Ran r;
        stages::Outcome out = stages::reclaim(r.list, opts);
        r.failure = out.error;
        for (const auto& res : r.list.results) {
            const std::string code = res["tags"].value("ichor.maesh.dev/code", "");
            r.reset_done = r.reset_done || code == "Reset";
            if (code == "Maintenance") {
                r.fingerprint = res["tags"].value(std::string(stages::k_tag_fingerprint), "");
            }
            if (code == "Registered") {
                r.registered = Registration::Action::Create;
            } else if (code == "LeftToDiscovery") {
                r.registered = Registration::Action::Discovery;
            } else if (code == "Unchanged") {
                r.registered = Registration::Action::Unchanged;
            }
        }
        return r;
    }
};

} // namespace

TEST_CASE("a weak UUID cannot identify a machine", "[stages][reclaim]") {
    Value none = Value::array();
    CHECK(stages::uuid_weakness("00000000-0000-0000-0000-000000000000", "S", none) ==
          "it is all zeros");
    CHECK(stages::uuid_weakness("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "S", none) ==
          "it is one digit repeated");
    CHECK(stages::uuid_weakness("03000200-0400-0500-0006-000700080009", "S", none) ==
          "it is a firmware placeholder that many boards share");
    CHECK(stages::uuid_weakness("", "S", none) == "the node reports no UUID");
    CHECK(stages::uuid_weakness("Not Settable", "S", none) == "\"Not Settable\" is not a UUID");
    CHECK(stages::uuid_weakness(k_uuid, "SER-41", none).empty());
    Value shared = Value::array({tm_obj("m1", "prod", "Pending", k_uuid, "OTHER")});
    CHECK(stages::uuid_weakness(k_uuid, "SER-41", shared) ==
          "TalosMachine m1 has the same UUID with serial \"OTHER\"");
    CHECK(stages::uuid_weakness(k_uuid, "OTHER", shared).empty());
}

TEST_CASE("reclaim refuses an Ichor machine, but not a pending or rejected one",
          "[stages][reclaim]") {
    Value item = configured("worker");
    CHECK(refusal_text(item, known_with(Value::array({tm_obj("prod-w-9", "prod", "Approved")})),
                       {}) == "10.0.0.41: is an Ichor machine: TalosMachine prod-w-9 of cluster "
                              "\"prod\" is approved with its UUID " +
                                  k_uuid + "; reclaim does not reset a machine Ichor manages");
    auto a = stages::assess(
        item,
        known_with(Value::array({tm_obj("p", "prod", "Pending"), tm_obj("r", "prod", "Rejected")})),
        {}, k_opts);
    REQUIRE(a.ok());
    CHECK(a->graceful);
    CHECK(a->warnings.empty());
}

TEST_CASE("a node of a managed cluster without an approved machine is a warning",
          "[stages][reclaim]") {
    Value item = configured("worker");
    item["status"]["facts"]["clusterID"] = "prod-id";
    item["status"]["facts"]["clusterName"] = "prod";
    auto a = stages::assess(item, known_with(), {}, k_opts);
    REQUIRE(a.ok());
    REQUIRE(a->warnings.size() == 1);
    CHECK(a->warnings[0].message == "10.0.0.41: node belongs to cluster \"prod\", which Ichor "
                                    "already manages; a reset is not needed: add it "
                                    "to that Ichor cluster with kubectl ichor adopt --cluster prod "
                                    "--add-machine 10.0.0.41 (no approved "
                                    "TalosMachine has its UUID, so reclaim goes on)");
}

TEST_CASE("etcd that does not answer refuses a graceful reset, --force-ungraceful goes on",
          "[stages][reclaim]") {
    Value item = configured();
    item["status"]["etcd"] = Value::object();
    item["status"]["etcd"]["problem"] = "etcd is not running or not answering (10.0.0.41: "
                                        "unavailable (EtcdMemberList): connection refused)";
    CHECK(refusal_text(item, known_with(), {}) ==
          "10.0.0.41: refusing a graceful reset: etcd of cluster \"lab-c\" is not running or not "
          "answering "
          "(10.0.0.41: unavailable (EtcdMemberList): connection refused); a graceful reset must "
          "leave etcd first");
    auto e = stages::assess(item, known_with(), {}, k_opts);
    CHECK(e.error().code == "EtcdProblem");
    CHECK(e.error().hint ==
          "if cluster \"lab-c\" does not exist any more: kubectl ichor reclaim 10.0.0.41 "
          "--talosconfig /tc --cluster prod --force-ungraceful");
    auto forced = k_opts;
    forced.force_ungraceful = true;
    auto a = stages::assess(item, known_with(), {}, forced);
    REQUIRE(a.ok());
    CHECK_FALSE(a->graceful);
    REQUIRE(a->warnings.size() == 1);
    CHECK(a->warnings[0].message ==
          "cluster \"lab-c\" is treated as not existing, so its quorum cannot be checked and "
          "the reset is not graceful");
}

TEST_CASE("quorum and the last control plane", "[stages][reclaim]") {
    Value item = configured();
    auto ok = stages::assess(item, known_with(), k_all_up, k_opts);
    REQUIRE(ok.ok());
    CHECK(ok->graceful);

    stages::PeerHealth one_down{{"a2", true}, {"a3", false}};
    CHECK(refusal_text(item, known_with(), one_down) ==
          "10.0.0.41: a reset would break the etcd quorum of cluster \"lab-c\": after it leaves, 2 "
          "members remain "
          "and need 2 started, but only 1 answer (not answering: 10.0.0.43)");

    Value last = configured();
    last["status"]["etcd"]["members"] =
        Value::array({member("a1", "10.0.0.41"), member("l2", "10.0.0.42", true)});
    auto e = stages::assess(last, known_with(), {}, k_opts);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == "LastControlPlane");
    CHECK(e.error().message ==
          "10.0.0.41: is the last control plane of cluster \"lab-c\" (its only etcd member); "
          "a reset would end that cluster");

    // A control plane that is a learner (or not a member) leaves no quorum behind.
    Value learner = configured();
    learner["status"]["etcd"]["members"] =
        Value::array({member("a1", "10.0.0.41", true), member("a2", "10.0.0.42")});
    CHECK(stages::assess(learner, known_with(), {}, k_opts).ok());

    auto peers = stages::etcd_peers(item);
    REQUIRE(peers.size() == 2);
    CHECK(peers[0].id == "a2");
    CHECK(peers[0].host == "10.0.0.42");
}

TEST_CASE("nodes reclaim cannot reset", "[stages][reclaim]") {
    Value m = configured();
    m["status"]["mode"] = "maintenance";
    CHECK(stages::assess(m, known_with(), {}, k_opts).error().code == "Maintenance");
    Value u = configured();
    u["status"]["tls"]["outcome"] = "unknownAuthority";
    auto e = stages::assess(u, known_with(), {}, k_opts);
    CHECK(e.error().code == "UnknownAuthority");
    CHECK(e.error().kind == ErrorKind::Config);
    Value r = configured();
    r["status"]["access"] = "os:reader";
    CHECK(stages::assess(r, known_with(), {}, k_opts).error().message ==
          "10.0.0.41: a reset needs os:admin, and the talosconfig's certificate has os:reader");
}

TEST_CASE("registration: create, refresh, unchanged, left", "[stages][reclaim]") {
    stages::RegisterOptions ro{"prod", "ichor-system", "10.0.0.41"};
    SECTION("no machine: a pending one is created") {
        auto r = stages::plan_registration(Value::array(), maintenance(), ro);
        CHECK(r.action == Registration::Action::Create);
        CHECK(r.name == "prod-" + k_uuid);
        CHECK(r.machine["spec"]["approval"] == "Pending");
        CHECK(r.machine["spec"]["cluster"] == "prod");
        CHECK(r.machine["spec"]["address"] == "10.0.0.41");
        CHECK_FALSE(r.machine["spec"].contains("role"));
        CHECK(r.machine["spec"]["identity"]["macs"][0] == "02:00:00:00:00:41");
        CHECK(r.machine["metadata"]["labels"]["ichor.maesh.dev/cluster"] == "prod");
        CHECK(r.status["maintenanceFingerprint"] == k_new_fp);
        CHECK(r.status["discoveredDisks"][0]["devPath"] == "/dev/sda");
        CHECK(r.status["discoveredLinks"][0]["permanentAddr"] == "02:00:00:00:00:41");
    }
    SECTION("a pending machine with the same identity is left to discovery") {
        Value m = tm_obj("prod-old", "prod", "Pending");
        m["status"]["maintenanceFingerprint"] = k_old_fp;
        auto r = stages::plan_registration(Value::array({m}), maintenance(), ro);
        CHECK(r.action == Registration::Action::Discovery);
        CHECK(r.name == "prod-old");
        CHECK(r.old_fingerprint == k_old_fp);
        auto same = stages::plan_registration(Value::array({m}), maintenance(k_old_fp), ro);
        CHECK(same.action == Registration::Action::Unchanged);
    }
    SECTION("another serial or other MACs change nothing") {
        auto serial =
            stages::plan_registration(Value::array({tm_obj("prod-old", "prod", "Pending", k_uuid,
                                                           "SER-41", "02:00:00:00:00:99")}),
                                      maintenance(), ro);
        CHECK(serial.action == Registration::Action::Left);
        CHECK(serial.why.find("its recorded identity differs (MAC addresses)") !=
              std::string::npos);
    }
    SECTION("approved and rejected machines are never touched") {
        auto rejected = stages::plan_registration(
            Value::array({tm_obj("prod-r", "prod", "Rejected")}), maintenance(), ro);
        CHECK(rejected.action == Registration::Action::Left);
        CHECK(rejected.why ==
              "TalosMachine prod-r of cluster \"prod\" has this UUID and is Rejected; it is never "
              "changed by reclaim, so nothing was registered");
    }
    SECTION("a machine of another cluster is left and one is created here") {
        auto r = stages::plan_registration(Value::array({tm_obj("lab-x", "lab", "Pending")}),
                                           maintenance(), ro);
        CHECK(r.action == Registration::Action::Create);
        CHECK(r.warnings.size() == 1);
    }
    SECTION("a weak UUID: named by the serial") {
        Value mt = maintenance(k_new_fp, "00000000-0000-0000-0000-000000000000");
        auto r = stages::plan_registration(Value::array(), mt, ro);
        CHECK(r.name == "prod-serial-ser-41");
    }
}

TEST_CASE("reclaim flow: typed UUID, reset, wait, create", "[stages][reclaim]") {
    Harness h;
    h.answers = {k_uuid};
    auto out = h.run();
    REQUIRE_FALSE(out.failure);
    REQUIRE(h.steps.size() >= 3);
    CHECK(h.steps[0] ==
          "Inspect 10.0.0.41 with talosconfig context \"lab-c\" (each call gives up after 20s)");
    CHECK(h.steps[1].find("  etcd:     3 members") != std::string::npos);
    CHECK(h.node.asked_members == std::vector<std::string>{"10.0.0.42", "10.0.0.43"});
    CHECK(h.questions == std::vector<std::string>{"To reset 10.0.0.41, type its UUID: "});
    REQUIRE(h.node.resets.size() == 1);
    CHECK(h.node.resets[0].graceful);
    CHECK(h.node.resets[0].reboot);
    CHECK(h.node.resets[0].system_volumes == std::vector<std::string>{"STATE", "EPHEMERAL"});
    CHECK(out.fingerprint == k_new_fp);
    REQUIRE(h.reg.created.size() == 1);
    REQUIRE(h.reg.status_patches.size() == 1);
    CHECK(out.registered == Registration::Action::Create);
    REQUIRE(out.list.items.size() == 1);
    CHECK(out.list.items[0]["status"]["maintenanceFingerprint"] == k_new_fp);
}

TEST_CASE("reclaim flow: refusals come before the reset", "[stages][reclaim]") {
    SECTION("no terminal and no --confirm-uuid") {
        Harness h;
        h.terminal = false;
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->kind == ErrorKind::Findings);
        CHECK(out.failure->code == "ConfirmationRequired");
        CHECK(h.node.resets.empty());
    }
    SECTION("a wrong UUID") {
        Harness h;
        h.opts.confirm_uuid = "5a1c0b9e-0000-0000-0000-000000000000";
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->message ==
              "10.0.0.41: the UUID typed (5a1c0b9e-0000-0000-0000-000000000000) is not "
              "the node's (" +
                  k_uuid + "); nothing was reset");
        CHECK(h.node.resets.empty());
        CHECK(h.questions.empty());
    }
    SECTION("an Ichor machine") {
        Harness h;
        h.opts.confirm_uuid = k_uuid;
        h.reg.k.machines = Value::array({tm_obj("prod-w-9", "prod", "Approved")});
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->code == "IchorMachine");
        CHECK(h.node.resets.empty());
        CHECK(out.list.results.back()["severity"] == "error");
    }
    SECTION("an unknown --cluster") {
        Harness h;
        h.opts.cluster = "nope";
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->message ==
              "TalosCluster \"nope\" not found in namespace \"ichor-system\"");
        CHECK(h.steps.empty());
    }
    SECTION("a node that does not answer") {
        Harness h;
        h.node.item["status"]["mode"] = "unreachable";
        Value r = Value::object();
        r["severity"] = "error";
        r["message"] = "10.0.0.41 did not answer within 20s (Version)";
        r["tags"]["ichor.maesh.dev/code"] = "Timeout";
        h.node.inspect_results.push_back(r);
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->message == "10.0.0.41 did not answer within 20s (Version)");
        CHECK(out.failure->kind == ErrorKind::Unreachable);
        CHECK(h.node.resets.empty());
    }
}

TEST_CASE("reclaim flow: a weak UUID is confirmed with the serial number", "[stages][reclaim]") {
    Harness h;
    h.node.item["status"]["identity"]["uuid"] = "00000000-0000-0000-0000-000000000000";
    h.node.probes = {maintenance(k_new_fp, "00000000-0000-0000-0000-000000000000")};
    h.opts.confirm_uuid = "00000000-0000-0000-0000-000000000000";
    SECTION("without a terminal --confirm-serial is required") {
        h.terminal = false;
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->code == "ConfirmationRequired");
        CHECK(h.node.resets.empty());
    }
    SECTION("a wrong serial") {
        h.answers = {"SER-42"};
        auto out = h.run();
        REQUIRE(out.failure);
        CHECK(out.failure->message ==
              "10.0.0.41: the serial number typed (SER-42) is not the node's (SER-41); "
              "nothing was reset");
    }
    SECTION("the right serial") {
        h.opts.confirm_serial = "SER-41";
        auto out = h.run();
        CHECK_FALSE(out.failure);
        CHECK(h.node.resets.size() == 1);
    }
}

TEST_CASE("reclaim flow: ungraceful, a stale pending machine is discovery's, the CLI writes "
          "no status and no Event",
          "[stages][reclaim]") {
    Harness h;
    h.opts.confirm_uuid = k_uuid;
    h.opts.force_ungraceful = true;
    h.node.item["status"]["etcd"] = Value::object();
    h.node.item["status"]["etcd"]["problem"] = "etcd is not running or not answering (refused)";
    Value stale = tm_obj("prod-old", "prod", "Pending");
    stale["status"]["maintenanceFingerprint"] = k_old_fp;
    h.reg.k.machines = Value::array({stale});
    h.node.probes = {Result<Value>(make_error(ErrorKind::Unreachable, "x", "", "Unreachable")),
                     maintenance()};
    auto out = h.run();
    REQUIRE_FALSE(out.failure);
    REQUIRE(h.node.resets.size() == 1);
    CHECK_FALSE(h.node.resets[0].graceful);
    CHECK(h.node.asked_members.empty());
    CHECK(h.warnings.front() ==
          "cluster \"lab-c\" is treated as not existing, so its quorum cannot be checked and "
          "the reset is not graceful");
    CHECK(out.registered == Registration::Action::Discovery);
    CHECK(h.reg.created.empty());
    CHECK(h.reg.status_patches.empty()); // the refresh is discovery's: no status written
    CHECK(h.node.probed == 2);
    const Value& last = out.list.results.back();
    CHECK(last["message"] ==
          "pending TalosMachine prod-old records maintenance fingerprint " + k_old_fp +
              " and the node now presents " + k_new_fp +
              ": discovery re-records its fingerprint, disks and links at its next pass (Event "
              "MaintenanceIdentityRefreshed); nothing was written to it by reclaim");
    // The address is not in the cluster's discovery: said, with the command that puts it there.
    CHECK(h.warnings.back() ==
          "10.0.0.41 is not in spec.discovery.addresses of TalosCluster prod, so discovery does "
          "not probe it and pending TalosMachine prod-old keeps the old fingerprint; add it: "
          "kubectl ichor discovery add 10.0.0.41 --cluster prod -n ichor-system");

    Harness listed;
    listed.opts.confirm_uuid = k_uuid;
    listed.reg.k.machines = Value::array({stale});
    for (auto& c : listed.reg.k.clusters) {
        c.discovery = {"10.0.0.41:50000"};
    }
    auto quiet = listed.run();
    REQUIRE_FALSE(quiet.failure);
    CHECK(quiet.registered == Registration::Action::Discovery);
    for (const auto& w : listed.warnings) {
        CHECK(w.find("spec.discovery.addresses") == std::string::npos);
    }
}

TEST_CASE("reclaim flow: the wait for maintenance mode is bounded", "[stages][reclaim]") {
    Harness h;
    h.opts.confirm_uuid = k_uuid;
    h.opts.wait_timeout_ms = 5000;
    h.node.probes = {Result<Value>(make_error(ErrorKind::Unreachable, "x", "", "Timeout"))};
    auto out = h.run();
    REQUIRE(out.failure);
    CHECK(out.reset_done);
    CHECK(out.failure->kind == ErrorKind::Unreachable);
    CHECK(out.failure->message ==
          "10.0.0.41 did not come back in maintenance mode within 5s (last: not answering); "
          "the reset was sent (actor ID actor-1)");
    CHECK(h.clock - std::chrono::steady_clock::time_point{} <= std::chrono::milliseconds(5000));
    CHECK(h.reg.created.empty());
}

TEST_CASE("reclaim flow: another machine at the address is not registered", "[stages][reclaim]") {
    Harness h;
    h.opts.confirm_uuid = k_uuid;
    h.node.probes = {maintenance(k_new_fp, "11111111-2222-4333-8444-555555555555")};
    auto out = h.run();
    REQUIRE(out.failure);
    CHECK(out.failure->code == "IdentityChanged");
    CHECK(out.failure->kind == ErrorKind::Partial);
    CHECK(h.reg.created.empty());
}
