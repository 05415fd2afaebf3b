#include "common/talos/client.h"

#include "common/talos/certs.h"
#include "common/talos/client_impl.h"

#include <absl/synchronization/mutex.h>
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace ichor::talos {

namespace {

// Maintenance mode: no chain verification, only the optional fingerprint pin (talosctl's
// MatchSPKIFingerprints: the leaf's SPKI digest must be one of the pins).
class PinVerifier final : public grpc::experimental::ExternalCertificateVerifier {
  public:
    PinVerifier(std::shared_ptr<PeerState> peer, std::vector<std::string> pins)
        : m_peer(std::move(peer)), m_pins(std::move(pins)) {}

    bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
                std::function<void(grpc::Status)> /*callback*/,
                grpc::Status* sync_status) override {
        auto fp =
            spki_fingerprint(std::string(request->peer_cert().data(), request->peer_cert().size()));
        if (!fp) {
            m_peer->record(std::nullopt, false);
            *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no server certificate");
            return true;
        }
        bool ok = m_pins.empty() || std::find(m_pins.begin(), m_pins.end(), *fp) != m_pins.end();
        m_peer->record(*fp, !ok);
        *sync_status =
            ok ? grpc::Status::OK
               : grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                              "server certificate fingerprint " + *fp + " is not pinned");
        return true; // answered synchronously
    }
    void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

  private:
    std::shared_ptr<PeerState> m_peer;
    std::vector<std::string> m_pins;
};

std::shared_ptr<grpc::ChannelCredentials> make_credentials(const DialOptions& o,
                                                           const std::shared_ptr<PeerState>& peer) {
    if (o.mode == TlsMode::Mutual) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = o.ca_pem;
        ssl.pem_cert_chain = o.crt_pem;
        ssl.pem_private_key = relabel_private_key(o.key_pem);
        return grpc::SslCredentials(ssl);
    }
    grpc::experimental::TlsChannelCredentialsOptions tls;
    tls.set_verify_server_certs(false);
    tls.set_check_call_host(false);
    tls.set_certificate_verifier(
        grpc::experimental::ExternalCertificateVerifier::Create<PinVerifier>(peer, o.fingerprints));
    return grpc::experimental::TlsCredentials(tls);
}

// Once per process, before the first channel:
// - gRPC logs handshake failures to stderr itself; this library never prints (the same text comes
//   back in the call's status), so its log goes nowhere;
// - Debian builds abseil with mutex deadlock detection on, which records every lock order gRPC
//   takes in a global graph: 3% of inspect's CPU over 256 nodes (bench/HISTORY.md, "abseil's
//   deadlock detection"), for a report nobody reads.
void configure_grpc() {
    static std::once_flag once;
    std::call_once(once, [] {
        gpr_set_log_function([](gpr_log_func_args*) {});
        absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    });
}

std::shared_ptr<grpc::Channel> make_channel(const Address& a, const DialOptions& o,
                                            const std::shared_ptr<PeerState>& peer) {
    configure_grpc();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(k_max_receive_bytes);
    // Each client has its own connections, so one node's failures never leak into another's.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    if (!o.server_name.empty()) {
        args.SetSslTargetNameOverride(o.server_name);
    }
    return grpc::CreateCustomChannel(a.target(), make_credentials(o, peer), args);
}

} // namespace

NodeClient::Impl::Impl(Address a, DialOptions o)
    : address(std::move(a)), options(std::move(o)),
      label(options.node.empty() ? address.text : options.node),
      channel(make_channel(address, options, peer)),
      machine(machine::MachineService::NewStub(channel)),
      storage(storage::StorageService::NewStub(channel)),
      state(cosi::resource::State::NewStub(channel)) {}

NodeClient::Impl::Impl(const Endpoint::State& e, std::string node)
    : address(e.address), options(e.options), peer(e.peer), channel(e.channel),
      machine(machine::MachineService::NewStub(channel)),
      storage(storage::StorageService::NewStub(channel)),
      state(cosi::resource::State::NewStub(channel)) {
    options.node = std::move(node);
    label = options.node;
}

Endpoint::Endpoint(Address address, DialOptions options) : m_state(std::make_shared<State>()) {
    m_state->address = std::move(address);
    m_state->options = std::move(options);
    m_state->options.node.clear();
    m_state->channel = make_channel(m_state->address, m_state->options, m_state->peer);
}

const Address& Endpoint::address() const {
    return m_state->address;
}

void NodeClient::Impl::prepare(grpc::ClientContext& ctx) const {
    // gRPC takes deadlines only on the system clock.
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(options.call_timeout_ms));
    if (!options.node.empty()) {
        ctx.AddMetadata("node", options.node);
    }
}

std::size_t NodeClient::Impl::begin(std::string_view method) {
    calls.push_back({std::string(method), 0, false});
    return calls.size() - 1;
}

void NodeClient::Impl::finish(std::size_t call, Clock::time_point start, bool ok,
                              grpc::ClientContext& ctx) {
    calls[call].duration_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    calls[call].ok = ok;
    if (!ok || options.mode != TlsMode::Mutual) {
        return;
    }
    auto auth = ctx.auth_context();
    if (!auth) {
        return;
    }
    auto pems = auth->FindPropertyValues("x509_pem_cert");
    if (pems.empty()) {
        return;
    }
    // The channel keeps its connection, so the certificate rarely changes between calls:
    // parse it only when it does (the parse was a fifth of the client's CPU: bench/HISTORY.md, "the
    // certificate parse").
    std::string_view pem(pems.front().data(), pems.front().size());
    std::lock_guard lock(peer->mu);
    if (pem == peer->last_pem) {
        return;
    }
    peer->last_pem.assign(pem);
    auto fp = spki_fingerprint(peer->last_pem);
    peer->fingerprint = fp ? std::optional<std::string>(*fp) : std::nullopt;
    peer->mismatch = false;
}

Error NodeClient::Impl::failure(std::string_view method, const grpc::Status& st) const {
    if (options.mode == TlsMode::Insecure && st.error_code() == grpc::StatusCode::UNAVAILABLE) {
        std::lock_guard lock(peer->mu);
        if (peer->mismatch && peer->fingerprint) {
            return fingerprint_mismatch(label, method, *peer->fingerprint, options.fingerprints);
        }
    }
    return classify_failure(label, method, {st.error_code(), st.error_message()},
                            options.call_timeout_ms);
}

DialOptions mutual_tls(const TalosContext& context, std::int64_t call_timeout_ms) {
    DialOptions o;
    o.mode = TlsMode::Mutual;
    o.ca_pem = context.ca_pem;
    o.crt_pem = context.crt_pem;
    o.key_pem = context.key_pem;
    o.call_timeout_ms = call_timeout_ms;
    return o;
}

DialOptions insecure(std::vector<std::string> fingerprints, std::int64_t call_timeout_ms) {
    DialOptions o;
    o.mode = TlsMode::Insecure;
    o.fingerprints = std::move(fingerprints);
    o.call_timeout_ms = call_timeout_ms;
    return o;
}

NodeClient::NodeClient(Address address, DialOptions options)
    : m_impl(std::make_shared<Impl>(std::move(address), std::move(options))) {}
NodeClient::NodeClient(const Endpoint& endpoint, std::string node)
    : m_impl(std::make_shared<Impl>(*endpoint.m_state, std::move(node))) {}
NodeClient::~NodeClient() = default;
NodeClient::NodeClient(NodeClient&&) noexcept = default;
NodeClient& NodeClient::operator=(NodeClient&&) noexcept = default;

const std::string& NodeClient::label() const {
    return m_impl->label;
}

std::optional<std::string> NodeClient::peer_fingerprint() const {
    std::lock_guard lock(m_impl->peer->mu);
    return m_impl->peer->fingerprint;
}

const std::vector<CallRecord>& NodeClient::calls() const {
    return m_impl->calls;
}

} // namespace ichor::talos
