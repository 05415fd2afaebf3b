// Pure helpers of the Client's transport: the server URL's parts, the tls-server-name rewrite and
// the proxy choice. Internal to common/kube; exposed for tests.
#pragma once

#include "common/kube/config.h"
#include "common/util/env.h"

#include <optional>
#include <string>

namespace ichor::kube {

struct ServerUrl {
    std::string scheme; // https or http
    std::string host;   // without brackets
    std::string port;   // explicit, or 443 / 80
    std::string prefix; // path prefix of the server URL, "" or "/k8s/clusters/x"
    [[nodiscard]] std::string host_port() const; // "host:port", IPv6 bracketed
};

// Parses "scheme://host[:port][/prefix]". nullopt when there is no host.
std::optional<ServerUrl> parse_server_url(const std::string& server);

// The URL to request for `path` and, when the cluster has a tls-server-name, the CURLOPT_CONNECT_TO
// entry and Host header that send it to the real server while TLS checks the given name.
struct Target {
    std::string url;
    std::string connect_to;  // "" or "NAME:PORT:HOST:PORT"
    std::string host_header; // "" or "Host: host:port"
};
Target request_target(const ServerUrl& server, const ClusterConfig& cluster,
                      const std::string& path);

// The proxy for requests to `server`: the cluster's proxy-url (unconditional), else for https
// HTTPS_PROXY/https_proxy, for http HTTP_PROXY/http_proxy, unless the host is localhost or a
// loopback address. no_proxy is NO_PROXY/no_proxy when the proxy came from the environment.
// An empty proxy means a direct connection.
struct ProxyChoice {
    std::string proxy;
    std::string no_proxy;
};
ProxyChoice choose_proxy(const ServerUrl& server, const ClusterConfig& cluster,
                         const Environment& env);

bool is_loopback_host(const std::string& host);

} // namespace ichor::kube
