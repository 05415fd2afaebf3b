#include "common/kube/transport.h"

#include <arpa/inet.h>

#include <algorithm>

namespace ichor::kube {

namespace {

std::string bracket(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string env_any(const Environment& env, const char* upper, const char* lower) {
    std::string v = env.get_or(upper, "");
    return v.empty() ? env.get_or(lower, "") : v;
}

} // namespace

std::string ServerUrl::host_port() const {
    return bracket(host) + ":" + port;
}

std::optional<ServerUrl> parse_server_url(const std::string& server) {
    ServerUrl u;
    auto sep = server.find("://");
    if (sep == std::string::npos) {
        return std::nullopt;
    }
    u.scheme = server.substr(0, sep);
    std::string rest = server.substr(sep + 3);
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    u.prefix = slash == std::string::npos ? "" : rest.substr(slash);
    while (!u.prefix.empty() && u.prefix.back() == '/') {
        u.prefix.pop_back();
    }
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string::npos) {
            return std::nullopt;
        }
        u.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':') {
            u.port = authority.substr(close + 2);
        }
    } else {
        auto colon = authority.rfind(':');
        u.host = authority.substr(0, colon);
        if (colon != std::string::npos) {
            u.port = authority.substr(colon + 1);
        }
    }
    if (u.host.empty()) {
        return std::nullopt;
    }
    if (u.port.empty()) {
        u.port = u.scheme == "http" ? "80" : "443";
    }
    return u;
}

Target request_target(const ServerUrl& server, const ClusterConfig& cluster,
                      const std::string& path) {
    Target t;
    if (cluster.tls_server_name.empty() || server.scheme != "https") {
        t.url = server.scheme + "://" + server.host_port() + server.prefix + path;
        return t;
    }
    const std::string& name = cluster.tls_server_name;
    t.url = "https://" + bracket(name) + ":" + server.port + server.prefix + path;
    t.connect_to = bracket(name) + ":" + server.port + ":" + server.host_port();
    t.host_header = "Host: " + server.host_port();
    return t;
}

bool is_loopback_host(const std::string& host) {
    if (host == "localhost") {
        return true;
    }
    unsigned char buf[16];
    if (::inet_pton(AF_INET, host.c_str(), buf) == 1) {
        return buf[0] == 127;
    }
    if (::inet_pton(AF_INET6, host.c_str(), buf) == 1) {
        static const unsigned char k_loop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        return std::equal(buf, buf + 16, k_loop);
    }
    return false;
}

ProxyChoice choose_proxy(const ServerUrl& server, const ClusterConfig& cluster,
                         const Environment& env) {
    if (!cluster.proxy_url.empty()) {
        return {cluster.proxy_url, ""};
    }
    if (is_loopback_host(server.host)) {
        return {};
    }
    std::string proxy = server.scheme == "https" ? env_any(env, "HTTPS_PROXY", "https_proxy")
                                                 : env_any(env, "HTTP_PROXY", "http_proxy");
    if (proxy.empty()) {
        return {};
    }
    return {proxy, env_any(env, "NO_PROXY", "no_proxy")};
}

} // namespace ichor::kube
