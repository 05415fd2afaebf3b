// Memoized PEM reads for gRPC's TLS contexts (linked with --wrap in static builds only; see
// cmake/StaticGrpc.cmake).
//
// Why: gRPC 1.51 (Debian's) builds a new SSL_CTX for every channel and parses the talosconfig's
// client certificate, key and CA from PEM each time. OpenSSL 3.0 runs every key it reads through
// its decoder framework, which looks up every provider's decoders first: over 256 nodes that
// parse was a tenth of inspect's CPU (bench/HISTORY.md, "the PEM memo"). gRPC caches the context
// itself from 1.56 on; until Debian ships that, the process reads each distinct PEM block once and
// hands out new references to the same object. Keys and certificates are immutable once read and
// reference counted, and OpenSSL shares them between contexts and threads itself.
//
// The wrappers keep the functions' contract exactly: the same object content, the same BIO
// position afterwards (a cached block is consumed from the BIO as the real read would), and any
// call they cannot answer from the cache (another BIO type, a caller-supplied object or a
// password callback, a failed read) goes to the real function.
#include "common/talos/pem_memo.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
EVP_PKEY* __real_PEM_read_bio_PrivateKey(BIO* bio, EVP_PKEY** x, pem_password_cb* cb, void* u);
X509* __real_PEM_read_bio_X509_AUX(BIO* bio, X509** x, pem_password_cb* cb, void* u);
}

namespace ichor::talos {

namespace {

// Objects by the exact PEM text the real read consumed for them.
template <class T> class Memo {
  public:
    using Read = T* (*)(BIO*, T**, pem_password_cb*, void*);
    using UpRef = int (*)(T*);

    Memo(Read read, UpRef up_ref) : m_read(read), m_up_ref(up_ref) {}

    T* read(BIO* bio, T** x, pem_password_cb* cb, void* u) {
        char* data = nullptr;
        long size = 0;
        // gRPC passes an empty password; any other would make the text alone not the key.
        bool no_password = u == nullptr || *static_cast<const char*>(u) == '\0';
        if (x != nullptr || cb != nullptr || !no_password || BIO_method_type(bio) != BIO_TYPE_MEM ||
            (size = BIO_get_mem_data(bio, &data)) <= 0) {
            return m_read(bio, x, cb, u);
        }
        std::string_view before(data, static_cast<std::size_t>(size));
        if (T* hit = lookup(bio, before)) {
            return hit;
        }
        T* obj = m_read(bio, nullptr, nullptr, u);
        char* after = nullptr;
        long left = BIO_get_mem_data(bio, &after);
        if (obj != nullptr && left >= 0 && left < size) {
            remember(before.substr(0, static_cast<std::size_t>(size - left)), obj);
        }
        return obj;
    }

  private:
    struct Entry {
        std::string pem;
        T* obj; // one reference held for the process's lifetime
    };
    static constexpr std::size_t k_capacity = 16; // a process reads a handful of distinct blocks

    T* lookup(BIO* bio, std::string_view text) {
        std::lock_guard lock(m_mu);
        for (const auto& e : m_entries) {
            if (text.starts_with(e.pem)) {
                std::string skip(e.pem.size(), '\0');
                int n = static_cast<int>(skip.size());
                if (BIO_read(bio, skip.data(), n) != n) {
                    return nullptr;
                }
                m_up_ref(e.obj);
                return e.obj;
            }
        }
        return nullptr;
    }

    void remember(std::string_view pem, T* obj) {
        std::lock_guard lock(m_mu);
        if (m_entries.size() < k_capacity) {
            m_up_ref(obj);
            m_entries.push_back({std::string(pem), obj});
        }
    }

    Read m_read;
    UpRef m_up_ref;
    std::mutex m_mu;
    std::vector<Entry> m_entries;
};

Memo<EVP_PKEY>& key_memo() {
    static auto* memo = new Memo<EVP_PKEY>(&__real_PEM_read_bio_PrivateKey, &EVP_PKEY_up_ref);
    return *memo;
}

Memo<X509>& certificate_memo() {
    static auto* memo = new Memo<X509>(&__real_PEM_read_bio_X509_AUX, &X509_up_ref);
    return *memo;
}

} // namespace

bool pem_memo_active() {
    return true;
}

} // namespace ichor::talos

extern "C" {

EVP_PKEY* __wrap_PEM_read_bio_PrivateKey(BIO* bio, EVP_PKEY** x, pem_password_cb* cb, void* u) {
    return ichor::talos::key_memo().read(bio, x, cb, u);
}

X509* __wrap_PEM_read_bio_X509_AUX(BIO* bio, X509** x, pem_password_cb* cb, void* u) {
    return ichor::talos::certificate_memo().read(bio, x, cb, u);
}
}
