#include "common/talos/errors.h"

#include "common/util/strings.h"

#include <grpcpp/support/status_code_enum.h>

#include <array>

namespace ichor::talos {

namespace {

bool contains_any(std::string_view text, std::initializer_list<std::string_view> needles) {
    std::string lower = util::to_lower(text);
    for (auto n : needles) {
        if (lower.find(util::to_lower(n)) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// gRPC's own text when this client could not set up a connection at all. Anything else with
// UNAVAILABLE came from the node (apid or a service behind it), so the node itself was reached.
bool is_own_connection_failure(std::string_view msg) {
    return contains_any(
        msg, {"failed to connect to all addresses", "dns resolution failed", "handshake failed"});
}

bool is_unknown_authority(std::string_view msg) {
    return is_own_connection_failure(msg) &&
           contains_any(msg, {"certificate verify failed", "unable to get local issuer certificate",
                              "self signed certificate", "self-signed certificate",
                              "unable to get issuer certificate"});
}

bool is_unreachable(std::string_view msg) {
    return is_own_connection_failure(msg) &&
           contains_any(msg, {"connection refused", "no route to host", "network is unreachable",
                              "host is unreachable", "dns resolution failed",
                              "name or service not known", "connect failed", "timed out"});
}

std::string grpc_code_name(int c) {
    static constexpr std::array<std::string_view, 17> k_names = {
        "OK",       "Cancelled",      "Unknown",          "InvalidArgument",   "DeadlineExceeded",
        "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
        "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
        "DataLoss", "Unauthenticated"};
    return c >= 0 && c < static_cast<int>(k_names.size()) ? std::string(k_names[c])
                                                          : "Code" + std::to_string(c);
}

struct Class {
    std::string code;
    ErrorKind kind;
    std::string summary;
};

Class classify(const CallFailure& f) {
    switch (f.code) {
    case grpc::StatusCode::UNAVAILABLE:
        if (is_unknown_authority(f.message)) {
            return {std::string(code::k_unknown_authority), ErrorKind::Config,
                    "server certificate is not signed by the trusted CA"};
        }
        if (is_unreachable(f.message)) {
            return {std::string(code::k_unreachable), ErrorKind::Unreachable, "cannot connect"};
        }
        return {std::string(code::k_unavailable), ErrorKind::Unreachable, "unavailable"};
    case grpc::StatusCode::PERMISSION_DENIED:
        return {std::string(code::k_permission_denied), ErrorKind::Config, "permission denied"};
    case grpc::StatusCode::NOT_FOUND:
        return {std::string(code::k_not_found), ErrorKind::Config, "not found"};
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNKNOWN:
        return {std::string(code::k_internal), ErrorKind::Unreachable, "the node failed the call"};
    default:
        return {grpc_code_name(f.code), ErrorKind::Findings, grpc_code_name(f.code)};
    }
}

} // namespace

bool own_connection_failure(std::string_view message) {
    return contains_any(message, {"failed to connect to all addresses", "dns resolution failed"}) ||
           (contains_any(message, {"handshake failed"}) &&
            !contains_any(message, {"connection error: desc"}));
}

bool forwarded_unknown_authority(std::string_view message) {
    return !own_connection_failure(message) &&
           contains_any(message, {"certificate signed by unknown authority",
                                  "failed to verify certificate"});
}

bool node_gone(std::string_view c) {
    return c == code::k_timeout || c == code::k_unreachable || c == code::k_unavailable;
}

Error classify_failure(std::string_view label, std::string_view method, const CallFailure& failure,
                       std::int64_t timeout_ms) {
    if (failure.code == grpc::StatusCode::DEADLINE_EXCEEDED) {
        return make_error(ErrorKind::Unreachable,
                          std::string(label) + " did not answer within " +
                              util::format_duration_ms(timeout_ms) + " (" + std::string(method) +
                              ")",
                          {}, std::string(code::k_timeout));
    }
    Class c = classify(failure);
    std::string msg = std::string(label) + ": " + c.summary + " (" + std::string(method) + ")";
    if (!failure.message.empty()) {
        msg += ": " + failure.message;
    }
    return make_error(c.kind, std::move(msg), {}, std::move(c.code));
}

Error fingerprint_mismatch(std::string_view label, std::string_view method, std::string_view got,
                           const std::vector<std::string>& pins) {
    return make_error(ErrorKind::Findings,
                      std::string(label) + ": server certificate fingerprint " + std::string(got) +
                          " does not match the pinned " + util::join(pins, ", ") + " (" +
                          std::string(method) + ")",
                      {}, std::string(code::k_fingerprint_mismatch));
}

} // namespace ichor::talos
