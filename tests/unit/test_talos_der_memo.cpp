// The memoized DER decode of peers' certificates (common/talos/der_memo.cpp) must keep
// d2i_X509's contract: the same content, the input advanced as the real decode advances it, the
// real function for anything it does not answer.
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>
#include <vector>

#ifdef ICHOR_PEM_MEMO

#include "common/talos/der_memo.h"

extern "C" {
X509* __real_d2i_X509(X509** a, const unsigned char** in, long len);
}

using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;

namespace {

// The DER of a PEM certificate, read without the memo.
std::vector<unsigned char> der_of(const char* pem) {
    BIO* bio = BIO_new_mem_buf(pem, -1);
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    REQUIRE(x != nullptr);
    unsigned char* out = nullptr;
    int n = i2d_X509(x, &out);
    X509_free(x);
    REQUIRE(n > 0);
    std::vector<unsigned char> der(out, out + n);
    OPENSSL_free(out);
    return der;
}

// libssl's form of the call: a preallocated object, the certificate's exact length.
X509* decode_as_libssl(const std::vector<unsigned char>& der, const unsigned char** end) {
    X509* x = X509_new();
    const unsigned char* p = der.data();
    X509* r = d2i_X509(&x, &p, static_cast<long>(der.size()));
    *end = p;
    if (r == nullptr) {
        X509_free(x);
    }
    return r;
}

} // namespace

TEST_CASE("a certificate decoded twice is one object, the input consumed as the real decode does",
          "[talos]") {
    REQUIRE(der_memo_active());
    const auto der = der_of(fx::k_server_crt);
    const unsigned char* end1 = nullptr;
    const unsigned char* end2 = nullptr;
    X509* a = decode_as_libssl(der, &end1);
    X509* b = decode_as_libssl(der, &end2);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a == b);
    CHECK(end1 == der.data() + der.size());
    CHECK(end2 == der.data() + der.size());

    const unsigned char* p = der.data();
    X509* real = __real_d2i_X509(nullptr, &p, static_cast<long>(der.size()));
    REQUIRE(real != nullptr);
    CHECK(real != a);
    CHECK(X509_cmp(real, a) == 0);

    // Another certificate is another object; the first outlives its readers' references.
    const auto other_der = der_of(fx::k_other_server_crt);
    const unsigned char* end3 = nullptr;
    X509* c = decode_as_libssl(other_der, &end3);
    REQUIRE(c != nullptr);
    CHECK(c != a);
    CHECK(X509_cmp(c, real) != 0);
    X509_free(a);
    X509_free(b);
    const unsigned char* end4 = nullptr;
    X509* again = decode_as_libssl(der, &end4);
    REQUIRE(again != nullptr);
    CHECK(X509_cmp(again, real) == 0);
    X509_free(again);
    X509_free(c);
    X509_free(real);
}

TEST_CASE("any other form of d2i_X509 is the real decode's", "[talos]") {
    REQUIRE(der_memo_active());
    const auto der = der_of(fx::k_ca_crt);
    const unsigned char* end = nullptr;
    X509* kept = decode_as_libssl(der, &end); // now in the memo
    REQUIRE(kept != nullptr);

    // no object to fill: a new one each time, never the memo's
    const unsigned char* p = der.data();
    X509* fresh = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
    REQUIRE(fresh != nullptr);
    CHECK(fresh != kept);
    CHECK(p == der.data() + der.size());
    X509_free(fresh);

    // bytes after the certificate: decoded, advanced past the certificate only, not remembered
    auto longer = der;
    longer.push_back(0x00);
    longer.push_back(0x00);
    X509* x = X509_new();
    p = longer.data();
    X509* r = d2i_X509(&x, &p, static_cast<long>(longer.size()));
    REQUIRE(r != nullptr);
    CHECK(r != kept);
    CHECK(p == longer.data() + der.size());
    X509_free(r);

    // a corrupt certificate fails as it would, even one byte away from a remembered one
    auto bad = der;
    bad[bad.size() / 2] ^= 0xff;
    bad[1] ^= 0x7f;
    const unsigned char* bad_end = nullptr;
    X509* none = decode_as_libssl(bad, &bad_end);
    CHECK(none != kept);
    X509_free(none);
    X509_free(kept);
}

#endif // ICHOR_PEM_MEMO
