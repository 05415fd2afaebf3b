// Typing of API server failures: a non-2xx response becomes an Error whose `code` is the Status
// `reason` ("NotFound", "AlreadyExists", "Conflict", "Invalid", "Forbidden", "Unauthorized", ...)
// and whose message is the API server's own sentence, so callers branch on `code`, never on text.
#pragma once

#include "common/doc/vocabulary.h"
#include "common/util/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::kube {

// The Status reasons (the codes of status_error's Errors): those that callers compare, and those
// that an HTTP status without a Status body stands for (client-go's reasons of each status).
namespace reason {
inline constexpr std::string_view k_not_found = "NotFound";
inline constexpr std::string_view k_already_exists = "AlreadyExists";
inline constexpr std::string_view k_forbidden = "Forbidden";
inline constexpr std::string_view k_gone = "Gone";
inline constexpr std::string_view k_expired = "Expired";
inline constexpr std::string_view k_conflict = "Conflict";
inline constexpr std::string_view k_bad_request = "BadRequest";
inline constexpr std::string_view k_unauthorized = "Unauthorized";
inline constexpr std::string_view k_method_not_allowed = "MethodNotAllowed";
inline constexpr std::string_view k_not_acceptable = "NotAcceptable";
inline constexpr std::string_view k_request_entity_too_large = "RequestEntityTooLarge";
inline constexpr std::string_view k_unsupported_media_type = "UnsupportedMediaType";
inline constexpr std::string_view k_invalid = "Invalid";
inline constexpr std::string_view k_too_many_requests = "TooManyRequests";
inline constexpr std::string_view k_internal_error = "InternalError";
inline constexpr std::string_view k_service_unavailable = "ServiceUnavailable";
inline constexpr std::string_view k_server_timeout = "ServerTimeout";
inline constexpr std::string_view k_timeout = vocab::code::k_timeout; // a 504, as a client timeout
inline constexpr std::string_view k_unknown = "Unknown";              // a status none of these
} // namespace reason

// The request a response answered, for messages and hints.
struct RequestInfo {
    std::string method; // GET, POST, PUT, PATCH, DELETE
    std::string path;   // "/apis/...", query allowed
    std::string server; // "https://127.0.0.1:6443"
};

// Maps an HTTP status and body to an Error. The body may be a Status object (reason, message) or
// anything else (a proxy's page): then the reason follows the HTTP status and the message quotes
// the first line of the body. Kinds:
//   Config       Unauthorized, Forbidden (hint: kubectl auth can-i VERB RESOURCE -n NS), NotFound,
//                AlreadyExists, Conflict, Invalid, BadRequest, Gone, Expired, RequestEntityTooLarge
//   Unreachable  TooManyRequests, ServiceUnavailable, ServerTimeout, Timeout, InternalError, other
//   5xx Internal     MethodNotAllowed, NotAcceptable, UnsupportedMediaType, other 4xx (a request we
//                should not have made)
Error status_error(long http_status, std::string_view body, const RequestInfo& req);

// The reason of a failure: the Status body's `reason`, else one derived from the HTTP status
// ("Unknown" when there is none).
std::string status_reason(long http_status, std::string_view body);

// Seconds to wait before a retry: the Retry-After header (seconds) or the Status body's
// details.retryAfterSeconds; nullopt when neither says.
std::optional<long> retry_after_seconds(std::string_view header, std::string_view body);

// "kubectl auth can-i VERB RESOURCE[.GROUP] [--subresource=S] [-n NS]" for a request, or "" when
// the path is not a resource path.
std::string can_i_command(std::string_view method, std::string_view path);

// The texts of one Warning header value (RFC 7234: `299 - "text"`, several separated by commas),
// unquoted. Values that do not parse are returned whole.
std::vector<std::string> parse_warning_header(std::string_view value);

} // namespace ichor::kube
