// The memoized PEM reads (common/talos/pem_memo.cpp) must keep the OpenSSL functions' contract:
// the same content, the same BIO position afterwards, the real function for anything else.
#include "common/talos/certs.h"
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>

#ifdef ICHOR_PEM_MEMO

#include "common/talos/pem_memo.h"

extern "C" {
EVP_PKEY* __real_PEM_read_bio_PrivateKey(BIO* bio, EVP_PKEY** x, pem_password_cb* cb, void* u);
X509* __real_PEM_read_bio_X509_AUX(BIO* bio, X509** x, pem_password_cb* cb, void* u);
}

using namespace ichor::talos;
namespace fx = ichor::talos::fixtures;

namespace {

// What is left to read in a memory BIO.
std::string rest_of(BIO* bio) {
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

struct Bio {
    std::string text;
    BIO* bio;
    explicit Bio(std::string t)
        : text(std::move(t)), bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))) {}
    ~Bio() { BIO_free(bio); }
    Bio(const Bio&) = delete;
    Bio& operator=(const Bio&) = delete;
};

char k_empty[] = ""; // the password gRPC passes

} // namespace

TEST_CASE("a key read twice is one object, and the BIO ends where the real read leaves it",
          "[talos]") {
    REQUIRE(pem_memo_active());
    std::string pem = relabel_private_key(fx::k_client_key) + "after the key\n";
    Bio a(pem), b(pem), real(pem);
    EVP_PKEY* k1 = PEM_read_bio_PrivateKey(a.bio, nullptr, nullptr, k_empty);
    EVP_PKEY* k2 = PEM_read_bio_PrivateKey(b.bio, nullptr, nullptr, k_empty);
    EVP_PKEY* k3 = __real_PEM_read_bio_PrivateKey(real.bio, nullptr, nullptr, k_empty);
    REQUIRE(k1 != nullptr);
    REQUIRE(k3 != nullptr);
    CHECK(k1 == k2);
    CHECK(k1 != k3);
    CHECK(EVP_PKEY_eq(k1, k3) == 1);
    CHECK(rest_of(a.bio) == rest_of(real.bio));
    CHECK(rest_of(b.bio) == rest_of(real.bio));
    CHECK(rest_of(b.bio) == "after the key\n");

    // Another key is another object; the first stays usable after its reader frees its reference.
    Bio other(fx::k_server_key);
    EVP_PKEY* k4 = PEM_read_bio_PrivateKey(other.bio, nullptr, nullptr, k_empty);
    REQUIRE(k4 != nullptr);
    CHECK(k4 != k1);
    CHECK(EVP_PKEY_eq(k4, k1) != 1);
    EVP_PKEY_free(k1);
    EVP_PKEY_free(k2);
    Bio again(pem);
    EVP_PKEY* k5 = PEM_read_bio_PrivateKey(again.bio, nullptr, nullptr, k_empty);
    CHECK(EVP_PKEY_eq(k5, k3) == 1);
    EVP_PKEY_free(k3);
    EVP_PKEY_free(k4);
    EVP_PKEY_free(k5);
}

TEST_CASE("certificates read in a loop come back in order, as the real reads give them",
          "[talos]") {
    REQUIRE(pem_memo_active());
    std::string chain = std::string(fx::k_server_crt) + fx::k_ca_crt + fx::k_other_server_crt;
    for (int round = 0; round < 2; ++round) { // the second round is answered from the memo
        Bio memo(chain), real(chain);
        for (int i = 0; i < 4; ++i) {
            X509* m = PEM_read_bio_X509_AUX(memo.bio, nullptr, nullptr, k_empty);
            X509* r = __real_PEM_read_bio_X509_AUX(real.bio, nullptr, nullptr, k_empty);
            CHECK((m == nullptr) == (r == nullptr));
            if (m != nullptr && r != nullptr) {
                CHECK(X509_cmp(m, r) == 0);
            }
            CHECK(rest_of(memo.bio) == rest_of(real.bio));
            X509_free(m);
            X509_free(r);
        }
    }
}

TEST_CASE("reads the memo cannot answer go to OpenSSL", "[talos]") {
    REQUIRE(pem_memo_active());
    // Text that is not PEM: a failure, as the real read, and nothing remembered.
    Bio junk("not a key\n"), junk_real("not a key\n");
    CHECK(PEM_read_bio_PrivateKey(junk.bio, nullptr, nullptr, k_empty) == nullptr);
    CHECK(__real_PEM_read_bio_PrivateKey(junk_real.bio, nullptr, nullptr, k_empty) == nullptr);
    CHECK(rest_of(junk.bio) == rest_of(junk_real.bio));

    // A caller-supplied object is filled in, not replaced by a shared one.
    std::string pem = relabel_private_key(fx::k_client_key);
    Bio first(pem), second(pem);
    EVP_PKEY* shared = PEM_read_bio_PrivateKey(first.bio, nullptr, nullptr, k_empty);
    EVP_PKEY* own = nullptr;
    EVP_PKEY* got = PEM_read_bio_PrivateKey(second.bio, &own, nullptr, k_empty);
    REQUIRE(got != nullptr);
    CHECK(got == own);
    CHECK(got != shared);
    EVP_PKEY_free(shared);
    EVP_PKEY_free(own);

    // A password other than the empty one: the real read, every time.
    char password[] = "secret";
    Bio p1(pem), p2(pem);
    EVP_PKEY* a = PEM_read_bio_PrivateKey(p1.bio, nullptr, nullptr, password);
    EVP_PKEY* b = PEM_read_bio_PrivateKey(p2.bio, nullptr, nullptr, password);
    REQUIRE(a != nullptr);
    CHECK(a != b);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

TEST_CASE("every TLS context is made with SSL_MODE_NO_AUTO_CHAIN, and only that mode added",
          "[talos][tls]") {
    // SSL_CTX_new is wrapped in this executable as in the tools (ssl_ctx_modes.cpp).
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    REQUIRE(ctx != nullptr);
    CHECK((SSL_CTX_get_mode(ctx) & SSL_MODE_NO_AUTO_CHAIN) != 0);
    CHECK((SSL_CTX_get_mode(ctx) & ~SSL_MODE_NO_AUTO_CHAIN) == SSL_MODE_AUTO_RETRY);
    SSL_CTX_free(ctx);
}

#endif // ICHOR_PEM_MEMO
