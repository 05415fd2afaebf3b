#include "common/kube/paths.h"

#include <cstdio>

namespace ichor::kube {

std::string url_encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

std::string resource_path(std::string_view group, std::string_view version, std::string_view plural,
                          std::string_view ns, std::string_view name) {
    std::string p = group.empty() ? "/api/" + url_encode(version)
                                  : "/apis/" + url_encode(group) + "/" + url_encode(version);
    if (!ns.empty()) {
        p += "/namespaces/" + url_encode(ns);
    }
    p += "/" + url_encode(plural);
    if (!name.empty()) {
        p += "/" + url_encode(name);
    }
    return p;
}

std::string ichor_path(std::string_view plural, std::string_view ns, std::string_view name) {
    return resource_path(k_ichor_group, k_ichor_version, plural, ns, name);
}

std::string secret_path(std::string_view ns, std::string_view name) {
    return resource_path("", "v1", "secrets", ns, name);
}

std::string object_path(const doc::Value& obj, std::string_view plural,
                        std::string_view default_ns) {
    std::string api_version = doc::get_string(obj, "apiVersion");
    std::string group;
    std::string version = api_version;
    if (auto slash = api_version.find('/'); slash != std::string::npos) {
        group = api_version.substr(0, slash);
        version = api_version.substr(slash + 1);
    }
    std::string ns = doc::get_string(obj, "metadata.namespace");
    return resource_path(group, version, plural, ns.empty() ? default_ns : std::string_view(ns),
                         doc::get_string(obj, "metadata.name"));
}

std::string status_path(std::string_view object_path) {
    return std::string(object_path) + "/status";
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
    std::string q;
    for (const auto& [k, v] : params) {
        if (v.empty()) {
            continue;
        }
        q += q.empty() ? "?" : "&";
        q += url_encode(k) + "=" + url_encode(v);
    }
    return q;
}

} // namespace ichor::kube
