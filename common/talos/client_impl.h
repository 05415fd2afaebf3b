// Internal to common/talos: the state of one NodeClient, built with its channel in client.cpp and
// used by its calls in client_calls.cpp.
#pragma once

#include "common/talos/client.h"
#include "common/talos/errors.h"
#include "machine/machine.grpc.pb.h"
#include "storage/storage.grpc.pb.h"
#include "v1alpha1/state.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <mutex>

namespace ichor::talos {

using Clock = std::chrono::steady_clock;

// What the TLS handshakes of one client saw. Written from gRPC's threads.
struct PeerState {
    std::mutex mu;
    std::optional<std::string> fingerprint;
    bool mismatch = false;
    // The server certificate last fingerprinted: the clients of an endpoint share it, so the
    // endpoint's certificate is parsed once for the cluster, not once per node.
    std::string last_pem;

    void record(std::optional<std::string> fp, bool mismatched) {
        std::lock_guard lock(mu);
        fingerprint = std::move(fp);
        mismatch = mismatched;
    }
};

struct Endpoint::State {
    Address address;
    DialOptions options;
    std::shared_ptr<PeerState> peer = std::make_shared<PeerState>();
    std::shared_ptr<grpc::Channel> channel;
};

struct NodeClient::Impl {
    Address address;
    DialOptions options;
    std::string label;
    std::shared_ptr<PeerState> peer = std::make_shared<PeerState>();
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<machine::MachineService::Stub> machine;
    std::unique_ptr<storage::StorageService::Stub> storage;
    std::unique_ptr<cosi::resource::State::Stub> state;
    std::vector<CallRecord> calls;

    Impl(Address a, DialOptions o);
    // Through an endpoint: its channel and handshake state, `node` in every call.
    Impl(const Endpoint::State& endpoint, std::string node);

    // Sets the call's deadline and the `node` metadata.
    void prepare(grpc::ClientContext& ctx) const;
    // Adds the call to `calls` (in the order calls start) and returns its index for finish().
    std::size_t begin(std::string_view method);
    // Completes the call's record and, on a mutual-TLS channel, notes the server certificate.
    void finish(std::size_t call, Clock::time_point start, bool ok, grpc::ClientContext& ctx);
    // The classified error of a failed call.
    Error failure(std::string_view method, const grpc::Status& st) const;

    // The first message of Talos's envelope; an error in its metadata fails the call.
    template <class Msg>
    Result<Msg> first(const google::protobuf::RepeatedPtrField<Msg>& messages,
                      std::string_view method) const {
        if (messages.empty()) {
            return make_error(ErrorKind::Unreachable,
                              label + ": empty reply (" + std::string(method) + ")", {},
                              std::string(code::k_internal));
        }
        const auto& md = messages[0].metadata();
        if (!md.error().empty()) {
            int c = md.status().code() != 0 ? md.status().code() : grpc::StatusCode::UNKNOWN;
            return classify_failure(label, method, {c, md.error()}, options.call_timeout_ms);
        }
        return messages[0];
    }
};

} // namespace ichor::talos
