// Memoized DER reads of the certificates TLS peers present (linked with --wrap in static builds
// only, as pem_memo.cpp is; see common/talos/CMakeLists.txt).
//
// Why: a whole-cluster plan connects to every node twice, once to inspect it and once for the
// node's own dry run of its render (stages/node_check.cpp), and Talos's apid issues no session
// tickets (siderolabs/crypto's tls.New), so the second connection is a full handshake. In it
// OpenSSL 3.0 decodes the node's certificate again, running its public key through the decoder
// framework, which looks up every provider's decoders first: a tenth of the node check's client
// CPU over 256 nodes (bench/HISTORY.md, "the realistic plan's CPU"). The process decodes each
// distinct certificate once and hands out a new reference to the same object, as pem_memo.cpp
// does for the talosconfig's PEM blocks.
//
// Nothing is trusted by the memo: it answers only "which object do these exact bytes decode to".
// Every handshake still verifies the chain, the signature over the handshake and the name, on the
// object as the real decoder made it. Certificates are immutable once read and reference counted,
// and OpenSSL shares them between connections and threads itself.
//
// The wrapper keeps d2i_X509's contract exactly: the same object content, the input advanced by
// what the real decode consumes, the caller's preallocated object replaced as the real decode
// would fill it. It answers only libssl's form of the call (a preallocated object, whole DER of a
// bounded size, consumed to its end); anything else, and any miss, goes to the real function.
#include "common/talos/der_memo.h"

#include <openssl/x509.h>

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

extern "C" {
X509* __real_d2i_X509(X509** a, const unsigned char** in, long len);
}

namespace ichor::talos {

namespace {

class DerMemo {
  public:
    X509* read(X509** a, const unsigned char** in, long len) {
        if (a == nullptr || *a == nullptr || in == nullptr || *in == nullptr || len <= 0 ||
            len > k_max_der) {
            return __real_d2i_X509(a, in, len);
        }
        const std::string_view der(reinterpret_cast<const char*>(*in),
                                   static_cast<std::size_t>(len));
        if (X509* hit = lookup(der)) {
            X509_free(*a);
            *a = hit;
            *in += len;
            return hit;
        }
        const unsigned char* start = *in;
        X509* obj = __real_d2i_X509(a, in, len);
        if (obj != nullptr && *in == start + len) {
            remember(der, obj);
        }
        return obj;
    }

  private:
    // A certificate of Talos's PKI is under 1 kB; a chain's CA a few. Larger ones are decoded.
    static constexpr long k_max_der = 16 * 1024;
    // Two connections to each of a thousand nodes; past that the memo stops growing (each entry
    // holds a decoded certificate, about 3 kB).
    static constexpr std::size_t k_capacity = 1024;

    X509* lookup(std::string_view der) {
        std::lock_guard lock(m_mu);
        auto it = m_entries.find(der);
        if (it == m_entries.end()) {
            return nullptr;
        }
        X509_up_ref(it->second);
        return it->second;
    }

    void remember(std::string_view der, X509* obj) {
        std::lock_guard lock(m_mu);
        if (m_entries.size() < k_capacity && m_entries.find(der) == m_entries.end()) {
            X509_up_ref(obj);
            m_entries.emplace(std::string(der), obj);
        }
    }

    // Looked up by a view of the bytes, without a copy.
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };

    std::mutex m_mu;
    // One reference each, held for the process's lifetime.
    std::unordered_map<std::string, X509*, Hash, std::equal_to<>> m_entries;
};

DerMemo& memo() {
    static auto* m = new DerMemo();
    return *m;
}

} // namespace

bool der_memo_active() {
    return true;
}

} // namespace ichor::talos

extern "C" {

X509* __wrap_d2i_X509(X509** a, const unsigned char** in, long len) {
    return ichor::talos::memo().read(a, in, len);
}
}
