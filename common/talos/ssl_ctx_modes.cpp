// TLS context modes that gRPC 1.51 gives no way to set (linked with --wrap in static builds
// only, as pem_memo.cpp is; see common/talos/CMakeLists.txt).
//
// SSL_MODE_NO_AUTO_CHAIN: by default OpenSSL, about to send the client's certificate in a
// handshake, builds its chain from the context's trust store: an X509_verify_cert over the
// talosconfig's CA, with the CA's signature check, in every handshake. The talosconfig's
// certificate is signed by the Talos CA the node already holds, and Talos's own Go client sends
// exactly the certificates it was given, never a chain it built; gRPC sends any further blocks of
// the talosconfig's `crt` as the extra chain, which this mode leaves alone. So the suite sends
// what talosctl sends, without the work (about 5% of inspect's client CPU over 256 direct nodes,
// bench/HISTORY.md, "SSL_MODE_NO_AUTO_CHAIN").
#include <openssl/ssl.h>

extern "C" {

SSL_CTX* __real_SSL_CTX_new(const SSL_METHOD* method);

SSL_CTX* __wrap_SSL_CTX_new(const SSL_METHOD* method) {
    SSL_CTX* ctx = __real_SSL_CTX_new(method);
    if (ctx != nullptr) {
        SSL_CTX_set_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
    }
    return ctx;
}
}
