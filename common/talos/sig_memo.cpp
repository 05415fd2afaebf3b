// Memoized signature checks of certificates (X509_verify; linked with --wrap in static builds
// only, as der_memo.cpp is; see common/talos/CMakeLists.txt).
//
// Why: a whole-cluster plan connects to every node twice, once to inspect it and once for the
// node's own dry run of its render (stages/node_check.cpp), and Talos's apid issues no session
// tickets, so the second connection is a full handshake. In it OpenSSL's chain verification
// checks the node certificate's Ed25519 signature under the Talos CA again: about 60 us each, 15
// ms of client CPU over 256 nodes (bench/HISTORY.md, "the signature memo").
//
// What is remembered is one fact, "the certificate whose DER is exactly these bytes carries a
// valid signature by this public key", and only once the real X509_verify said so. A signature
// check is a function of those two alone. The key is taken by identity: the memo holds a
// reference to it, so it can be no other key while remembered, and a public key does not change
// (the talosconfig's CA, one object for every connection through pem_memo.cpp). The certificate
// is taken by its encoding, read again on every call: an object changed since, or another
// certificate, is another entry. A failed check is never remembered. Everything else of the
// chain's verification (validity dates, names, purposes, the CertificateVerify signature over
// each handshake) runs every time.
#include "common/talos/sig_memo.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <utility>

extern "C" {
int __real_X509_verify(X509* a, EVP_PKEY* r);
}

namespace ichor::talos {

namespace {

std::atomic<std::uint64_t> g_answered{0};

class SigMemo {
  public:
    int verify(X509* cert, EVP_PKEY* key) {
        if (cert == nullptr || key == nullptr) {
            return __real_X509_verify(cert, key);
        }
        std::string der = encoding(cert);
        if (der.empty()) {
            return __real_X509_verify(cert, key);
        }
        if (known(key, der)) {
            g_answered.fetch_add(1, std::memory_order_relaxed);
            return 1;
        }
        const int ok = __real_X509_verify(cert, key);
        if (ok == 1) {
            remember(key, std::move(der));
        }
        return ok;
    }

  private:
    // A Talos certificate is under 1 kB; larger ones are checked each time.
    static constexpr int k_max_der = 16 * 1024;
    // Two connections to each of a thousand nodes; past that the memo stops growing.
    static constexpr std::size_t k_capacity = 1024;

    static std::string encoding(X509* cert) {
        const int n = i2d_X509(cert, nullptr);
        if (n <= 0 || n > k_max_der) {
            return {};
        }
        std::string der(static_cast<std::size_t>(n), '\0');
        auto* p = reinterpret_cast<unsigned char*>(der.data());
        if (i2d_X509(cert, &p) != n) {
            return {};
        }
        return der;
    }

    bool known(EVP_PKEY* key, const std::string& der) {
        std::lock_guard lock(m_mu);
        return m_checked.count({key, der}) != 0;
    }

    void remember(EVP_PKEY* key, std::string der) {
        std::lock_guard lock(m_mu);
        if (m_checked.size() >= k_capacity || m_checked.count({key, der}) != 0) {
            return;
        }
        EVP_PKEY_up_ref(key); // held for the process's lifetime: the pointer names this key only
        m_checked.emplace(key, std::move(der));
    }

    std::mutex m_mu;
    // The (key, certificate DER) pairs whose check the real function passed.
    std::set<std::pair<EVP_PKEY*, std::string>> m_checked;
};

SigMemo& memo() {
    static auto* m = new SigMemo();
    return *m;
}

} // namespace

bool sig_memo_active() {
    return true;
}

std::uint64_t sig_memo_answered() {
    return g_answered.load(std::memory_order_relaxed);
}

} // namespace ichor::talos

extern "C" {

int __wrap_X509_verify(X509* a, EVP_PKEY* r) {
    return ichor::talos::memo().verify(a, r);
}
}
