// A client of one Talos node's API (apid, port 50000), dialled directly or reached through an
// endpoint (an Endpoint: one connection to a control plane's apid, which forwards each call to the
// node named in its `node` metadata, as talosctl 1.14 does; reference/talos-api.md §1.2).
//
// Two ways to dial (reference/talos-api.md §1):
//   TlsMode::Mutual   mTLS with a talosconfig context: the server certificate must chain to the
//                     context's CA and name the address (or DialOptions::server_name); the client
//                     presents its Ed25519 certificate. Talos API certificates are Ed25519, which
//                     works because the system gRPC is built on OpenSSL.
//   TlsMode::Insecure maintenance mode: TLS without a client certificate and without chain
//                     verification, optionally pinned to certificate fingerprints (talosctl
//                     --cert-fingerprint, see certs.h spki_fingerprint).
//
// Every call is bounded by DialOptions::call_timeout_ms. A failed call returns an Error classified
// by errors.h (code Timeout, UnknownAuthority, Unreachable, FingerprintMismatch, ...). Replies in
// Talos's messages envelope are unwrapped: the first message is returned, and a message whose
// metadata carries an error is a failure too. A client is used by one thread at a time; clients
// are cheap, make one per node. The asynchronous forms start a call on a Loop (loop.h) and return
// at once, so that one thread can read many nodes, several calls per node at a time.
//
// The suite never applies a configuration to a node, and this client cannot: ApplyConfiguration is
// sent only with dry_run set (dry_run_configuration). scripts/check-conventions refuses a request
// without it anywhere in common/ and tools/. The only write is Reset (for reclaim).
#pragma once

#include "common/talos/address.h"
#include "common/talos/loop.h"
#include "common/talos/resources.h"
#include "common/talos/talosconfig.h"
#include "common/util/result.h"
#include "machine/machine.pb.h"
#include "storage/storage.pb.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ichor::talos {

inline constexpr std::int64_t k_default_call_timeout_ms = 20000;
inline constexpr int k_max_receive_bytes = 32 * 1024 * 1024; // as talosctl and apid

enum class TlsMode { Mutual, Insecure };

struct DialOptions {
    TlsMode mode = TlsMode::Mutual;
    std::string ca_pem;  // Mutual: trusted CA
    std::string crt_pem; // Mutual: client certificate
    std::string key_pem; // Mutual: client key (any label relabel_private_key accepts)
    std::vector<std::string>
        fingerprints;        // Insecure: accepted (canonical, parse_fingerprint); empty = any
    std::string node;        // when set, sent as `node` metadata: the target behind this endpoint
    std::string server_name; // when set, the TLS name checked instead of the address host
    std::int64_t call_timeout_ms = k_default_call_timeout_ms;
};

// Mutual TLS with a context's credentials.
DialOptions mutual_tls(const TalosContext& context, std::int64_t call_timeout_ms);
// Maintenance mode, pinned when `fingerprints` is not empty.
DialOptions insecure(std::vector<std::string> fingerprints, std::int64_t call_timeout_ms);

// A node's answer to a dry run of ApplyConfiguration (talosctl apply-config --dry-run): nothing
// was applied. machined's text is "Dry run summary:\n<what the mode would do> (skipped in
// dry-run).\nConfig diff:\n\n<unified diff of its running configuration against the one sent,
// or \"No changes.\">".
struct DryRunAnswer {
    std::string mode_details;
    std::vector<std::string> warnings; // machined sends none with a dry run today; kept if it does
};

struct ResetOptions {
    bool graceful = false; // leave etcd first (needs a healthy etcd)
    bool reboot = true;    // false: power off
    // Volume IDs to wipe on the system disk; empty wipes the whole system disk.
    std::vector<std::string> system_volumes = {"STATE", "EPHEMERAL"};
};

// One call made, for the timing an inspection records.
struct CallRecord {
    std::string method; // short name, "Version", "Get MachineStatuses.runtime.talos.dev"
    std::int64_t duration_ms = 0;
    bool ok = false;
};

// One gRPC channel to an endpoint, shared by the NodeClients of every node reached through it:
// one TLS handshake and one channel set-up for the whole cluster. The TLS identity verified is the
// endpoint's (DialOptions as for a direct dial; its `node` is ignored). Copies share the channel;
// it may be used from several threads at once (gRPC channels are thread-safe) and lives as long as
// the last copy or client made from it.
class Endpoint {
  public:
    Endpoint(Address address, DialOptions options);
    [[nodiscard]] const Address& address() const;

    struct State;

  private:
    friend class NodeClient;
    std::shared_ptr<State> m_state;
};

class NodeClient {
  public:
    // Does not connect: gRPC connects on the first call, so errors arrive from the calls.
    NodeClient(Address address, DialOptions options);
    // The node `node` (a bare host: apid adds the port) through `endpoint`: every call carries
    // `node` metadata; messages name the node; peer_fingerprint() is the endpoint's.
    NodeClient(const Endpoint& endpoint, std::string node);
    ~NodeClient();
    NodeClient(NodeClient&&) noexcept;
    NodeClient& operator=(NodeClient&&) noexcept;

    // The node as messages name it: DialOptions::node when set, else the address as written.
    [[nodiscard]] const std::string& label() const;

    Result<machine::Version> version();
    Result<std::string> hostname();
    Result<std::vector<storage::Disk>> disks();

    // COSI Get (NotFound when missing) and List (empty when none).
    Result<Resource> cosi_get(std::string_view ns, std::string_view type, std::string_view id);
    Result<Resource> cosi_get(const ResourceRef& ref) { return cosi_get(ref.ns, ref.type, ref.id); }
    Result<std::vector<Resource>> cosi_list(std::string_view ns, std::string_view type);
    Result<std::vector<Resource>> cosi_list(const ResourceRef& ref) {
        return cosi_list(ref.ns, ref.type);
    }

    // Talos discovery's members as this node sees them (COSI List of kind::k_discovery_members,
    // bounded like every call); empty when the node has discovery off.
    Result<std::vector<DiscoveryMember>> discovery_members();

    // etcd: needs a control-plane node; the member list needs quorum unless query_local.
    Result<std::vector<machine::EtcdMember>> etcd_member_list(bool query_local = false);
    Result<machine::EtcdMemberStatus> etcd_status();

    // Starts a reset and returns its actor ID at once (the node resets in the background).
    Result<std::string> reset(const ResetOptions& options);

    // Asynchronous forms of the reads above: each starts the call on `loop` and returns at once;
    // `done` runs on the thread that runs the loop, when the call ends, with what the blocking
    // form would have returned. Calls made this way may overlap; the client must stay on the
    // loop's thread, but it may be destroyed while its calls are still in flight.
    template <class T> using Done = std::function<void(Result<T>)>;
    void version(Loop& loop, Done<machine::Version> done);
    void hostname(Loop& loop, Done<std::string> done);
    void cosi_get(Loop& loop, const ResourceRef& ref, Done<Resource> done);
    void cosi_list(Loop& loop, const ResourceRef& ref, Done<std::vector<Resource>> done);
    void etcd_member_list(Loop& loop, Done<std::vector<machine::EtcdMember>> done);
    void etcd_status(Loop& loop, Done<machine::EtcdMemberStatus> done);
    void discovery_members(Loop& loop, Done<std::vector<DiscoveryMember>> done);
    // ApplyConfiguration of `config` in dry-run mode (mode AUTO, as talosctl's default), started
    // on `loop`; `config` is copied into the request at once. The node validates it with its own
    // code and answers what it would change; nothing is applied. A configuration the node rejects
    // is an error of code InvalidArgument whose message ends with the node's words
    // ("LABEL: InvalidArgument (ApplyConfiguration): WORDS"); bounded by the call timeout like
    // every call. There is no other form of ApplyConfiguration (see the top of this file).
    void dry_run_configuration(Loop& loop, const std::string& config, Done<DryRunAnswer> done);

    // The SPKI fingerprint of the certificate the server presented on the last handshake
    // (either mode; through an endpoint, the endpoint's); nullopt before any handshake got that
    // far.
    [[nodiscard]] std::optional<std::string> peer_fingerprint() const;
    // Every call made so far, in the order they started.
    [[nodiscard]] const std::vector<CallRecord>& calls() const;

    struct Impl;

  private:
    // Shared with the asynchronous calls in flight, which may end after the client is gone.
    std::shared_ptr<Impl> m_impl;
};

} // namespace ichor::talos
