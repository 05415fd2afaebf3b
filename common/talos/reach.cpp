#include "common/talos/reach.h"

#include <utility>

namespace ichor::talos {

std::optional<Address> reach_through(const TalosContext* context, bool insecure,
                                     const std::optional<Address>& endpoint) {
    if (context == nullptr || insecure) {
        return std::nullopt;
    }
    return endpoint;
}

Reach reach_for(const TalosContext* context, bool insecure, const std::optional<Address>& endpoint,
                std::int64_t call_timeout_ms, std::vector<std::string> fingerprints) {
    DialOptions dial = context != nullptr && !insecure
                           ? mutual_tls(*context, call_timeout_ms)
                           : talos::insecure(std::move(fingerprints), call_timeout_ms);
    return {std::move(dial), reach_through(context, insecure, endpoint)};
}

Reach::Reach(DialOptions dial, const std::optional<Address>& endpoint) : m_dial(std::move(dial)) {
    if (endpoint) {
        m_endpoint.emplace(*endpoint, m_dial);
    }
}

NodeClient Reach::client(const Address& node) const {
    return m_endpoint ? NodeClient(*m_endpoint, node.host) : NodeClient(node, m_dial);
}

} // namespace ichor::talos
