#include "common/bundle/credentials.h"

#include "common/doc/vocabulary.h"
#include "common/util/strings.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace ichor::bundle {

namespace {

struct Free {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
    void operator()(X509* p) const { X509_free(p); }
    void operator()(BIO* p) const { BIO_free(p); }
};
template <class T> using Owned = std::unique_ptr<T, Free>;

std::string relabel(std::string pem) {
    for (const char* edge : {"BEGIN", "END"}) {
        std::string from = std::string("-----") + edge + " ED25519 PRIVATE KEY-----";
        std::string to = std::string("-----") + edge + " PRIVATE KEY-----";
        auto pos = pem.find(from);
        if (pos != std::string::npos) {
            pem.replace(pos, from.size(), to);
        }
    }
    return pem;
}

std::string bio_text(BIO* bio) {
    char* data = nullptr;
    long len = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(len));
}

Error config_error(const std::string& what) {
    return make_error(ErrorKind::Config, "minting a Talos API client certificate: " + what, "",
                      vocab::code::k_bad_bundle);
}

Result<Owned<EVP_PKEY>> load_ca_key(const Bundle& b) {
    std::string pem = relabel(machineconfig::pem_from_field(b.os.key));
    if (pem.empty()) {
        return config_error("the bundle has no certs.os.key (the Talos API CA key)");
    }
    Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    Owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) {
        return config_error("certs.os.key does not load");
    }
    return key;
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) {
        return false;
    }
    bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

} // namespace

Result<ClientCertificate> issue_client_certificate(const Bundle& b,
                                                   const std::vector<std::string>& roles,
                                                   std::int64_t ttl_seconds,
                                                   std::int64_t now_unix) {
    auto ca_key = load_ca_key(b);
    if (!ca_key) {
        return ca_key.error();
    }
    std::string ca_pem = b.os_ca_pem();
    Owned<BIO> cbio(BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())));
    Owned<X509> ca(PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr));
    if (!ca) {
        return config_error("certs.os.crt does not parse");
    }
    Owned<EVP_PKEY> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
    Owned<X509> cert(X509_new());
    if (!key || !cert) {
        return config_error("key generation failed");
    }
    unsigned char serial[16];
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    X509_set_version(cert.get(), 2);
    ASN1_TIME_set(X509_getm_notBefore(cert.get()), static_cast<time_t>(now_unix - 300));
    ASN1_TIME_set(X509_getm_notAfter(cert.get()), static_cast<time_t>(now_unix + ttl_seconds));
    X509_NAME* name = X509_get_subject_name(cert.get());
    for (const auto& role : roles) {
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(role.c_str()), -1, -1, 0);
    }
    X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
    X509_set_pubkey(cert.get(), key.get());
    if (!add_ext(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature") ||
        !add_ext(cert.get(), ca.get(), NID_ext_key_usage, "clientAuth") ||
        !add_ext(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always")) {
        return config_error("cannot add the certificate extensions");
    }
    if (X509_sign(cert.get(), ca_key->get(), nullptr) <= 0) {
        return config_error("signing with certs.os.key failed");
    }
    ClientCertificate out;
    Owned<BIO> cout(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509(cout.get(), cert.get());
    out.crt_pem = bio_text(cout.get());
    Owned<BIO> kout(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(kout.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    std::string k = bio_text(kout.get());
    for (const char* edge : {"BEGIN", "END"}) {
        std::string from = std::string("-----") + edge + " PRIVATE KEY-----";
        auto pos = k.find(from);
        if (pos != std::string::npos) {
            k.replace(pos, from.size(), std::string("-----") + edge + " ED25519 PRIVATE KEY-----");
        }
    }
    out.key_pem = k;
    return out;
}

std::string talosconfig_yaml(const std::string& context, const std::vector<std::string>& endpoints,
                             const std::string& ca_pem, const ClientCertificate& cert) {
    doc::Value v = doc::Value::object();
    v["context"] = context;
    doc::Value c = doc::Value::object();
    c["endpoints"] = endpoints;
    c["ca"] = util::base64_encode(ca_pem);
    c["crt"] = util::base64_encode(cert.crt_pem);
    c["key"] = util::base64_encode(cert.key_pem);
    v["contexts"][context] = std::move(c);
    return doc::to_yaml(v);
}

} // namespace ichor::bundle
