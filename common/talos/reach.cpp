#include "common/talos/reach.h"

namespace ichor::talos {

Reach::Reach(const DialOptions& dial, const std::optional<Address>& endpoint) : m_dial(dial) {
    if (endpoint) {
        m_endpoint.emplace(*endpoint, dial);
    }
}

NodeClient Reach::client(const Address& node) const {
    return m_endpoint ? NodeClient(*m_endpoint, node.host) : NodeClient(node, m_dial);
}

} // namespace ichor::talos
