#include "common/talos/resources.h"

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
