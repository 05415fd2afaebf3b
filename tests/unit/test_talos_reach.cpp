// One way to reach a node (common/talos/reach.h): the decision of reach_through, and every read of
// a node that the inspection and the stages make following it, against an in-process gRPC server
// with Ed25519 certificates on 127.0.0.1 playing an endpoint (it records the `node` each call
// names) or a node dialled directly. A read that decided otherwise would dial the node itself
// (127.0.0.77, where nothing listens) and the server would see nothing of it.
#include "common/inspection/status.h"
#include "common/inspection/view.h"
#include "common/stages/hold.h"
#include "common/stages/inspect.h"
#include "common/stages/node_check.h"
#include "common/stages/reclaim.h"
#include "common/talos/reach.h"
#include "machine/machine.grpc.pb.h"
#include "test_plan_support.h"
#include "test_talos_fixtures.h"
#include "v1alpha1/state.grpc.pb.h"

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace ichor;
namespace fx = ichor::talos::fixtures;
using ichor::talos::Address;
using ichor::talos::parse_address;

namespace {

// Each call's method and the `node` it named ("" without one), from every service's thread.
class Arrivals {
  public:
    void add(grpc::ServerContext* ctx, const std::string& method) {
        auto node = ctx->client_metadata().find("node");
        std::string name = node == ctx->client_metadata().end()
                               ? std::string()
                               : std::string(node->second.data(), node->second.size());
        std::lock_guard lock(m_mu);
        m_nodes.insert(name);
        m_methods.insert(method);
    }
    std::set<std::string> nodes() {
        std::lock_guard lock(m_mu);
        return m_nodes;
    }
    std::set<std::string> methods() {
        std::lock_guard lock(m_mu);
        return m_methods;
    }

  private:
    std::mutex m_mu;
    std::set<std::string> m_nodes;
    std::set<std::string> m_methods;
};

class Machine final : public machine::MachineService::Service {
  public:
    explicit Machine(Arrivals& a) : m_a(a) {}
    grpc::Status Version(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                         machine::VersionResponse* resp) override {
        m_a.add(ctx, "Version");
        resp->add_messages()->mutable_version()->set_tag("v1.13.9");
        return grpc::Status::OK;
    }
    grpc::Status ApplyConfiguration(grpc::ServerContext* ctx,
                                    const machine::ApplyConfigurationRequest* req,
                                    machine::ApplyConfigurationResponse* resp) override {
        m_a.add(ctx, req->dry_run() ? "ApplyConfiguration (dry run)" : "ApplyConfiguration");
        resp->add_messages()->set_mode_details("Dry run summary:\nApplied configuration without a "
                                               "reboot (skipped in dry-run).\nConfig diff:\n\nNo "
                                               "changes.");
        return grpc::Status::OK;
    }

    grpc::Status EtcdStatus(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                            machine::EtcdStatusResponse* resp) override {
        m_a.add(ctx, "EtcdStatus");
        resp->add_messages()->mutable_member_status()->set_member_id(7);
        return grpc::Status::OK;
    }
    grpc::Status Reset(grpc::ServerContext* ctx, const machine::ResetRequest*,
                       machine::ResetResponse* resp) override {
        m_a.add(ctx, "Reset");
        resp->add_messages()->set_actor_id("actor-1");
        return grpc::Status::OK;
    }

  private:
    Arrivals& m_a;
};

class State final : public cosi::resource::State::Service {
  public:
    explicit State(Arrivals& a) : m_a(a) {}
    grpc::Status Get(grpc::ServerContext* ctx, const cosi::resource::GetRequest* req,
                     cosi::resource::GetResponse*) override {
        m_a.add(ctx, "Get " + req->type());
        return {grpc::StatusCode::NOT_FOUND, "resource doesn't exist"};
    }
    grpc::Status List(grpc::ServerContext* ctx, const cosi::resource::ListRequest* req,
                      grpc::ServerWriter<cosi::resource::ListResponse>*) override {
        m_a.add(ctx, "List " + req->type());
        return grpc::Status::OK;
    }

  private:
    Arrivals& m_a;
};

// A Talos API on 127.0.0.1 with an ephemeral port, mutual TLS with the fixtures' CA.
class Server {
  public:
    Server() {
        grpc::SslServerCredentialsOptions ssl(
            GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
        ssl.pem_root_certs = fx::k_ca_crt;
        ssl.pem_key_cert_pairs.push_back({fx::k_server_key, fx::k_server_crt});
        grpc::ServerBuilder b;
        b.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &m_port);
        b.RegisterService(&m_machine);
        b.RegisterService(&m_state);
        m_server = b.BuildAndStart();
    }
    ~Server() { m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2)); }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    [[nodiscard]] Address address() const {
        return *parse_address("127.0.0.1:" + std::to_string(m_port));
    }
    Arrivals arrivals;

  private:
    Machine m_machine{arrivals};
    State m_state{arrivals};
    int m_port = 0;
    std::unique_ptr<grpc::Server> m_server;
};

ichor::talos::TalosContext context() {
    return {"t", {}, {}, fx::k_ca_crt, fx::k_client_crt, fx::k_client_key};
}

// The node behind the endpoint: nothing listens there, so a direct dial reaches nothing.
const Address k_node = *parse_address("127.0.0.77");

stages::InspectOptions inspect_options(const std::optional<Address>& endpoint) {
    stages::InspectOptions io;
    io.context = context();
    io.endpoint = endpoint;
    io.call_timeout_ms = 2000;
    io.concurrency = 1;
    return io;
}

} // namespace

TEST_CASE("reach_through: the endpoint with a credential only, else the node itself",
          "[talos][reach]") {
    const auto ctx = context();
    const auto ep = parse_address("127.0.0.100"); // never dialled: no call is made
    for (const bool with_context : {true, false}) {
        for (const bool insecure : {true, false}) {
            for (const bool with_endpoint : {true, false}) {
                const ichor::talos::TalosContext* c = with_context ? &ctx : nullptr;
                const std::optional<Address> e =
                    with_endpoint ? std::optional<Address>(*ep) : std::nullopt;
                const bool through = with_context && !insecure && with_endpoint;
                INFO("context " << with_context << ", insecure " << insecure << ", endpoint "
                                << with_endpoint);
                auto decided = ichor::talos::reach_through(c, insecure, e);
                CHECK(decided.has_value() == through);
                const ichor::talos::Reach reach = ichor::talos::reach_for(c, insecure, e, 1000);
                CHECK((reach.endpoint() != nullptr) == through);
                CHECK(reach.mutual() == (with_context && !insecure));
                // What the Inspection records is what the engine reaches.
                inspection::Settings s;
                if (with_context) {
                    s.context = ctx;
                }
                s.insecure = insecure;
                s.endpoint = e;
                const inspection::RunContext run(s);
                const doc::Value item = inspection::skeleton(k_node, run);
                CHECK(inspection::View(item).via_endpoint() == (through ? ep->text : ""));
            }
        }
    }
}

TEST_CASE("every read of a node reaches it the way reach_through decides", "[talos][reach]") {
    Server server;
    const Address endpoint = server.address();
    const std::set<std::string> through{k_node.host};

    SECTION("the inspection (and the release's zero-drift read, inspect_node)") {
        doc::Value results = doc::Value::array();
        const doc::Value item = stages::inspect_node(k_node, inspect_options(endpoint), results);
        CHECK(inspection::View(item).via_endpoint() == endpoint.text);
        CHECK(server.arrivals.methods().count("Version") == 1);
        CHECK(server.arrivals.nodes() == through);
    }
    SECTION("the inspection, directly") {
        doc::Value results = doc::Value::array();
        const doc::Value item =
            stages::inspect_node(endpoint, inspect_options(std::nullopt), results);
        CHECK(inspection::View(item).via_endpoint().empty());
        CHECK(server.arrivals.methods().count("Version") == 1);
        CHECK(server.arrivals.nodes() == std::set<std::string>{""});
    }
    SECTION("hold apply's reads of the configurations") {
        auto read = stages::configs_reader(context(), endpoint, 2000)({k_node, k_node}, 2);
        REQUIRE(read.size() == 2);
        CHECK(server.arrivals.methods() ==
              std::set<std::string>{"Get MachineConfigs.config.talos.dev"});
        CHECK(server.arrivals.nodes() == through);
    }
    SECTION("hold apply's reads, directly") {
        auto read = stages::configs_reader(context(), std::nullopt, 2000)({endpoint}, 1);
        REQUIRE(read.size() == 1);
        CHECK(server.arrivals.nodes() == std::set<std::string>{""});
    }
    SECTION("the node check's dry run, as the machine's Inspection was read") {
        test::PlanFixture fx;
        doc::ResourceList plan;
        plan.items.push_back(fx.inspection(k_node.text, "prod-w-2", "w-1.13"));
        plan.items[0]["spec"]["endpoint"] = endpoint.text;
        REQUIRE_FALSE(fx.run(plan, {}, {}, true).error);
        stages::NodeCheckOptions o;
        o.cluster = "prod";
        o.ns = "ichor-system";
        o.talos_cluster = &fx.cluster;
        o.bundle = &fx.bundle;
        o.inspect = inspect_options(std::nullopt);
        const stages::Outcome out = stages::node_check(plan, o);
        REQUIRE_FALSE(out.error);
        CHECK(out.done == 1);
        CHECK(server.arrivals.methods() == std::set<std::string>{"ApplyConfiguration (dry run)"});
        CHECK(server.arrivals.nodes() == through);
    }
    // Reclaim dials the node itself (it takes no --endpoints): the node is the server here.
    SECTION("reclaim's ask of an etcd member, through the node") {
        auto node = stages::make_node({endpoint, context(), "", 2000});
        CHECK(node->member_answers(k_node.host));
        CHECK(server.arrivals.methods() == std::set<std::string>{"EtcdStatus"});
        CHECK(server.arrivals.nodes() == through);
    }
    SECTION("reclaim's reset, of the node itself") {
        auto node = stages::make_node({endpoint, context(), "", 2000});
        auto actor = node->reset({});
        REQUIRE(actor.ok());
        CHECK(*actor == "actor-1");
        CHECK(server.arrivals.methods() == std::set<std::string>{"Reset"});
        CHECK(server.arrivals.nodes() == std::set<std::string>{""});
    }
}
