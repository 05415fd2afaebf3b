// Request paths of the Kubernetes API, built from their parts. Pure; no network.
#pragma once

#include "common/doc/value.h"
#include "common/doc/vocabulary.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::kube {

// The Ichor API group and version of our custom resources.
using vocab::k_ichor_group;
using vocab::k_ichor_version;

// "/api/v1/..." for the core group (group empty), else "/apis/GROUP/VERSION/...". An empty ns
// gives a cluster-scoped path, an empty name the collection. Each part is percent-encoded (a no-op
// for valid Kubernetes names).
std::string resource_path(std::string_view group, std::string_view version, std::string_view plural,
                          std::string_view ns, std::string_view name = {});

// A path of our group: /apis/ichor.maesh.dev/v1alpha1/namespaces/NS/PLURAL[/NAME], with PLURAL
// one of talosclusters, talosmachines, talosconfigpatches.
std::string ichor_path(std::string_view plural, std::string_view ns, std::string_view name = {});

// /api/v1/namespaces/NS/secrets[/NAME].
std::string secret_path(std::string_view ns, std::string_view name = {});

// The path of an object from its apiVersion ("v1" or "GROUP/VERSION"), metadata.namespace
// (else `default_ns`) and metadata.name. An object without a name gives the collection path (for
// create with generateName).
std::string object_path(const doc::Value& obj, std::string_view plural,
                        std::string_view default_ns);

// PATH + "/status".
std::string status_path(std::string_view object_path);

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string url_encode(std::string_view s);

// "?k=v&k2=v2" with values encoded, or "" when empty. Pairs with an empty value are dropped.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& params);

} // namespace ichor::kube
