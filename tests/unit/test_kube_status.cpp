#include "common/kube/status.h"

#include <catch2/catch.hpp>

using namespace ichor;
using namespace ichor::kube;

namespace {

std::string status_body(const std::string& reason, const std::string& message, int code) {
    return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
           message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

const RequestInfo k_get{"GET",
                        "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/talosmachines/m1",
                        "https://127.0.0.1:6443"};

} // namespace

TEST_CASE("Status bodies become typed errors", "[kube][status]") {
    struct Case {
        long http;
        const char* reason;
        ErrorKind kind;
    };
    for (const auto& c :
         {Case{404, "NotFound", ErrorKind::Config}, Case{409, "AlreadyExists", ErrorKind::Config},
          Case{409, "Conflict", ErrorKind::Config}, Case{422, "Invalid", ErrorKind::Config},
          Case{410, "Expired", ErrorKind::Config}, Case{400, "BadRequest", ErrorKind::Config},
          Case{429, "TooManyRequests", ErrorKind::Unreachable},
          Case{500, "InternalError", ErrorKind::Unreachable},
          Case{504, "Timeout", ErrorKind::Unreachable},
          Case{415, "UnsupportedMediaType", ErrorKind::Internal}}) {
        Error e = status_error(
            c.http, status_body(c.reason, "the message", static_cast<int>(c.http)), k_get);
        CHECK(e.code == c.reason);
        CHECK(e.kind == c.kind);
        CHECK(e.message == "the message");
        CHECK(e.hint.empty());
    }
}

TEST_CASE("Forbidden and Unauthorized carry a kubectl auth can-i hint", "[kube][status]") {
    std::string msg =
        R"(talosmachines.ichor.maesh.dev is forbidden: User \"lab-noaccess\" cannot list resource )"
        R"(\"talosmachines\" in API group \"ichor.maesh.dev\" in the namespace \"ichor-system\")";
    RequestInfo list{
        "GET", "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/talosmachines?limit=500",
        "https://127.0.0.1:6443"};
    Error e = status_error(403, status_body("Forbidden", msg, 403), list);
    CHECK(e.kind == ErrorKind::Config);
    CHECK(e.code == "Forbidden");
    CHECK(e.message ==
          "talosmachines.ichor.maesh.dev is forbidden: User \"lab-noaccess\" cannot list resource "
          "\"talosmachines\" in API group \"ichor.maesh.dev\" in the namespace \"ichor-system\"");
    CHECK(e.hint == "kubectl auth can-i list talosmachines.ichor.maesh.dev -n ichor-system");

    Error u = status_error(401, status_body("Unauthorized", "Unauthorized", 401), k_get);
    CHECK(u.kind == ErrorKind::Config);
    CHECK(u.code == "Unauthorized");
    CHECK(u.message == "https://127.0.0.1:6443 rejected the credentials: Unauthorized");
    CHECK(u.hint == "kubectl auth can-i get talosmachines.ichor.maesh.dev -n ichor-system");
}

TEST_CASE("non-Status bodies are typed by the HTTP status", "[kube][status]") {
    Error e = status_error(503, "<html>\n<body>Service Unavailable</body>\n</html>", k_get);
    CHECK(e.kind == ErrorKind::Unreachable);
    CHECK(e.code == "ServiceUnavailable");
    CHECK(e.message == "GET " + k_get.path + ": HTTP 503: <html>");
    Error nf = status_error(404, "", k_get);
    CHECK(nf.code == "NotFound");
    CHECK(nf.message == "GET " + k_get.path + ": HTTP 404");
    CHECK(status_reason(418, "teapot") == "Unknown");
    CHECK(status_error(418, "teapot", k_get).kind == ErrorKind::Internal);
    CHECK(status_error(502, "bad gateway", k_get).kind == ErrorKind::Unreachable);
}

TEST_CASE("can-i hints name verb, resource, subresource and namespace", "[kube][status]") {
    CHECK(can_i_command("POST", "/api/v1/namespaces/ns/secrets") ==
          "kubectl auth can-i create secrets -n ns");
    CHECK(can_i_command(
              "PATCH",
              "/apis/ichor.maesh.dev/v1alpha1/namespaces/ns/talosmachines/m/status?force=true") ==
          "kubectl auth can-i patch talosmachines.ichor.maesh.dev --subresource=status -n ns");
    CHECK(can_i_command("DELETE", "/api/v1/namespaces/ns/secrets/s") ==
          "kubectl auth can-i delete secrets -n ns");
    CHECK(can_i_command("GET", "/api/v1/namespaces") == "kubectl auth can-i list namespaces");
    CHECK(can_i_command("GET", "/api/v1/namespaces/x") == "kubectl auth can-i get namespaces");
    CHECK(can_i_command("GET", "/healthz").empty());
}

TEST_CASE("Retry-After and Warning headers", "[kube][status]") {
    CHECK(retry_after_seconds("3", "") == 3);
    CHECK(retry_after_seconds("", R"({"kind":"Status","details":{"retryAfterSeconds":7}})") == 7);
    CHECK_FALSE(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", "nope"));
    CHECK(parse_warning_header(R"(299 - "unknown field \"spec.foo\"")") ==
          std::vector<std::string>{"unknown field \"spec.foo\""});
    CHECK(parse_warning_header(R"(299 - "one", 299 - "two" "Sat, 01 Jan 2000 00:00:00 GMT")") ==
          std::vector<std::string>{"one", "two"});
    CHECK(parse_warning_header("garbage") == std::vector<std::string>{"garbage"});
}
