// How a failed Talos API call becomes an Error: a machine-readable code (the tag
// ichor.maesh.dev/code), a kind (which decides the exit code) and a message that names the node
// as the user wrote it, the method, and keeps gRPC's own text.
#pragma once

#include "common/doc/vocabulary.h"
#include "common/util/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::talos {

// Codes of failed calls. Any gRPC status not listed keeps its gRPC name in UpperCamel
// ("InvalidArgument", "FailedPrecondition", "Unimplemented", ...).
namespace code {
// The deadline passed; refused, no route, no DNS (the Kubernetes client's own, spelled once).
inline constexpr std::string_view k_timeout = vocab::code::k_timeout;
inline constexpr std::string_view k_unreachable = vocab::code::k_unreachable;
// The server's certificate is not from our CA.
inline constexpr std::string_view k_unknown_authority = "UnknownAuthority";
inline constexpr std::string_view k_unavailable = "Unavailable"; // any other UNAVAILABLE
inline constexpr std::string_view k_permission_denied = "PermissionDenied";
inline constexpr std::string_view k_not_found = "NotFound";
inline constexpr std::string_view k_internal = "Internal";
inline constexpr std::string_view k_invalid_argument =
    "InvalidArgument"; // the node refused the input
inline constexpr std::string_view k_fingerprint_mismatch = "FingerprintMismatch";
// Through an endpoint: the endpoint itself refused (its TLS handshake failed, or it does not
// forward); not a finding about the node behind it.
inline constexpr std::string_view k_endpoint_refused = "EndpointRefused";
} // namespace code

// Through an endpoint, whether a failed call's message is this client's own connection failure
// (gRPC's "failed to connect to all addresses", a failed handshake with the endpoint) rather than
// an error the endpoint's apid sent back for the forwarded hop (Go's text, "connection error:
// desc = ...").
bool own_connection_failure(std::string_view message);
// Through an endpoint, whether the endpoint's apid reported that the forwarded hop's TLS handshake
// failed on the target's certificate (Go's "x509: certificate signed by unknown authority"): the
// target is not of the endpoint's cluster. classify_failure leaves that Unavailable (a direct
// node's own hop is its problem); the inspection through an endpoint makes it UnknownAuthority.
bool forwarded_unknown_authority(std::string_view message);

// True for the codes after which a node is taken as gone (Timeout, Unreachable, Unavailable): it
// did not answer, or its API answers nothing but UNAVAILABLE. What is left of its reading is not
// asked for, and it counts as unreachable. A node that failed one call (Internal,
// PermissionDenied, UnknownAuthority, ...) is not gone.
bool node_gone(std::string_view code);

// The gRPC status of a failed call; `code` is a grpc::StatusCode value.
struct CallFailure {
    int code = 0;
    std::string message;
};

// Classifies a failed call to `label` (the node as written) of `method` (short name, "Version").
//   DEADLINE_EXCEEDED: "LABEL did not answer within 20s (Version)", Timeout, kind Unreachable.
//   UNAVAILABLE: when gRPC itself could not connect ("failed to connect to all addresses", a
//     failed handshake, no DNS): UnknownAuthority if the server certificate failed verification
//     (OpenSSL "certificate verify failed"), kind Config; Unreachable if the connection was
//     refused or had no route or name, kind Unreachable. Any other UNAVAILABLE was sent by the
//     node (an etcd that is down, a failed proxy hop): Unavailable, kind Unreachable.
//   PERMISSION_DENIED, NOT_FOUND: kind Config. INTERNAL and UNKNOWN: Internal, kind Unreachable
//     (the node failed, not this program). Others: kind Findings.
// Every message but the timeout's is "LABEL: SUMMARY (METHOD): GRPC_MESSAGE".
Error classify_failure(std::string_view label, std::string_view method, const CallFailure& failure,
                       std::int64_t timeout_ms);

// "LABEL: server certificate fingerprint GOT does not match the pinned PINS (METHOD)",
// FingerprintMismatch, kind Findings.
Error fingerprint_mismatch(std::string_view label, std::string_view method, std::string_view got,
                           const std::vector<std::string>& pins);

} // namespace ichor::talos
