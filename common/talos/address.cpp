#include "common/talos/address.h"

#include <algorithm>
#include <cctype>

namespace ichor::talos {

namespace {

Error bad(std::string_view text, std::string_view reason) {
    return make_error(ErrorKind::Usage,
                      "bad address \"" + std::string(text) + "\": " + std::string(reason));
}

bool valid_host_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

Result<int> parse_port(std::string_view text, std::string_view port) {
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad(text, "port \"" + std::string(port) + "\" is not a number");
    }
    int p = std::stoi(std::string(port));
    if (p < 1 || p > 65535) {
        return bad(text, "port " + std::string(port) + " is out of range");
    }
    return p;
}

Result<Address> parse_bracketed(std::string_view text) {
    auto close = text.find(']');
    if (close == std::string_view::npos) {
        return bad(text, "missing \"]\"");
    }
    Address a{std::string(text), std::string(text.substr(1, close - 1)), k_apid_port};
    if (a.host.empty() || a.host.find(':') == std::string::npos) {
        return bad(text, "brackets must hold an IPv6 address");
    }
    auto rest = text.substr(close + 1);
    if (rest.empty()) {
        return a;
    }
    if (rest.front() != ':') {
        return bad(text, "unexpected text after \"]\"");
    }
    auto port = parse_port(text, rest.substr(1));
    if (!port) {
        return port.error();
    }
    a.port = *port;
    return a;
}

} // namespace

std::string Address::target() const {
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return h + ":" + std::to_string(port);
}

Result<Address> parse_address(std::string_view text) {
    if (text.empty()) {
        return bad(text, "empty");
    }
    if (text.find("://") != std::string_view::npos) {
        return bad(text, "give a host or host:port, not a URL");
    }
    if (text.front() == '[') {
        return parse_bracketed(text);
    }
    auto colons = std::count(text.begin(), text.end(), ':');
    if (colons > 1) { // a bare IPv6 literal, no port
        bool ok = std::all_of(text.begin(), text.end(), [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
        });
        return ok ? Result<Address>(Address{std::string(text), std::string(text), k_apid_port})
                  : Result<Address>(bad(text, "not an IPv6 address (write [v6]:port)"));
    }
    auto colon = text.find(':');
    Address a{std::string(text), std::string(text.substr(0, colon)), k_apid_port};
    if (a.host.empty()) {
        return bad(text, "missing host");
    }
    if (!std::all_of(a.host.begin(), a.host.end(), valid_host_char)) {
        return bad(text, "host \"" + a.host + "\" has characters a host name cannot have");
    }
    if (colon != std::string_view::npos) {
        auto port = parse_port(text, text.substr(colon + 1));
        if (!port) {
            return port.error();
        }
        a.port = *port;
    }
    return a;
}

} // namespace ichor::talos
