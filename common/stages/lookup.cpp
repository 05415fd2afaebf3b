#include "common/stages/lookup.h"

#include "common/inspection/view.h"
#include "common/talos/address.h"

namespace ichor::stages {

using doc::Value;

KubeNodeIndex::KubeNodeIndex(const std::vector<Value>& kube_nodes) {
    for (const auto& k : kube_nodes) {
        const Value* name = doc::find_path(k, "metadata.name");
        m_by_name.emplace(name != nullptr && name->is_string() ? name->get<std::string>()
                                                               : std::string(),
                          &k); // emplace keeps the first
        const Value* addrs = doc::find_path(k, "status.addresses");
        if (addrs == nullptr || !addrs->is_array()) {
            continue;
        }
        for (const auto& a : *addrs) {
            if (a.value("type", "") == "InternalIP") {
                m_by_internal_ip.emplace(a.value("address", ""), &k);
            }
        }
    }
}

const Value* KubeNodeIndex::find(const std::string& hostname, const std::string& address) const {
    if (auto it = m_by_name.find(hostname); it != m_by_name.end()) {
        return it->second;
    }
    auto it = m_by_internal_ip.find(address);
    return it != m_by_internal_ip.end() ? it->second : nullptr;
}

InspectionIndex::InspectionIndex(const doc::ResourceList& list) {
    for (const auto& item : list.items) {
        const inspection::View v(item);
        if (!v.is_inspection()) {
            continue;
        }
        const std::string node = v.node();
        const std::int64_t port = v.port().value_or(talos::k_apid_port);
        m_by_address.emplace(node, &item); // emplace keeps the first
        m_by_address.emplace(node + ":" + std::to_string(port), &item);
    }
}

const Value* InspectionIndex::find(const std::string& address) const {
    auto it = m_by_address.find(address);
    return it != m_by_address.end() ? it->second : nullptr;
}

std::string condition_status(const doc::Value& obj, std::string_view type) {
    const doc::Value* c = doc::find_path(obj, "status.conditions");
    if (c == nullptr || !c->is_array()) {
        return {};
    }
    for (const auto& cond : *c) {
        if (cond.is_object() && cond.value("type", "") == type) {
            return cond.value("status", "");
        }
    }
    return {};
}

} // namespace ichor::stages
