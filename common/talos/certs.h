// PEM and X.509 helpers for the Talos API's certificates (all Ed25519), over OpenSSL.
// Errors carry only the reason ("not a PEM certificate: ..."); the caller adds which file and
// field it was.
#pragma once

#include "common/util/result.h"

#include <string>
#include <string_view>

namespace ichor::talos {

// Talos writes PKCS#8 keys under the label "ED25519 PRIVATE KEY", which OpenSSL and gRPC refuse.
// Returns the PEM with that label's BEGIN/END lines rewritten to "PRIVATE KEY"; any other text is
// returned unchanged.
std::string relabel_private_key(std::string_view pem);

// The first certificate of the PEM parses (kind Config).
Status check_certificate(std::string_view pem);
// The PEM holds a private key OpenSSL can load (after relabel_private_key) (kind Config).
Status check_private_key(std::string_view pem);
// The private key is the one of the certificate's public key (kind Config).
Status check_key_matches(std::string_view cert_pem, std::string_view key_pem);

// talosctl's certificate fingerprint (siderolabs/crypto x509.SPKIFingerprint): standard padded
// base64 of the SHA-256 of the certificate's DER SubjectPublicKeyInfo. Talos prints it when it
// issues a maintenance certificate, and `--cert-fingerprint` takes it. Error (Config) when the
// PEM holds no certificate.
Result<std::string> spki_fingerprint(std::string_view cert_pem);

// Checks a fingerprint given by a user and returns it in canonical form (standard padded base64
// of 32 bytes). Usage error `bad certificate fingerprint "TEXT": REASON`.
Result<std::string> parse_fingerprint(std::string_view text);

} // namespace ichor::talos
