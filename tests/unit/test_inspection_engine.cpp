// The inspection engine (common/inspection/engine.h) against in-process gRPC servers with the
// Ed25519 certificates of test_talos_fixtures.h: the order of its phases as the server sees the
// calls arrive, and the item each way of reading ends in.
#include "common/doc/resource_list.h"
#include "common/inspection/engine.h"
#include "common/inspection/view.h"
#include "common/talos/resources.h"
#include "machine/machine.grpc.pb.h"
#include "test_talos_fixtures.h"
#include "v1alpha1/state.grpc.pb.h"

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <set>

using namespace ichor;
using namespace ichor::talos;
using doc::Value;
namespace fx = ichor::talos::fixtures;

namespace {

// What the server saw: each call as it arrived, with how many calls had been answered before.
class Recorder {
  public:
    struct Arrival {
        std::string method;
        int answered_before;
    };

    void arrive(const std::string& method) {
        std::lock_guard<std::mutex> lock(m_mu);
        m_arrivals.push_back({method, m_answered});
        m_cv.notify_all();
    }
    void answered() {
        std::lock_guard<std::mutex> lock(m_mu);
        ++m_answered;
    }
    // Whether `n` calls have arrived within `ms`.
    bool wait_for(std::size_t n, int ms) {
        std::unique_lock<std::mutex> lock(m_mu);
        return m_cv.wait_for(lock, std::chrono::milliseconds(ms),
                             [&] { return m_arrivals.size() >= n; });
    }
    std::vector<Arrival> arrivals() {
        std::lock_guard<std::mutex> lock(m_mu);
        return m_arrivals;
    }
    void set_overlapped(bool b) {
        std::lock_guard<std::mutex> lock(m_mu);
        m_overlapped = b;
    }
    bool overlapped() {
        std::lock_guard<std::mutex> lock(m_mu);
        return m_overlapped;
    }

  private:
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::vector<Arrival> m_arrivals;
    int m_answered = 0;
    bool m_overlapped = false;
};

// Records a call for the length of its handler.
struct Served {
    Served(Recorder& r, std::string method) : rec(r) { rec.arrive(method); }
    ~Served() { rec.answered(); }
    Recorder& rec;
};

struct Script {
    ::resource::config::MachineType role = ::resource::config::CONTROL_PLANE;
    bool config_readable = true;
    // Hostname answers only once the other reads of its phase have arrived too (or 3 s passed):
    // a reading that made them one at a time would be seen to wait.
    bool hostname_waits_for_reads = false;
};

class FakeMachine final : public machine::MachineService::Service {
  public:
    FakeMachine(Recorder& r, Script& s) : m_rec(r), m_script(s) {}

  private:
    grpc::Status Version(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                         machine::VersionResponse* resp) override {
        Served s(m_rec, "Version");
        // Playing an endpoint's apid: the `node` named decides what the forwarded call meets.
        auto node = ctx->client_metadata().find("node");
        if (node != ctx->client_metadata().end()) {
            std::string target(node->second.data(), node->second.size());
            if (target == "worker-endpoint") {
                return {grpc::StatusCode::PERMISSION_DENIED, "no request forwarding"};
            }
            if (target == "other-cluster") {
                return {grpc::StatusCode::UNAVAILABLE,
                        "connection error: desc = \"transport: authentication handshake failed: "
                        "tls: failed to verify certificate: x509: certificate signed by unknown "
                        "authority\""};
            }
        }
        resp->add_messages()->mutable_version()->set_tag("v1.13.9");
        return grpc::Status::OK;
    }
    grpc::Status Hostname(grpc::ServerContext*, const google::protobuf::Empty*,
                          machine::HostnameResponse* resp) override {
        Served s(m_rec, "Hostname");
        if (m_script.hostname_waits_for_reads) {
            m_rec.set_overlapped(m_rec.wait_for(1 + 10, 3000));
        }
        resp->add_messages()->set_hostname("node-1");
        return grpc::Status::OK;
    }
    grpc::Status EtcdMemberList(grpc::ServerContext*, const machine::EtcdMemberListRequest*,
                                machine::EtcdMemberListResponse* resp) override {
        Served s(m_rec, "EtcdMemberList");
        auto* m = resp->add_messages()->add_members();
        m->set_id(0xaa);
        m->set_hostname("node-1");
        return grpc::Status::OK;
    }
    grpc::Status EtcdStatus(grpc::ServerContext*, const google::protobuf::Empty*,
                            machine::EtcdStatusResponse* resp) override {
        Served s(m_rec, "EtcdStatus");
        auto* st = resp->add_messages()->mutable_member_status();
        st->set_member_id(0xaa);
        st->set_leader(0xaa);
        return grpc::Status::OK;
    }

    Recorder& m_rec;
    Script& m_script;
};

template <class Spec> void fill(cosi::resource::Resource* r, const std::string& id, const Spec& s) {
    r->mutable_metadata()->set_id(id);
    r->mutable_spec()->set_proto_spec(s.SerializeAsString());
}

class FakeState final : public cosi::resource::State::Service {
  public:
    FakeState(Recorder& r, Script& s) : m_rec(r), m_script(s) {}

  private:
    grpc::Status Get(grpc::ServerContext*, const cosi::resource::GetRequest* req,
                     cosi::resource::GetResponse* resp) override {
        Served s(m_rec, "Get " + req->type());
        auto* r = resp->mutable_resource();
        const std::string& type = req->type();
        if (type == kind::k_system_information.type) {
            spec::SystemInformation si;
            si.set_uuid("U-1");
            si.set_serial_number("S-1");
            fill(r, req->id(), si);
        } else if (type == kind::k_machine_status.type) {
            spec::MachineStatus ms;
            ms.set_stage(::talos::resource::definitions::enums::MACHINE_STAGE_RUNNING);
            ms.mutable_status()->set_ready(true);
            fill(r, req->id(), ms);
        } else if (type == kind::k_machine_config.type) {
            if (!m_script.config_readable) {
                return {grpc::StatusCode::PERMISSION_DENIED, "not authorized"};
            }
            spec::MachineConfig mc;
            mc.set_yaml_marshalled(
                std::string("version: v1alpha1\nmachine:\n  type: ") +
                (m_script.role == ::resource::config::WORKER ? "worker" : "controlplane") +
                "\ncluster:\n  id: CID\n  clusterName: prod\n");
            fill(r, req->id(), mc);
        } else if (type == kind::k_cluster_info.type) {
            spec::ClusterInfo info;
            info.set_cluster_id("CID");
            info.set_cluster_name("prod");
            fill(r, req->id(), info);
        } else if (type == kind::k_identity.type) {
            spec::Identity id;
            id.set_node_id("N-1");
            fill(r, req->id(), id);
        } else if (type == kind::k_machine_type.type) {
            spec::MachineType mt;
            mt.set_machine_type(m_script.role);
            fill(r, req->id(), mt);
        } else {
            return {grpc::StatusCode::NOT_FOUND, "resource doesn't exist"};
        }
        return grpc::Status::OK;
    }
    grpc::Status List(grpc::ServerContext*, const cosi::resource::ListRequest* req,
                      grpc::ServerWriter<cosi::resource::ListResponse>* writer) override {
        Served s(m_rec, "List " + req->type());
        cosi::resource::ListResponse item;
        const std::string& type = req->type();
        if (type == kind::k_link_statuses.type) {
            spec::LinkStatus ls;
            ls.set_type(::talos::resource::definitions::enums::LINK_ETHER);
            ls.set_hardware_addr(std::string("\x02\x00\x00\x00\x00\x01", 6));
            fill(item.mutable_resource(), "eth0", ls);
        } else if (type == kind::k_volume_statuses.type) {
            spec::VolumeStatus vs;
            vs.set_location("/dev/sda5");
            fill(item.mutable_resource(), "STATE", vs);
        } else if (type == kind::k_disks.type) {
            spec::Disk d;
            d.set_dev_path("/dev/sda");
            fill(item.mutable_resource(), "sda", d);
        } else {
            return grpc::Status::OK;
        }
        writer->Write(item);
        return grpc::Status::OK;
    }

    Recorder& m_rec;
    Script& m_script;
};

// A TLS server on 127.0.0.1 with an ephemeral port, playing one node.
class FakeNode {
  public:
    FakeNode(const char* crt, const char* key, bool require_client_cert, Script script = {})
        : m_script(script), m_machine(m_rec, m_script), m_state(m_rec, m_script) {
        grpc::SslServerCredentialsOptions ssl(
            require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
        ssl.pem_root_certs = fx::k_ca_crt;
        ssl.pem_key_cert_pairs.push_back({key, crt});
        grpc::ServerBuilder b;
        b.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &m_port);
        b.RegisterService(&m_machine);
        b.RegisterService(&m_state);
        m_server = b.BuildAndStart();
    }
    ~FakeNode() { m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2)); }
    Address address() const { return *parse_address("127.0.0.1:" + std::to_string(m_port)); }
    std::vector<Recorder::Arrival> arrivals() { return m_rec.arrivals(); }
    bool reads_overlapped() { return m_rec.overlapped(); }

  private:
    Recorder m_rec;
    Script m_script;
    FakeMachine m_machine;
    FakeState m_state;
    int m_port = 0;
    std::unique_ptr<grpc::Server> m_server;
};

inspection::Settings admin() {
    inspection::Settings s;
    s.context = TalosContext{"t", {}, {}, fx::k_ca_crt, fx::k_client_crt, fx::k_client_key};
    s.talosconfig_path = "/tc";
    s.call_timeout_ms = 5000;
    return s;
}

inspection::NodeReport read_one(const Address& a, const inspection::Settings& s) {
    auto out = inspection::read_nodes({a}, s);
    REQUIRE(out.size() == 1);
    return std::move(out.front());
}

std::vector<std::string> timing_calls(const Value& item) {
    std::vector<std::string> out;
    for (const auto& t : item["status"]["timings"]) {
        out.push_back(t["call"].get<std::string>() + (t["ok"].get<bool>() ? "" : " (failed)"));
    }
    return out;
}

std::vector<std::string> result_codes(const Value& results) {
    std::vector<std::string> out;
    for (const auto& r : results) {
        out.push_back(r["severity"].get<std::string>() + " " +
                      r["tags"][std::string(doc::k_tag_code)].get<std::string>());
    }
    return out;
}

std::string get(std::string_view type) {
    return "Get " + std::string(type);
}
std::string list(std::string_view type) {
    return "List " + std::string(type);
}

// The reads of phase 3, in the order the engine starts them.
const std::vector<std::string> k_machine_reads = {get(kind::k_system_information.type),
                                                  list(kind::k_link_statuses.type),
                                                  "Hostname",
                                                  get(kind::k_machine_status.type),
                                                  list(kind::k_volume_statuses.type),
                                                  list(kind::k_disks.type)};

std::vector<std::string> configured_reads() {
    auto out = k_machine_reads;
    out.push_back(get(kind::k_machine_config.type));
    out.push_back(get(kind::k_persistent_config.type)); // the same type, id persistent
    out.push_back(get(kind::k_cluster_info.type));
    out.push_back(get(kind::k_identity.type));
    return out;
}

} // namespace

TEST_CASE("a reader's control plane: Version, the reads at once, MachineType, then etcd",
          "[inspection][engine][grpc]") {
    Script script;
    script.config_readable = false;
    script.hostname_waits_for_reads = true;
    FakeNode node(fx::k_server_crt, fx::k_server_key, true, script);
    auto report = read_one(node.address(), admin());

    auto seen = node.arrivals();
    REQUIRE(seen.size() == 1 + 10 + 1 + 2);
    CHECK(seen[0].method == "Version");
    CHECK(seen[0].answered_before == 0);
    auto reads = configured_reads();
    std::multiset<std::string> phase3;
    for (std::size_t i = 1; i <= 10; ++i) {
        phase3.insert(seen[i].method);
        CHECK(seen[i].answered_before >= 1); // after Version
    }
    CHECK(phase3 == std::multiset<std::string>(reads.begin(), reads.end()));
    CHECK(node.reads_overlapped());
    CHECK(seen[11].method == get(kind::k_machine_type.type));
    CHECK(seen[11].answered_before == 11); // every read answered first
    CHECK(std::multiset<std::string>{seen[12].method, seen[13].method} ==
          std::multiset<std::string>{"EtcdMemberList", "EtcdStatus"});
    CHECK(seen[12].answered_before >= 12);
    CHECK(seen[13].answered_before >= 12);

    // The client's record is in the order the calls started.
    auto expected = std::vector<std::string>{"Version"};
    expected.insert(expected.end(), reads.begin(), reads.end());
    expected[1 + 6] += " (failed)"; // MachineConfig: PermissionDenied
    expected[1 + 7] += " (failed)"; // and the persistent one: no second warning
    expected.push_back(get(kind::k_machine_type.type));
    expected.push_back("EtcdMemberList");
    expected.push_back("EtcdStatus");
    CHECK(timing_calls(report.item) == expected);

    const inspection::View v(report.item);
    CHECK(v.mode() == "configured");
    CHECK(v.access() == "os:admin");
    CHECK(v.tls_outcome() == "verified");
    CHECK(v.talos_version() == "v1.13.9");
    CHECK(v.uuid() == "U-1");
    CHECK(v.hostname() == "node-1");
    CHECK(v.node_id() == "N-1");
    CHECK(v.role() == "controlplane"); // from MachineType
    CHECK(v.cluster_id() == "CID");    // from Infos
    CHECK(v.config() == nullptr);
    CHECK(v.etcd_member_id() == "00000000000000aa");
    CHECK(v.talosconfig_path() == "/tc");
    CHECK(result_codes(report.results) == std::vector<std::string>{"warning PermissionDenied"});
}

TEST_CASE("an admin's worker: the configuration names the role, no MachineType, no etcd",
          "[inspection][engine][grpc]") {
    Script script;
    script.role = ::resource::config::WORKER;
    FakeNode node(fx::k_server_crt, fx::k_server_key, true, script);
    auto report = read_one(node.address(), admin());
    auto seen = node.arrivals();
    CHECK(seen.size() == 1 + 10);
    auto expected = std::vector<std::string>{"Version"};
    auto reads = configured_reads();
    expected.insert(expected.end(), reads.begin(), reads.end());
    CHECK(timing_calls(report.item) == expected);
    const inspection::View v(report.item);
    CHECK(v.role() == "worker");
    REQUIRE(v.config() != nullptr);
    CHECK_FALSE(v.has_etcd());
    CHECK(v.node_id() == "N-1");
    CHECK(report.results.empty());
}

TEST_CASE("a node in maintenance mode answers the probe, its reads follow",
          "[inspection][engine][grpc]") {
    FakeNode node(fx::k_other_server_crt, fx::k_other_server_key, false);
    auto report = read_one(node.address(), admin());
    auto expected = std::vector<std::string>{"Version (failed)", "Version"};
    expected.insert(expected.end(), k_machine_reads.begin(), k_machine_reads.end());
    CHECK(timing_calls(report.item) == expected);
    auto seen = node.arrivals();
    REQUIRE(seen.size() == 1 + 6); // the mutual TLS dial never got a call through
    CHECK(seen[0].method == "Version");
    const inspection::View v(report.item);
    CHECK(v.mode() == "maintenance");
    CHECK(v.access() == "os:reader");
    CHECK(v.tls_outcome() == "insecure");
    CHECK(v.tls_fingerprint() == fx::k_other_server_fingerprint);
    CHECK(v.uuid() == "U-1");
    CHECK(inspection::find(report.item, inspection::field::k_facts) == nullptr);
    CHECK(result_codes(report.results) == std::vector<std::string>{"info Maintenance"});
    CHECK(report.results[0]["message"] == node.address().text +
                                              ": in maintenance mode (certificate fingerprint " +
                                              fx::k_other_server_fingerprint + ")");
}

TEST_CASE("another cluster's node refuses the probe: UnknownAuthority, nothing read",
          "[inspection][engine][grpc]") {
    FakeNode node(fx::k_other_server_crt, fx::k_other_server_key, true);
    auto report = read_one(node.address(), admin());
    CHECK(node.arrivals().empty());
    CHECK(timing_calls(report.item) ==
          std::vector<std::string>{"Version (failed)", "Version (failed)"});
    const inspection::View v(report.item);
    CHECK(v.mode() == "configured");
    CHECK(v.tls_outcome() == "unknownAuthority");
    CHECK(v.tls_fingerprint().empty()); // a handshake that failed verification leaves none
    CHECK(inspection::find(report.item, inspection::field::k_identity) == nullptr);
    CHECK(result_codes(report.results) == std::vector<std::string>{"error UnknownAuthority"});
    CHECK(report.results[0]["message"] ==
          node.address().text +
              ": its Talos API certificate is not signed by the CA of talosconfig context \"t\": "
              "the node belongs to another cluster, or the talosconfig is the wrong one");
}

TEST_CASE("insecure reads: pinned to the node's fingerprint, or refused by the pin",
          "[inspection][engine][grpc]") {
    FakeNode node(fx::k_server_crt, fx::k_server_key, false);
    inspection::Settings s;
    s.insecure = true;
    s.call_timeout_ms = 5000;
    s.fingerprints = {fx::k_server_fingerprint};
    auto pinned = read_one(node.address(), s);
    CHECK(inspection::View(pinned.item).mode() == "maintenance");
    CHECK(inspection::View(pinned.item).tls_outcome() == "pinned");
    CHECK(pinned.results.empty()); // no probe, no Maintenance info
    CHECK(pinned.item["spec"].contains("talosconfig") == false);

    s.fingerprints = {fx::k_other_server_fingerprint};
    auto refused = read_one(node.address(), s);
    CHECK(inspection::View(refused.item).mode() == "unreachable");
    CHECK(result_codes(refused.results) == std::vector<std::string>{"error FingerprintMismatch"});
    CHECK(timing_calls(refused.item) == std::vector<std::string>{"Version (failed)"});
}

TEST_CASE("a node that does not answer is unreachable after one call, reports keep input order",
          "[inspection][engine][grpc]") {
    Script worker;
    worker.role = ::resource::config::WORKER;
    FakeNode a(fx::k_server_crt, fx::k_server_key, true, worker);
    FakeNode b(fx::k_other_server_crt, fx::k_other_server_key, false);
    const Address nobody = *parse_address("127.0.0.1:1");
    auto s = admin();
    s.concurrency = 2;
    auto out = inspection::read_nodes({nobody, a.address(), b.address(), nobody}, s);
    REQUIRE(out.size() == 4);
    std::vector<std::string> names;
    std::vector<std::string> modes;
    for (const auto& r : out) {
        names.push_back(inspection::View(r.item).name());
        modes.push_back(inspection::View(r.item).mode());
    }
    CHECK(names ==
          std::vector<std::string>{nobody.text, a.address().text, b.address().text, nobody.text});
    CHECK(modes ==
          std::vector<std::string>{"unreachable", "configured", "maintenance", "unreachable"});
    CHECK(inspection::View(out[0].item).tls_outcome() == "failed");
    CHECK(result_codes(out[0].results) == std::vector<std::string>{"error Unreachable"});
    CHECK(timing_calls(out[0].item) == std::vector<std::string>{"Version (failed)"});
    CHECK(inspection::read_nodes({}, s).empty());
}

TEST_CASE("through an endpoint: every node over one channel, the endpoint's refusals named apart",
          "[inspection][engine][grpc]") {
    FakeNode endpoint(fx::k_server_crt, fx::k_server_key, true);
    auto s = admin();
    s.endpoint = endpoint.address();
    std::vector<Address> nodes = {*parse_address("10.0.0.5"), *parse_address("worker-endpoint"),
                                  *parse_address("other-cluster")};
    auto out = inspection::read_nodes(nodes, s);
    REQUIRE(out.size() == 3);
    inspection::View ok(out[0].item);
    CHECK(ok.mode() == "configured");
    CHECK(ok.via_endpoint() == endpoint.address().text);
    CHECK(out[0].results.empty());

    CHECK(inspection::View(out[1].item).mode() == "unreachable");
    CHECK(result_codes(out[1].results) == std::vector<std::string>{"error EndpointRefused"});
    std::string refused = out[1].results[0]["message"];
    CHECK(refused.find("worker-endpoint: not reached: the endpoint " + endpoint.address().text +
                       " does not forward") == 0);

    CHECK(inspection::View(out[2].item).tls_outcome() == "unknownAuthority");
    CHECK(result_codes(out[2].results) == std::vector<std::string>{"error UnknownAuthority"});
    std::string other = out[2].results[0]["message"];
    CHECK(other.find("other-cluster: its Talos API certificate, as the endpoint") == 0);
    // No probe through an endpoint: only the one Version of each refused node reached it.
    int versions = 0;
    for (const auto& a : endpoint.arrivals()) {
        versions += a.method == "Version" ? 1 : 0;
    }
    CHECK(versions == 3);
}

TEST_CASE("an endpoint of another CA refuses every node: EndpointRefused, not UnknownAuthority",
          "[inspection][engine][grpc]") {
    FakeNode endpoint(fx::k_other_server_crt, fx::k_other_server_key, true);
    auto s = admin();
    s.endpoint = endpoint.address();
    auto r = read_one(*parse_address("10.0.0.5"), s);
    CHECK(inspection::View(r.item).mode() == "unreachable");
    CHECK(result_codes(r.results) == std::vector<std::string>{"error EndpointRefused"});
    std::string m = r.results[0]["message"];
    CHECK(m.find("10.0.0.5: not reached: the endpoint " + endpoint.address().text +
                 " refused this client") == 0);
}
