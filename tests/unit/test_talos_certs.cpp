#include "common/talos/certs.h"
#include "common/util/strings.h"
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ichor;
using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;

TEST_CASE("the ED25519 PRIVATE KEY label is rewritten for OpenSSL", "[talos]") {
    std::string relabelled = relabel_private_key(fx::k_client_key);
    CHECK(relabelled.find("-----BEGIN PRIVATE KEY-----\n") == 0);
    CHECK(relabelled.find("-----END PRIVATE KEY-----") != std::string::npos);
    CHECK(relabelled.find("ED25519") == std::string::npos);
    CHECK(relabel_private_key(relabelled) == relabelled);
    CHECK(check_private_key(fx::k_client_key).ok());
    CHECK(check_key_matches(fx::k_client_crt, fx::k_client_key).ok());
}

TEST_CASE("certificates and keys that do not parse are config errors", "[talos]") {
    auto bad_cert =
        check_certificate("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    REQUIRE_FALSE(bad_cert.ok());
    CHECK(bad_cert.error().kind == ErrorKind::Config);
    CHECK(bad_cert.error().message.rfind("not a PEM certificate: ", 0) == 0);

    auto no_pem = check_certificate("hello");
    REQUIRE_FALSE(no_pem.ok());
    CHECK(no_pem.error().message == "not a PEM certificate: no PEM block found");

    auto bad_key = check_private_key(fx::k_client_crt);
    REQUIRE_FALSE(bad_key.ok());
    CHECK(bad_key.error().message.rfind("not a PEM private key: ", 0) == 0);

    auto other = check_key_matches(fx::k_server_crt, fx::k_client_key);
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().message == "the key does not belong to the certificate");
}

TEST_CASE("fingerprints are talosctl's: base64 of the SHA-256 of the SPKI", "[talos]") {
    auto fp = spki_fingerprint(fx::k_server_crt);
    REQUIRE(fp.ok());
    CHECK(*fp == fx::k_server_fingerprint);
    CHECK(*spki_fingerprint(fx::k_other_server_crt) == fx::k_other_server_fingerprint);
    CHECK_FALSE(spki_fingerprint("nothing").ok());
}

TEST_CASE("a certificate whose DER is cut short has no fingerprint", "[talos]") {
    // The fingerprint walks the DER itself; a body that is base64 but not a whole certificate
    // must not give a digest of whatever bytes are there.
    std::string pem = fx::k_server_crt;
    auto begin = pem.find('\n') + 1;
    auto end = pem.find("-----END");
    std::string body;
    for (char c : pem.substr(begin, end - begin)) {
        if (c != '\n') {
            body.push_back(c);
        }
    }
    auto der = util::base64_decode(body);
    REQUIRE(der);
    for (std::size_t cut : {std::size_t{3}, std::size_t{16}, der->size() / 2}) {
        std::string shorter = "-----BEGIN CERTIFICATE-----\n" +
                              util::base64_encode(der->substr(0, der->size() - cut)) +
                              "\n-----END CERTIFICATE-----\n";
        CHECK_FALSE(spki_fingerprint(shorter).ok());
    }
    // Several certificates in one PEM: the first one's.
    CHECK(*spki_fingerprint(std::string(fx::k_server_crt) + fx::k_other_server_crt) ==
          fx::k_server_fingerprint);
}

TEST_CASE("user-given fingerprints are checked and made canonical", "[talos]") {
    auto ok = parse_fingerprint(std::string(" ") + fx::k_server_fingerprint + "\n");
    REQUIRE(ok.ok());
    CHECK(*ok == fx::k_server_fingerprint);

    auto not_b64 = parse_fingerprint("not base64!");
    REQUIRE_FALSE(not_b64.ok());
    CHECK(not_b64.error().kind == ErrorKind::Usage);
    CHECK(not_b64.error().message == "bad certificate fingerprint \"not base64!\": not base64");

    auto short_one = parse_fingerprint("AAAA");
    REQUIRE_FALSE(short_one.ok());
    CHECK(short_one.error().message ==
          "bad certificate fingerprint \"AAAA\": not a SHA-256 digest (3 bytes)");
    CHECK_FALSE(parse_fingerprint("").ok());
}
