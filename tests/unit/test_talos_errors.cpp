#include "common/talos/errors.h"

#include <catch2/catch.hpp>
#include <grpcpp/support/status_code_enum.h>

using namespace ichor;
using namespace ichor::talos;

namespace {
Error classify(grpc::StatusCode c, const char* msg) {
    return classify_failure("10.0.0.21", "Version", CallFailure{c, msg}, 20000);
}
} // namespace

TEST_CASE("a call past its deadline names the node, the bound and the method", "[talos]") {
    auto e = classify(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
    CHECK(e.message == "10.0.0.21 did not answer within 20s (Version)");
    CHECK(e.code == "Timeout");
    CHECK(e.kind == ErrorKind::Unreachable);
    auto short_one =
        classify_failure("n", "EtcdMemberList", {grpc::StatusCode::DEADLINE_EXCEEDED, ""}, 1500);
    CHECK(short_one.message == "n did not answer within 1s (EtcdMemberList)");
}

TEST_CASE("handshake failures against another CA are UnknownAuthority", "[talos]") {
    const char* openssl_text =
        "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.21:50000: Ssl "
        "handshake failed: SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed";
    auto e = classify(grpc::StatusCode::UNAVAILABLE, openssl_text);
    CHECK(e.code == "UnknownAuthority");
    CHECK(e.kind == ErrorKind::Config);
    CHECK(e.message == std::string("10.0.0.21: server certificate is not signed by the trusted CA "
                                   "(Version): ") +
                           openssl_text);
    CHECK(classify(
              grpc::StatusCode::UNAVAILABLE,
              "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.31:50000: "
              "Ssl handshake failed: SSL_ERROR_SSL: self-signed certificate in certificate chain")
              .code == "UnknownAuthority");
    // The node's apid failing to verify the next hop is the node's problem, not our trust.
    CHECK(classify(grpc::StatusCode::UNAVAILABLE,
                   "connection error: desc = \"transport: authentication handshake failed: "
                   "x509: certificate signed by unknown authority\"")
              .code == "Unavailable");
}

TEST_CASE("refused and unroutable connections are Unreachable", "[talos]") {
    for (const char* text :
         {"failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to "
          "connect to remote host: Connection refused",
          "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.9:50000: Failed to "
          "connect to remote host: No route to host",
          "DNS resolution failed for nosuch.invalid:50000: C-ares status is not ARES_SUCCESS"}) {
        auto e = classify(grpc::StatusCode::UNAVAILABLE, text);
        CHECK(e.code == "Unreachable");
        CHECK(e.kind == ErrorKind::Unreachable);
    }
    auto other = classify(grpc::StatusCode::UNAVAILABLE, "Socket closed");
    CHECK(other.code == "Unavailable");
    CHECK(other.message == "10.0.0.21: unavailable (Version): Socket closed");
    // Text the node sent (its etcd is down) names a refused connection, but the node answered.
    auto etcd_down = classify(grpc::StatusCode::UNAVAILABLE,
                              "connection error: desc = \"transport: Error while dialing: dial tcp "
                              "127.0.0.1:2379: connect: connection refused\"");
    CHECK(etcd_down.code == "Unavailable");
    CHECK(etcd_down.kind == ErrorKind::Unreachable);
}

TEST_CASE("the remaining gRPC codes keep the message after the address", "[talos]") {
    auto denied = classify(grpc::StatusCode::PERMISSION_DENIED, "not authorized");
    CHECK(denied.code == "PermissionDenied");
    CHECK(denied.kind == ErrorKind::Config);
    CHECK(denied.message == "10.0.0.21: permission denied (Version): not authorized");
    CHECK(classify(grpc::StatusCode::NOT_FOUND, "resource doesn't exist").code == "NotFound");
    auto internal = classify(grpc::StatusCode::INTERNAL, "boom");
    CHECK(internal.code == "Internal");
    CHECK(internal.message == "10.0.0.21: the node failed the call (Version): boom");
    auto invalid = classify(grpc::StatusCode::FAILED_PRECONDITION, "another apply is in progress");
    CHECK(invalid.code == "FailedPrecondition");
    CHECK(invalid.kind == ErrorKind::Findings);
}

TEST_CASE("a pin mismatch names both fingerprints", "[talos]") {
    auto e = fingerprint_mismatch("10.0.0.31", "Version", "GOT=", {"WANT1=", "WANT2="});
    CHECK(e.code == "FingerprintMismatch");
    CHECK(e.message == "10.0.0.31: server certificate fingerprint GOT= does not match the pinned "
                       "WANT1=, WANT2= (Version)");
}

TEST_CASE("a node is gone when it did not answer or its API is unavailable, not when a call failed",
          "[talos]") {
    CHECK(node_gone(classify(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded").code));
    CHECK(node_gone(classify(grpc::StatusCode::UNAVAILABLE,
                             "failed to connect to all addresses; last error: "
                             "UNKNOWN: ipv4:10.0.0.21:50000: Connection refused")
                        .code));
    CHECK(node_gone(classify(grpc::StatusCode::UNAVAILABLE, "Socket closed").code));
    for (auto c : {grpc::StatusCode::INTERNAL, grpc::StatusCode::PERMISSION_DENIED,
                   grpc::StatusCode::NOT_FOUND, grpc::StatusCode::UNIMPLEMENTED}) {
        CHECK_FALSE(node_gone(classify(c, "no").code));
    }
    CHECK_FALSE(node_gone(
        classify(
            grpc::StatusCode::UNAVAILABLE,
            "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.21:50000: "
            "Ssl handshake failed: SSL_ERROR_SSL: error:1000007d:SSL routines:OPENSSL_internal:"
            "CERTIFICATE_VERIFY_FAILED: certificate verify failed")
            .code));
    CHECK_FALSE(node_gone(""));
}

TEST_CASE("through an endpoint: the client's own hop is told from the forwarded one", "[talos]") {
    const char* own =
        "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.11:50000: Ssl "
        "handshake failed: SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed";
    const char* own_refused_cert =
        "Ssl handshake failed: SSL_ERROR_SSL: error:0A000418:SSL routines::tlsv1 alert unknown ca";
    const char* forwarded = "connection error: desc = \"transport: authentication handshake "
                            "failed: tls: failed to verify certificate: x509: certificate signed "
                            "by unknown authority\"";
    CHECK(own_connection_failure(own));
    CHECK(own_connection_failure(own_refused_cert));
    CHECK_FALSE(own_connection_failure(forwarded));
    CHECK_FALSE(own_connection_failure("no request forwarding"));
    CHECK(forwarded_unknown_authority(forwarded));
    CHECK_FALSE(forwarded_unknown_authority(own));
    CHECK_FALSE(forwarded_unknown_authority("etcd is down"));
    // classify_failure keeps the forwarded hop Unavailable; the inspection decides what it means.
    CHECK(classify(grpc::StatusCode::UNAVAILABLE, forwarded).code == "Unavailable");
}
