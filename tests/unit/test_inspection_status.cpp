// The sections of an Inspection made from one node's replies (common/inspection/status.h), from
// replies made by hand: no call, no server.
#include "common/inspection/status.h"
#include "common/inspection/view.h"
#include "common/talos/errors.h"

#include <catch2/catch.hpp>

using namespace ichor;
using namespace ichor::inspection;
using doc::Value;

namespace {

template <class Spec> ichor::talos::Resource made(const std::string& id, const Spec& spec) {
    ichor::talos::Resource r;
    r.metadata.set_id(id);
    r.proto_spec = spec.SerializeAsString();
    return r;
}

Error failure(std::string_view code, const std::string& message) {
    return make_error(ErrorKind::Unreachable, message, "", std::string(code));
}

std::vector<std::string> codes(const Value& results) {
    std::vector<std::string> out;
    for (const auto& r : results) {
        out.push_back(r["severity"].get<std::string>() + " " +
                      r["tags"][std::string(doc::k_tag_code)].get<std::string>());
    }
    return out;
}

struct Fixture {
    Settings settings;
    RunContext run{settings};
    ichor::talos::Address address = *ichor::talos::parse_address("127.0.0.9");
    NodeReading r{address, skeleton(address, run)};
    Replies replies;
};

ichor::talos::spec::LinkStatus link_status(int type, const std::string& kind,
                                           const std::string& perm, const std::string& hw) {
    ichor::talos::spec::LinkStatus ls;
    ls.set_type(static_cast<::talos::resource::definitions::enums::NethelpersLinkType>(type));
    ls.set_kind(kind);
    ls.set_permanent_addr(perm);
    ls.set_hardware_addr(hw);
    return ls;
}

} // namespace

TEST_CASE("the skeleton names the node and, with a context, the talosconfig",
          "[inspection][status]") {
    Settings none;
    RunContext bare(none);
    auto a = *ichor::talos::parse_address("127.0.0.9:50001");
    CHECK(skeleton(a, bare).dump() ==
          R"({"apiVersion":"adopt.ichor.maesh.dev/v1alpha1","kind":"Inspection",)"
          R"("metadata":{"name":"127.0.0.9:50001"},"spec":{"address":"127.0.0.9","port":50001},)"
          R"("status":{}})");
    Settings with;
    with.context = ichor::talos::TalosContext{"prod", {}, {}, "not a certificate", "", ""};
    with.talosconfig_path = "/tc";
    RunContext run(with);
    CHECK(run.access == "none");
    CHECK(skeleton(a, run)["spec"]["talosconfig"].dump() ==
          R"({"path":"/tc","context":"prod","caFingerprint":""})");
}

TEST_CASE("a node that stops answering is reported once, at its first call in order",
          "[inspection][status]") {
    Fixture fx;
    fx.replies.system_information = Result<ichor::talos::Resource>(
        failure(ichor::talos::code::k_timeout, "127.0.0.9 did not answer within 20s (Get)"));
    fx.replies.links = Result<std::vector<ichor::talos::Resource>>(
        failure(ichor::talos::code::k_timeout, "127.0.0.9 did not answer within 20s (List)"));
    fx.replies.hostname = Result<std::string>(std::string("h"));
    put_identity(fx.r, fx.replies);
    CHECK(fx.r.gone);
    CHECK(codes(fx.r.results) == std::vector<std::string>{"error Timeout"});
    CHECK(fx.r.results[0]["message"] == "127.0.0.9 did not answer within 20s (Get)");
    CHECK(fx.r.results[0]["resourceRef"]["name"] == "127.0.0.9");
    // the reply that did come is not looked at: the section is there, empty
    CHECK(fx.r.item["status"]["identity"].dump() == R"({"macs":[]})");
    CHECK(fx.r.item["status"]["links"] == Value::array());
}

TEST_CASE("identity: the physical links' MACs, the permanent one first", "[inspection][status]") {
    Fixture fx;
    ichor::talos::spec::SystemInformation si;
    si.set_uuid("U-1");
    si.set_serial_number("S-1");
    fx.replies.system_information = Result<ichor::talos::Resource>(made("systeminformation", si));
    std::string mac_a("\x02\x00\x00\x00\x00\x01", 6);
    std::string mac_b("\x02\x00\x00\x00\x00\x02", 6);
    fx.replies.links =
        Result<std::vector<ichor::talos::Resource>>(std::vector<ichor::talos::Resource>{
            made("eth0", link_status(1, "", "", mac_a)),    // no permanent address: the current one
            made("eth1", link_status(1, "", mac_b, mac_a)), // the permanent one
            made("bond0", link_status(1, "bond", "", mac_a)),   // virtual
            made("lo", link_status(772, "", "", std::string())) // loopback
        });
    fx.replies.hostname = Result<std::string>(
        make_error(ErrorKind::Config, "hostname: denied", "", "PermissionDenied"));
    put_identity(fx.r, fx.replies);
    const View v(fx.r.item);
    CHECK(v.uuid() == "U-1");
    CHECK(v.serial() == "S-1");
    CHECK(*v.macs() == Value::array({"02:00:00:00:00:01", "02:00:00:00:00:02"}));
    CHECK(fx.r.item["status"]["identity"].contains("hostname") == false);
    CHECK(codes(fx.r.results) == std::vector<std::string>{"warning PermissionDenied"});
    REQUIRE(v.link_names() != nullptr); // every link, virtual and loopback too
    CHECK(*v.link_names() == Value::array({"eth0", "eth1", "bond0", "lo"}));
    REQUIRE(v.links() != nullptr);
    CHECK(
        v.links()->dump() ==
        R"([{"name":"eth0","permanentAddr":"","hardwareAddr":"02:00:00:00:00:01"},)"
        R"({"name":"eth1","permanentAddr":"02:00:00:00:00:02","hardwareAddr":"02:00:00:00:00:01"}])");
}

TEST_CASE("etcd: members and status, a problem as a warning, nothing when not asked",
          "[inspection][status]") {
    SECTION("not asked") {
        Fixture fx;
        put_etcd(fx.r, fx.replies);
        CHECK_FALSE(View(fx.r.item).has_etcd());
    }
    SECTION("members, and this member's status") {
        Fixture fx;
        machine::EtcdMember m;
        m.set_id(0xaa);
        m.set_hostname("cp-1");
        m.add_peer_urls("https://127.0.0.9:2380");
        fx.replies.etcd_members =
            Result<std::vector<machine::EtcdMember>>(std::vector<machine::EtcdMember>{m});
        machine::EtcdMemberStatus st;
        st.set_member_id(0xaa);
        st.set_leader(0xaa);
        st.set_db_size(7);
        st.set_raft_index(9);
        fx.replies.etcd_status = Result<machine::EtcdMemberStatus>(st);
        put_etcd(fx.r, fx.replies);
        CHECK(fx.r.item["status"]["etcd"].dump() ==
              R"({"members":[{"id":"00000000000000aa","hostname":"cp-1",)"
              R"("peerURLs":["https://127.0.0.9:2380"],"clientURLs":[],"learner":false}],)"
              R"("status":{"memberID":"00000000000000aa","leader":"00000000000000aa",)"
              R"("dbSize":7,"raftIndex":9}})");
        CHECK(fx.r.results.empty());
    }
    SECTION("the member list fails: a problem, not a failure") {
        Fixture fx;
        fx.replies.etcd_members = Result<std::vector<machine::EtcdMember>>(
            failure("FailedPrecondition", "etcdserver: no leader"));
        fx.replies.etcd_status = Result<machine::EtcdMemberStatus>(machine::EtcdMemberStatus());
        put_etcd(fx.r, fx.replies);
        CHECK(fx.r.item["status"]["etcd"].dump() ==
              R"j({"problem":"etcd is not running or not answering (etcdserver: no leader)"})j");
        CHECK(codes(fx.r.results) == std::vector<std::string>{"warning EtcdProblem"});
        CHECK(fx.r.results[0]["message"] ==
              "127.0.0.9: etcd is not running or not answering (etcdserver: no leader)");
    }
}

TEST_CASE("configuration: a reader's PermissionDenied, then Infos' cluster identity",
          "[inspection][status]") {
    Fixture fx;
    fx.replies.machine_config = Result<ichor::talos::Resource>(
        failure(ichor::talos::code::k_permission_denied, "not authorized"));
    ichor::talos::spec::ClusterInfo info;
    info.set_cluster_id("CID");
    info.set_cluster_name("prod");
    fx.replies.cluster_info = Result<ichor::talos::Resource>(made("current", info));
    machineconfig::Facts facts;
    CHECK_FALSE(put_config(fx.r, fx.replies, facts));
    CHECK(facts.cluster_id == "CID");
    CHECK(facts.cluster_name == "prod");
    CHECK(codes(fx.r.results) == std::vector<std::string>{"warning PermissionDenied"});
    CHECK(fx.r.results[0]["message"] == "127.0.0.9: reading the configuration needs os:admin; "
                                        "only the facts a reader can see were read");
    ichor::talos::spec::MachineType mt;
    mt.set_machine_type(::resource::config::CONTROL_PLANE);
    fx.replies.machine_type = Result<ichor::talos::Resource>(made("machine-type", mt));
    put_role_and_facts(fx.r, fx.replies, facts);
    const View v(fx.r.item);
    CHECK(v.role() == "controlplane");
    CHECK(v.cluster_id() == "CID");
    CHECK(v.config() == nullptr);
}

TEST_CASE("configuration: the documents digested and the facts they hold", "[inspection][status]") {
    Fixture fx;
    ichor::talos::spec::MachineConfig mc;
    mc.set_yaml_marshalled("version: v1alpha1\nmachine:\n  type: worker\n  token: secret-text\n"
                           "cluster:\n  id: CFG-ID\n  clusterName: from-config\n");
    fx.replies.machine_config = Result<ichor::talos::Resource>(made("v1alpha1", mc));
    ichor::talos::spec::ClusterInfo info;
    info.set_cluster_id("INFO-ID");
    fx.replies.cluster_info = Result<ichor::talos::Resource>(made("current", info));
    machineconfig::Facts facts;
    CHECK(put_config(fx.r, fx.replies, facts));
    CHECK(facts.cluster_id == "CFG-ID"); // the configuration wins over Infos
    CHECK(facts.role == "worker");
    const View v(fx.r.item);
    REQUIRE(v.config() != nullptr);
    CHECK((*v.config())[0]["machine"]["token"].get<std::string>().rfind("sha256:", 0) == 0);
    CHECK(fx.r.results.empty());
}

TEST_CASE("configuration: the persistent one only when its bytes differ, secrets digested",
          "[inspection][status]") {
    const std::string running = "version: v1alpha1\nmachine:\n  type: worker\n  token: t-1\n";
    auto read = [&](const std::string& persistent) {
        Fixture fx;
        ichor::talos::spec::MachineConfig mc;
        mc.set_yaml_marshalled(running);
        fx.replies.machine_config = Result<ichor::talos::Resource>(made("v1alpha1", mc));
        ichor::talos::spec::MachineConfig pc;
        pc.set_yaml_marshalled(persistent);
        fx.replies.persistent_config = Result<ichor::talos::Resource>(made("persistent", pc));
        machineconfig::Facts facts;
        CHECK(put_config(fx.r, fx.replies, facts));
        CHECK(fx.r.results.empty());
        return fx.r.item;
    };
    const Value same = read(running);
    CHECK(View(same).persistent_config() == nullptr);
    Value staged = read(running + "  sysctls:\n    vm.nr_hugepages: \"64\"\n");
    const Value* p = View(staged).persistent_config();
    REQUIRE(p != nullptr);
    CHECK((*p)[0]["machine"]["sysctls"]["vm.nr_hugepages"] == "64");
    CHECK((*p)[0]["machine"]["token"].get<std::string>().rfind("sha256:", 0) == 0);
}
