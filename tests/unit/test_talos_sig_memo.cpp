// The memoized signature check of certificates (common/talos/sig_memo.cpp) answers only what the
// real X509_verify passed for the same certificate bytes under the same key: a wrong key, a
// changed certificate and a corrupt signature fail as they would without it.
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <vector>

#ifdef ICHOR_PEM_MEMO

#include "common/talos/sig_memo.h"

extern "C" {
int __real_X509_verify(X509* a, EVP_PKEY* r);
}

using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;

namespace {

X509* read_pem(const char* pem) {
    BIO* bio = BIO_new_mem_buf(pem, -1);
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    REQUIRE(x != nullptr);
    return x;
}

// A new object of the same certificate, from its DER, not shared with any other reader.
X509* copy_of(X509* x) {
    unsigned char* der = nullptr;
    const int n = i2d_X509(x, &der);
    REQUIRE(n > 0);
    const unsigned char* p = der;
    X509* out = d2i_X509(nullptr, &p, n);
    OPENSSL_free(der);
    REQUIRE(out != nullptr);
    return out;
}

} // namespace

TEST_CASE("a certificate's signature passed once is answered again; what failed never is",
          "[talos]") {
    REQUIRE(sig_memo_active());
    X509* ca = read_pem(fx::k_ca_crt);
    X509* other_ca = read_pem(fx::k_other_ca_crt);
    X509* server = read_pem(fx::k_server_crt);
    EVP_PKEY* key = X509_get0_pubkey(ca);
    EVP_PKEY* other_key = X509_get0_pubkey(other_ca);
    REQUIRE(key != nullptr);
    REQUIRE(other_key != nullptr);

    // Under the wrong key: fails, every time, never remembered.
    const auto before_wrong = sig_memo_answered();
    CHECK(X509_verify(server, other_key) <= 0);
    CHECK(X509_verify(server, other_key) <= 0);
    CHECK(sig_memo_answered() == before_wrong);

    // Under its CA: the real check the first time (or an earlier test's), then the memo's, also
    // for another object of the same bytes (the next connection's decode).
    CHECK(X509_verify(server, key) == 1);
    const auto before = sig_memo_answered();
    CHECK(X509_verify(server, key) == 1);
    X509* again = copy_of(server);
    CHECK(X509_verify(again, key) == 1);
    CHECK(sig_memo_answered() == before + 2);
    // and still not under the wrong key
    CHECK(X509_verify(server, other_key) <= 0);

    // The object changed after its check: other bytes, checked again, and the signature no longer
    // covers them.
    ASN1_INTEGER* serial = ASN1_INTEGER_new();
    ASN1_INTEGER_set(serial, 424242);
    REQUIRE(X509_set_serialNumber(again, serial) == 1);
    ASN1_INTEGER_free(serial);
    REQUIRE(i2d_re_X509_tbs(again, nullptr) > 0); // the setter keeps the old encoding until this
    const auto before_changed = sig_memo_answered();
    CHECK(__real_X509_verify(again, key) <= 0);
    CHECK(X509_verify(again, key) <= 0);
    CHECK(sig_memo_answered() == before_changed);

    // A corrupt signature one byte away from the remembered certificate fails.
    unsigned char* der = nullptr;
    const int n = i2d_X509(server, &der);
    REQUIRE(n > 0);
    std::vector<unsigned char> bad(der, der + n);
    OPENSSL_free(der);
    bad[bad.size() - 3] ^= 0x01; // inside the signature, the last field
    const unsigned char* p = bad.data();
    X509* corrupt = d2i_X509(nullptr, &p, static_cast<long>(bad.size()));
    REQUIRE(corrupt != nullptr);
    CHECK(X509_verify(corrupt, key) <= 0);
    CHECK(sig_memo_answered() == before_changed);

    X509_free(corrupt);
    X509_free(again);
    X509_free(server);
    X509_free(other_ca);
    X509_free(ca);
}

#endif // ICHOR_PEM_MEMO
