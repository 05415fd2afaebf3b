// How a node is reached, decided in one place: through an endpoint, with `node` metadata on every
// call (talosctl's endpoints and nodes: one channel for the whole cluster), or dialled directly.
// Whether there is an endpoint is chosen once, by cli::TalosOptions::endpoint_for; every client of
// a node that a stage makes with a credential comes from here.
#pragma once

#include "common/talos/address.h"
#include "common/talos/client.h"

#include <optional>

namespace ichor::talos {

class Reach {
  public:
    // Through `endpoint` when set (its channel made now, shared by the copies and the clients),
    // else directly; `dial` is the credential and bounds of every call either way.
    Reach(const DialOptions& dial, const std::optional<Address>& endpoint);

    // A client of `node`: through the endpoint the bare host (apid adds the port), else a dial of
    // `node` itself. Does not connect (NodeClient).
    [[nodiscard]] NodeClient client(const Address& node) const;
    // The endpoint the nodes are reached through; null: each is dialled directly.
    [[nodiscard]] const Endpoint* endpoint() const { return m_endpoint ? &*m_endpoint : nullptr; }

  private:
    DialOptions m_dial;
    std::optional<Endpoint> m_endpoint;
};

} // namespace ichor::talos
