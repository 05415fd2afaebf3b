// Certificates in PEM: fingerprints for comparison and for printing. Never handles keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::util {

// "sha256:<hex>" of the DER of the first certificate in the PEM text; nullopt if none parses.
std::optional<std::string> certificate_fingerprint(std::string_view pem);

// The Subject O values of the first certificate (Talos API roles such as "os:admin"); empty when
// none parses.
std::vector<std::string> certificate_organizations(std::string_view pem);

} // namespace ichor::util
