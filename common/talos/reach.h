// How a node is reached, decided in one place (reach_through): through an endpoint, with `node`
// metadata on every call (talosctl's endpoints and nodes: one channel for the whole cluster), or
// dialled directly. Whether there is an endpoint is chosen once, by
// cli::TalosOptions::endpoint_for; every client of a node that the inspection or a stage makes
// comes from a Reach of reach_for, and what records the way (an Inspection's spec.endpoint) asks
// reach_through.
#pragma once

#include "common/talos/address.h"
#include "common/talos/client.h"
#include "common/talos/talosconfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ichor::talos {

// The endpoint a read of nodes goes through, or none (each node dialled itself): `endpoint` with
// a credential (`context`, not `insecure`: mutual TLS); never for an insecure read (maintenance
// mode, a pinned fingerprint), which an endpoint does not forward. The one decision.
std::optional<Address> reach_through(const TalosContext* context, bool insecure,
                                     const std::optional<Address>& endpoint);

class Reach;

// How the nodes of a read are reached: mutual TLS with `context` unless `insecure` (or no
// context), then insecure pinned to `fingerprints` (empty: any); through the endpoint
// reach_through gives (its channel made now, shared by the copies and the clients), else directly.
// Every call bounded by `call_timeout_ms`.
Reach reach_for(const TalosContext* context, bool insecure, const std::optional<Address>& endpoint,
                std::int64_t call_timeout_ms, std::vector<std::string> fingerprints = {});

class Reach {
  public:
    // A client of `node`: through the endpoint the bare host (apid adds the port), else a dial of
    // `node` itself. Does not connect (NodeClient).
    [[nodiscard]] NodeClient client(const Address& node) const;
    // The endpoint the nodes are reached through; null: each is dialled directly.
    [[nodiscard]] const Endpoint* endpoint() const { return m_endpoint ? &*m_endpoint : nullptr; }
    // Whether the nodes are read with a credential (mutual TLS), else insecurely.
    [[nodiscard]] bool mutual() const { return m_dial.mode == TlsMode::Mutual; }

  private:
    friend Reach reach_for(const TalosContext*, bool, const std::optional<Address>&, std::int64_t,
                           std::vector<std::string>);
    Reach(DialOptions dial, const std::optional<Address>& endpoint);

    DialOptions m_dial;
    std::optional<Endpoint> m_endpoint;
};

} // namespace ichor::talos
