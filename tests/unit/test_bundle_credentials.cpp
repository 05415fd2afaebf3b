// Client credentials minted from the bundle's Talos API CA (common/bundle/credentials.h): the
// certificate is read back with OpenSSL, field by field, and the talosconfig is read back as YAML.
#include "common/bundle/credentials.h"
#include "common/talos/certs.h"
#include "common/util/files.h"
#include "common/util/pem.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <vector>

using namespace ichor;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";
constexpr std::int64_t k_now = 1'800'000'000; // 2027-01-15T08:00:00Z
constexpr std::int64_t k_ttl = 3600;

bundle::Bundle golden_bundle() {
    auto t = util::read_file(k_dir + "/secrets.yaml");
    REQUIRE(t.ok());
    auto b = bundle::parse(*t, "secrets.yaml");
    REQUIRE(b.ok());
    return *b;
}

struct X509Free {
    void operator()(X509* p) const { X509_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr load(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
    BIO_free(bio);
    REQUIRE(cert);
    return cert;
}

} // namespace

TEST_CASE("a client certificate is signed by the Talos API CA and carries the roles", "[bundle]") {
    auto b = golden_bundle();
    auto c = bundle::issue_client_certificate(b, {"os:admin", "os:reader"}, k_ttl, k_now);
    REQUIRE(c.ok());

    X509Ptr cert = load(c->crt_pem);
    X509Ptr ca = load(b.os_ca_pem());
    EVP_PKEY* ca_key = X509_get0_pubkey(ca.get());
    CHECK(X509_verify(cert.get(), ca_key) == 1);
    CHECK(X509_check_issued(ca.get(), cert.get()) == X509_V_OK);
    CHECK(util::certificate_organizations(c->crt_pem) ==
          std::vector<std::string>{"os:admin", "os:reader"});

    // Valid from five minutes before `now` (clock skew) to now + ttl.
    CHECK(ASN1_TIME_cmp_time_t(X509_get0_notBefore(cert.get()), k_now - 300) == 0);
    CHECK(ASN1_TIME_cmp_time_t(X509_get0_notAfter(cert.get()), k_now + k_ttl) == 0);

    // ExtKeyUsage exactly clientAuth; KeyUsage digitalSignature only, critical.
    CHECK(X509_get_extended_key_usage(cert.get()) == XKU_SSL_CLIENT);
    CHECK(X509_get_key_usage(cert.get()) == KU_DIGITAL_SIGNATURE);
    int ku = X509_get_ext_by_NID(cert.get(), NID_key_usage, -1);
    REQUIRE(ku >= 0);
    CHECK(X509_EXTENSION_get_critical(X509_get_ext(cert.get(), ku)) == 1);
    CHECK(X509_get_ext_by_NID(cert.get(), NID_authority_key_identifier, -1) >= 0);
    CHECK(X509_get_version(cert.get()) == 2); // v3
}

TEST_CASE("the client key is Ed25519, labelled as Talos writes it, and fresh each time",
          "[bundle]") {
    auto b = golden_bundle();
    auto c = bundle::issue_client_certificate(b, {"os:admin"}, k_ttl, k_now);
    REQUIRE(c.ok());
    CHECK(c->key_pem.starts_with("-----BEGIN ED25519 PRIVATE KEY-----\n"));
    CHECK(c->key_pem.ends_with("-----END ED25519 PRIVATE KEY-----\n"));
    CHECK(talos::check_key_matches(c->crt_pem, c->key_pem).ok());

    auto again = bundle::issue_client_certificate(b, {"os:admin"}, k_ttl, k_now);
    REQUIRE(again.ok());
    CHECK(again->key_pem != c->key_pem);
    CHECK(util::certificate_fingerprint(again->crt_pem) !=
          util::certificate_fingerprint(c->crt_pem));
    CHECK_FALSE(talos::check_key_matches(c->crt_pem, again->key_pem).ok());
}

TEST_CASE("a bundle without a usable Talos API CA mints nothing", "[bundle]") {
    auto no_key = golden_bundle();
    no_key.os.key.clear();
    auto r = bundle::issue_client_certificate(no_key, {"os:admin"}, k_ttl, k_now);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::Config);
    CHECK(r.error().message == "minting a Talos API client certificate: the bundle has no "
                               "certs.os.key (the Talos API CA key)");
    CHECK(r.error().code == "BadBundle");

    auto bad_key = golden_bundle();
    bad_key.os.key = util::base64_encode(
        "-----BEGIN ED25519 PRIVATE KEY-----\nAAAA\n-----END ED25519 PRIVATE KEY-----\n");
    r = bundle::issue_client_certificate(bad_key, {"os:admin"}, k_ttl, k_now);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "minting a Talos API client certificate: certs.os.key does not load");

    auto bad_crt = golden_bundle();
    bad_crt.os.crt = util::base64_encode("not a certificate");
    r = bundle::issue_client_certificate(bad_crt, {"os:admin"}, k_ttl, k_now);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "minting a Talos API client certificate: certs.os.crt does not parse");
}

TEST_CASE("the talosconfig has one current context with base64 of each PEM", "[bundle]") {
    bundle::ClientCertificate cert{"CRT\n", "KEY\n"};
    std::string text = bundle::talosconfig_yaml("prod", {"127.0.0.11", "127.0.0.12"}, "CA\n", cert);
    CHECK(text == "context: prod\n"
                  "contexts:\n"
                  "  prod:\n"
                  "    endpoints:\n"
                  "    - \"127.0.0.11\"\n"
                  "    - \"127.0.0.12\"\n"
                  "    ca: Q0EK\n"
                  "    crt: Q1JUCg==\n"
                  "    key: S0VZCg==\n");
}
