// Talos API client credentials minted from the bundle's Talos API CA, and the talosconfig that
// carries them (what `ichor cluster credentials` and `talosctl config new` write). The private key
// is returned to the caller for writing to a 0600 file; it is never printed.
#pragma once

#include "common/bundle/bundle.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::bundle {

struct ClientCertificate {
    std::string crt_pem;
    std::string key_pem; // PKCS#8, labelled "ED25519 PRIVATE KEY" as Talos writes it
};

// A fresh Ed25519 key and a certificate signed by the bundle's Talos API CA: Subject O = the
// roles (e.g. os:admin), ExtKeyUsage exactly [clientAuth], KeyUsage digitalSignature, valid from
// `now_unix` - 5 min to now + ttl. Config error when the bundle has no CA key or it does not load.
Result<ClientCertificate> issue_client_certificate(const Bundle& bundle,
                                                   const std::vector<std::string>& roles,
                                                   std::int64_t ttl_seconds, std::int64_t now_unix);

// A talosconfig with one context `context` (current), as talosctl writes it: ca, crt and key as
// base64 of PEM.
std::string talosconfig_yaml(const std::string& context, const std::vector<std::string>& endpoints,
                             const std::string& ca_pem, const ClientCertificate& cert);

} // namespace ichor::bundle
