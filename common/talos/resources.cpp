#include "common/talos/resources.h"

#include "common/doc/vocabulary.h"

#include <arpa/inet.h>

#include <array>

namespace ichor::talos {

std::string format_mac(std::string_view bytes) {
    static constexpr std::string_view k_hex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < bytes.size(); ++i) {
        auto b = static_cast<unsigned char>(bytes[i]);
        if (i != 0) {
            out += ':';
        }
        out += k_hex[b >> 4];
        out += k_hex[b & 0x0f];
    }
    return out;
}

std::string format_ip(std::string_view bytes) {
    std::array<char, INET6_ADDRSTRLEN> buf{};
    int family = bytes.size() == 4 ? AF_INET : bytes.size() == 16 ? AF_INET6 : 0;
    if (family == 0 || inet_ntop(family, bytes.data(), buf.data(), buf.size()) == nullptr) {
        return {};
    }
    return buf.data();
}

Result<std::vector<DiscoveryMember>> decode_discovery_members(const std::vector<Resource>& list) {
    std::vector<DiscoveryMember> out;
    out.reserve(list.size());
    for (const Resource& r : list) {
        auto s = decode_spec<spec::DiscoveryMember>(r);
        if (!s.ok()) {
            return s.error();
        }
        DiscoveryMember m{r.metadata.id(),
                          s->node_id(),
                          s->hostname(),
                          std::string(machine_type_name(s->machine_type())),
                          {},
                          s->operating_system()};
        for (const auto& a : s->addresses()) {
            std::string ip = format_ip(a.ip());
            if (ip.empty()) {
                return make_error(ErrorKind::Internal,
                                  "discovery member " + r.metadata.id() + " has an address of " +
                                      std::to_string(a.ip().size()) + " bytes",
                                  {}, vocab::code::k_bad_spec);
            }
            m.addresses.push_back(std::move(ip));
        }
        out.push_back(std::move(m));
    }
    return out;
}

bool is_physical(const spec::LinkStatus& link) {
    return link.type() == ::talos::resource::definitions::enums::LINK_ETHER && link.kind().empty();
}

std::string_view machine_stage_name(int stage) {
    static constexpr std::array<std::string_view, 9> k_names = {
        "unknown",   "booting",       "installing", "maintenance", "running",
        "rebooting", "shutting down", "resetting",  "upgrading"};
    return stage >= 0 && stage < static_cast<int>(k_names.size()) ? k_names[stage] : "unknown";
}

std::string_view machine_type_name(int machine_type) {
    switch (machine_type) {
    case ::resource::config::INIT:
        return "init";
    case ::resource::config::CONTROL_PLANE:
        return "controlplane";
    case ::resource::config::WORKER:
        return "worker";
    default:
        return "unknown";
    }
}

std::string_view volume_phase_name(int phase) {
    static constexpr std::array<std::string_view, 8> k_names = {
        "waiting", "failed", "missing", "located", "provisioned", "prepared", "ready", "closed"};
    return phase >= 0 && phase < static_cast<int>(k_names.size()) ? k_names[phase] : "unknown";
}

} // namespace ichor::talos
