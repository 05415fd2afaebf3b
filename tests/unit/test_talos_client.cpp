// The node client against in-process gRPC servers with Ed25519 certificates: mutual TLS, another
// CA, maintenance-mode dials with and without a pin, deadlines, COSI reads and the envelope.
#include "common/talos/client.h"
#include "common/talos/errors.h"
#include "machine/machine.grpc.pb.h"
#include "test_talos_fixtures.h"
#include "v1alpha1/state.grpc.pb.h"

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include <thread>

using namespace ichor;
using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;

namespace {

class FakeMachine final : public machine::MachineService::Service {
    grpc::Status Version(grpc::ServerContext*, const google::protobuf::Empty*,
                         machine::VersionResponse* resp) override {
        resp->add_messages()->mutable_version()->set_tag("v1.13.9");
        return grpc::Status::OK;
    }
    // Answers with the `node` metadata it got; "slow" makes it sleep past the client's bound.
    grpc::Status Hostname(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                          machine::HostnameResponse* resp) override {
        auto node = ctx->client_metadata().find("node");
        std::string name = node == ctx->client_metadata().end()
                               ? "fake"
                               : std::string(node->second.data(), node->second.size());
        if (name == "slow") {
            std::this_thread::sleep_for(std::chrono::milliseconds(700));
        }
        resp->add_messages()->set_hostname(name);
        return grpc::Status::OK;
    }
    // An envelope whose only message carries an upstream error.
    grpc::Status EtcdMemberList(grpc::ServerContext*, const machine::EtcdMemberListRequest*,
                                machine::EtcdMemberListResponse* resp) override {
        auto* md = resp->add_messages()->mutable_metadata();
        md->set_error("etcdserver: no leader");
        md->mutable_status()->set_code(grpc::StatusCode::UNAVAILABLE);
        return grpc::Status::OK;
    }
    grpc::Status Reset(grpc::ServerContext*, const machine::ResetRequest* req,
                       machine::ResetResponse* resp) override {
        bool as_expected = req->mode() == machine::ResetRequest::SYSTEM_DISK && !req->graceful() &&
                           req->system_partitions_to_wipe_size() == 2 &&
                           req->system_partitions_to_wipe(0).label() == "STATE" &&
                           req->system_partitions_to_wipe(1).wipe();
        resp->add_messages()->set_actor_id(as_expected ? "actor-1" : "unexpected request");
        return grpc::Status::OK;
    }
};

class FakeState final : public cosi::resource::State::Service {
    grpc::Status Get(grpc::ServerContext*, const cosi::resource::GetRequest* req,
                     cosi::resource::GetResponse* resp) override {
        if (req->type() != kind::k_system_information.type || req->id() != "systeminformation") {
            return {grpc::StatusCode::NOT_FOUND, "resource doesn't exist"};
        }
        spec::SystemInformation si;
        si.set_uuid("4c4c4544-0000-1000-8000-000000000001");
        auto* r = resp->mutable_resource();
        r->mutable_metadata()->set_id(req->id());
        r->mutable_metadata()->set_type(req->type());
        r->mutable_spec()->set_proto_spec(si.SerializeAsString());
        r->mutable_spec()->set_yaml_spec("uuid: 4c4c4544-0000-1000-8000-000000000001\n");
        return grpc::Status::OK;
    }
    grpc::Status List(grpc::ServerContext* ctx, const cosi::resource::ListRequest* req,
                      grpc::ServerWriter<cosi::resource::ListResponse>* writer) override {
        if (req->type() == kind::k_discovery_members.type) {
            return members(ctx, req, writer);
        }
        for (const char* id : {"eth0", "lo"}) {
            cosi::resource::ListResponse item;
            item.mutable_resource()->mutable_metadata()->set_id(id);
            writer->Write(item);
        }
        return grpc::Status::OK;
    }
    // Two members in namespace "cluster" (none elsewhere); node "slow" sleeps past the bound,
    // node "bad" gets a spec that does not parse.
    static grpc::Status members(grpc::ServerContext* ctx, const cosi::resource::ListRequest* req,
                                grpc::ServerWriter<cosi::resource::ListResponse>* writer) {
        auto node = ctx->client_metadata().find("node");
        std::string name = node == ctx->client_metadata().end()
                               ? ""
                               : std::string(node->second.data(), node->second.size());
        if (name == "slow") {
            std::this_thread::sleep_for(std::chrono::milliseconds(700));
        }
        if (req->namespace_() != "cluster") {
            return grpc::Status::OK;
        }
        spec::DiscoveryMember cp;
        cp.set_node_id("7x1SuC8Ege5BGXdAfTEff5iQnlWZLfv9h1LGMxA2pYkC");
        cp.add_addresses()->set_ip(std::string("\x7f\x00\x00\x33", 4));
        cp.set_hostname("home-cp-1");
        cp.set_machine_type(::talos::resource::definitions::enums::TYPE_CONTROL_PLANE);
        cp.set_operating_system("Talos (v1.13.9)");
        cp.mutable_control_plane()->set_api_server_port(6443);
        spec::DiscoveryMember w;
        w.set_node_id("9aRZ2BrXvHGJcVtuKYoLmHXz0cbKS3WQpOk8Zc3gdWbE");
        w.add_addresses()->set_ip(std::string("\x7f\x00\x00\x36", 4));
        w.add_addresses()->set_ip(std::string("\xfd\x00\x00\x00\x00\x00\x00\x00"
                                              "\x00\x00\x00\x00\x00\x00\x00\x01",
                                              16));
        w.set_hostname("home-w-1.lab.example");
        w.set_machine_type(::talos::resource::definitions::enums::TYPE_WORKER);
        for (auto [id, spec] : {std::pair{"home-cp-1", &cp}, std::pair{"home-w-1", &w}}) {
            cosi::resource::ListResponse item;
            item.mutable_resource()->mutable_metadata()->set_id(id);
            item.mutable_resource()->mutable_metadata()->set_type(req->type());
            item.mutable_resource()->mutable_spec()->set_proto_spec(
                name == "bad" ? std::string("\xff\xff") : spec->SerializeAsString());
            writer->Write(item);
        }
        return grpc::Status::OK;
    }
};

// A TLS server on 127.0.0.1 with an ephemeral port.
class TestServer {
  public:
    TestServer(const char* crt, const char* key, bool require_client_cert) {
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
    ~TestServer() {
        m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    }
    Address address() const { return *parse_address("127.0.0.1:" + std::to_string(m_port)); }

  private:
    FakeMachine m_machine;
    FakeState m_state;
    int m_port = 0;
    std::unique_ptr<grpc::Server> m_server;
};

DialOptions mtls(std::int64_t timeout_ms = 5000) {
    TalosContext ctx{"t", {}, {}, fx::k_ca_crt, fx::k_client_crt, fx::k_client_key};
    return mutual_tls(ctx, timeout_ms);
}

} // namespace

TEST_CASE("mutual TLS with Ed25519 certificates answers Version", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    NodeClient c(server.address(), mtls());
    auto v = c.version();
    REQUIRE(v.ok());
    CHECK(v->version().tag() == "v1.13.9");
    CHECK(c.peer_fingerprint() == std::optional<std::string>(fx::k_server_fingerprint));
    REQUIRE(c.calls().size() == 1);
    CHECK(c.calls()[0].method == "Version");
    CHECK(c.calls()[0].ok);
}

TEST_CASE("a server from another CA is UnknownAuthority", "[talos][grpc]") {
    TestServer other(fx::k_other_server_crt, fx::k_other_server_key, false);
    NodeClient c(other.address(), mtls());
    auto v = c.version();
    REQUIRE_FALSE(v.ok());
    INFO(v.error().message);
    CHECK(v.error().code == "UnknownAuthority");
    CHECK(v.error().message.rfind(other.address().text +
                                      ": server certificate is not signed by the "
                                      "trusted CA (Version): ",
                                  0) == 0);
}

TEST_CASE("maintenance dials skip verification and can pin the fingerprint", "[talos][grpc]") {
    TestServer other(fx::k_other_server_crt, fx::k_other_server_key, false);

    NodeClient open(other.address(), insecure({}, 5000));
    auto v = open.version();
    REQUIRE(v.ok());
    CHECK(open.peer_fingerprint() == std::optional<std::string>(fx::k_other_server_fingerprint));

    NodeClient pinned(other.address(), insecure({fx::k_other_server_fingerprint}, 5000));
    CHECK(pinned.version().ok());

    NodeClient wrong(other.address(), insecure({fx::k_server_fingerprint}, 5000));
    auto w = wrong.version();
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().code == "FingerprintMismatch");
    CHECK(w.error().message == other.address().text + ": server certificate fingerprint " +
                                   fx::k_other_server_fingerprint + " does not match the pinned " +
                                   fx::k_server_fingerprint + " (Version)");
}

TEST_CASE("a call past its bound is a Timeout naming the node and the method", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    auto opts = mtls(300);
    opts.node = "slow";
    NodeClient c(server.address(), opts);
    auto h = c.hostname();
    REQUIRE_FALSE(h.ok());
    CHECK(h.error().message == "slow did not answer within 300ms (Hostname)");
    CHECK(h.error().code == "Timeout");
    CHECK(h.error().kind == ErrorKind::Unreachable);
}

TEST_CASE("node metadata reaches the server", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    auto opts = mtls();
    opts.node = "10.0.0.22";
    NodeClient c(server.address(), opts);
    CHECK(c.label() == "10.0.0.22");
    CHECK(*c.hostname() == "10.0.0.22");
}

TEST_CASE("a refused connection is Unreachable", "[talos][grpc]") {
    NodeClient c(*parse_address("127.0.0.1:1"), mtls());
    auto v = c.version();
    REQUIRE_FALSE(v.ok());
    INFO(v.error().message);
    CHECK(v.error().code == "Unreachable");
    CHECK(v.error().message.rfind("127.0.0.1:1: cannot connect (Version): ", 0) == 0);
}

TEST_CASE("COSI Get decodes specs, List streams, missing is NotFound", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    NodeClient c(server.address(), mtls());
    auto r = c.cosi_get(kind::k_system_information);
    REQUIRE(r.ok());
    CHECK(r->yaml_spec == "uuid: 4c4c4544-0000-1000-8000-000000000001\n");
    auto si = decode_spec<spec::SystemInformation>(*r);
    REQUIRE(si.ok());
    CHECK(si->uuid() == "4c4c4544-0000-1000-8000-000000000001");

    auto list = c.cosi_list(kind::k_link_statuses);
    REQUIRE(list.ok());
    REQUIRE(list->size() == 2);
    CHECK((*list)[1].metadata.id() == "lo");

    auto missing = c.cosi_get(kind::k_machine_status);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == "NotFound");
    CHECK(missing.error().message == server.address().text +
                                         ": not found (Get MachineStatuses.runtime.talos.dev): "
                                         "resource doesn't exist");
}

TEST_CASE("discovery members are listed, decoded and bounded", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    NodeClient c(server.address(), mtls());
    auto members = c.discovery_members();
    REQUIRE(members.ok());
    REQUIRE(members->size() == 2);
    const DiscoveryMember& cp = (*members)[0];
    CHECK(cp.id == "home-cp-1");
    CHECK(cp.node_id == "7x1SuC8Ege5BGXdAfTEff5iQnlWZLfv9h1LGMxA2pYkC");
    CHECK(cp.hostname == "home-cp-1");
    CHECK(cp.machine_type == "controlplane");
    CHECK(cp.addresses == std::vector<std::string>{"127.0.0.51"});
    CHECK(cp.operating_system == "Talos (v1.13.9)");
    const DiscoveryMember& w = (*members)[1];
    CHECK(w.id == "home-w-1");
    CHECK(w.hostname == "home-w-1.lab.example");
    CHECK(w.machine_type == "worker");
    CHECK(w.addresses == std::vector<std::string>{"127.0.0.54", "fd00::1"});
    CHECK(w.operating_system.empty());
    REQUIRE(c.calls().size() == 1);
    CHECK(c.calls()[0].method == "List Members.cluster.talos.dev");

    auto bad_opts = mtls();
    bad_opts.node = "bad";
    auto bad = NodeClient(server.address(), bad_opts).discovery_members();
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "BadSpec");
    CHECK(bad.error().message == "cannot decode the spec of Members.cluster.talos.dev/home-cp-1");

    auto slow_opts = mtls(300);
    slow_opts.node = "slow";
    auto slow = NodeClient(server.address(), slow_opts).discovery_members();
    REQUIRE_FALSE(slow.ok());
    CHECK(slow.error().code == "Timeout");
    CHECK(slow.error().message ==
          "slow did not answer within 300ms (List Members.cluster.talos.dev)");
}

TEST_CASE("an error inside the reply envelope fails the call", "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    NodeClient c(server.address(), mtls());
    auto m = c.etcd_member_list();
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().code == "Unavailable");
    CHECK(m.error().message ==
          server.address().text + ": unavailable (EtcdMemberList): etcdserver: no leader");
    auto actor = c.reset(ResetOptions{});
    REQUIRE(actor.ok());
    CHECK(*actor == "actor-1");
}

TEST_CASE("asynchronous calls on a loop overlap and give what the blocking ones give",
          "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    Loop loop;
    std::vector<std::string> order;
    std::optional<Result<machine::Version>> version;
    std::optional<Result<Resource>> got;
    std::optional<Result<Resource>> missing;
    std::optional<Result<std::vector<Resource>>> list;
    std::optional<Result<std::vector<machine::EtcdMember>>> members;
    {
        NodeClient c(server.address(), mtls());
        c.version(loop, [&](Result<machine::Version> v) { version.emplace(std::move(v)); });
        c.cosi_get(loop, kind::k_system_information,
                   [&](Result<Resource> r) { got.emplace(std::move(r)); });
        c.cosi_get(loop, kind::k_machine_status,
                   [&](Result<Resource> r) { missing.emplace(std::move(r)); });
        c.cosi_list(loop, kind::k_link_statuses,
                    [&](Result<std::vector<Resource>> r) { list.emplace(std::move(r)); });
        c.etcd_member_list(loop, [&](Result<std::vector<machine::EtcdMember>> r) {
            members.emplace(std::move(r));
        });
        CHECK(loop.pending() == 5);
        // The records are in the order the calls started, whatever order they end in.
        REQUIRE(c.calls().size() == 5);
        CHECK(c.calls()[0].method == "Version");
        CHECK(c.calls()[3].method == "List LinkStatuses.net.talos.dev");
        // The client goes before its calls end: they keep what they need.
    }
    loop.run();
    CHECK(loop.pending() == 0);
    REQUIRE(version);
    REQUIRE(version->ok());
    CHECK((*version)->version().tag() == "v1.13.9");
    REQUIRE(got);
    REQUIRE(got->ok());
    CHECK((*got)->yaml_spec == "uuid: 4c4c4544-0000-1000-8000-000000000001\n");
    REQUIRE(missing);
    REQUIRE_FALSE(missing->ok());
    CHECK(missing->error().message == server.address().text +
                                          ": not found (Get MachineStatuses.runtime.talos.dev): "
                                          "resource doesn't exist");
    REQUIRE(list);
    REQUIRE(list->ok());
    REQUIRE((*list)->size() == 2);
    CHECK((**list)[1].metadata.id() == "lo");
    REQUIRE(members);
    REQUIRE_FALSE(members->ok());
    CHECK(members->error().message ==
          server.address().text + ": unavailable (EtcdMemberList): etcdserver: no leader");
}

TEST_CASE("asynchronous calls are bounded, and a callback may start the next call",
          "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    auto opts = mtls(300);
    opts.node = "slow";
    NodeClient slow(server.address(), opts);
    NodeClient fast(server.address(), mtls());
    Loop loop;
    std::vector<std::string> order; // which calls ended, in the order they did
    std::optional<Result<std::string>> timed_out;
    std::optional<Result<std::string>> second;
    slow.hostname(loop, [&](Result<std::string> h) {
        order.push_back("slow Hostname");
        timed_out.emplace(std::move(h));
    });
    fast.version(loop, [&](Result<machine::Version> v) {
        order.push_back("fast Version");
        REQUIRE(v.ok());
        fast.hostname(loop, [&](Result<std::string> h) {
            order.push_back("fast Hostname");
            second.emplace(std::move(h));
        });
    });
    loop.run();
    REQUIRE(timed_out);
    REQUIRE_FALSE(timed_out->ok());
    CHECK(timed_out->error().message == "slow did not answer within 300ms (Hostname)");
    // The slow node held back nothing: both of the fast node's calls, the second started from
    // the first one's callback, ended while the slow one was still waiting.
    CHECK(order == std::vector<std::string>{"fast Version", "fast Hostname", "slow Hostname"});
    REQUIRE(second);
    REQUIRE(second->ok());
    CHECK(**second == "fake");
    CHECK(fast.calls().size() == 2);
}

TEST_CASE("a loop with nothing started returns at once", "[talos]") {
    Loop loop;
    loop.run();
    CHECK(loop.pending() == 0);
}

TEST_CASE("clients through one endpoint share its connection, each naming its node",
          "[talos][grpc]") {
    TestServer server(fx::k_server_crt, fx::k_server_key, true);
    auto opts = mtls();
    opts.node = "ignored"; // the endpoint's own dial names no node
    Endpoint ep(server.address(), opts);
    NodeClient a(ep, "10.0.0.22");
    NodeClient b(ep, "10.0.0.23");
    CHECK(a.label() == "10.0.0.22");
    CHECK(*a.hostname() == "10.0.0.22");
    CHECK(*b.hostname() == "10.0.0.23");
    // The endpoint's certificate, seen once for both.
    REQUIRE(a.peer_fingerprint());
    CHECK(b.peer_fingerprint() == a.peer_fingerprint());
    CHECK(ep.address().text == server.address().text);
}

TEST_CASE("an endpoint from another CA fails every node's call with UnknownAuthority",
          "[talos][grpc]") {
    TestServer server(fx::k_other_server_crt, fx::k_other_server_key, true);
    Endpoint ep(server.address(), mtls());
    NodeClient a(ep, "10.0.0.22");
    auto v = a.version();
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().code == "UnknownAuthority");
    CHECK(own_connection_failure(v.error().message));
}
