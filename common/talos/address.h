// Addresses of Talos API endpoints, written as talosctl accepts them: "host", "host:port",
// "[v6]", "[v6]:port" (a bare IPv6 literal such as "fd00::1" is taken as a host). The port
// defaults to 50000, apid's.
#pragma once

#include "common/util/result.h"

#include <string>
#include <string_view>

namespace ichor::talos {

inline constexpr int k_apid_port = 50000;

struct Address {
    std::string text; // as the user wrote it; messages name the node by this
    std::string host; // without brackets
    int port = k_apid_port;

    // "host:port", IPv6 in brackets: the gRPC target.
    [[nodiscard]] std::string target() const;
};

// Parses one address. Errors are Usage errors: `bad address "TEXT": REASON`.
Result<Address> parse_address(std::string_view text);

} // namespace ichor::talos
