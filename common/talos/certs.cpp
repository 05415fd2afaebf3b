#include "common/talos/certs.h"

#include "common/util/strings.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <memory>
#include <optional>

namespace ichor::talos {

namespace {

constexpr std::string_view k_ed25519_label = "ED25519 PRIVATE KEY";
constexpr std::string_view k_pkcs8_label = "PRIVATE KEY";

// A PEM boundary line: "-----BEGIN LABEL-----" or "-----END LABEL-----".
std::string pem_boundary(std::string_view which, std::string_view label) {
    return "-----" + std::string(which) + " " + std::string(label) + "-----";
}

struct BioFree {
    void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// The last OpenSSL error as text, clearing the queue (it is per thread).
std::string openssl_reason() {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0) {
        return "no PEM block found";
    }
    const char* reason = ERR_reason_error_string(code);
    if (reason == nullptr) {
        return "unknown OpenSSL error";
    }
    return std::string_view(reason) == "no start line" ? "no PEM block found" : reason;
}

std::unique_ptr<BIO, BioFree> bio_of(std::string_view pem) {
    return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Result<X509Ptr> read_certificate(std::string_view pem) {
    auto bio = bio_of(pem);
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) {
        return make_error(ErrorKind::Config, "not a PEM certificate: " + openssl_reason());
    }
    return cert;
}

Result<PkeyPtr> read_private_key(std::string_view pem) {
    std::string relabelled = relabel_private_key(pem);
    auto bio = bio_of(relabelled);
    PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) {
        return make_error(ErrorKind::Config, "not a PEM private key: " + openssl_reason());
    }
    return key;
}

// The DER of the PEM's first certificate block; nullopt when there is none or it is not base64.
std::optional<std::string> first_certificate_der(std::string_view pem) {
    constexpr std::string_view begin = "-----BEGIN CERTIFICATE-----";
    constexpr std::string_view end = "-----END CERTIFICATE-----";
    auto b = pem.find(begin);
    auto e = b == std::string_view::npos ? b : pem.find(end, b);
    if (e == std::string_view::npos) {
        return std::nullopt;
    }
    std::string body;
    for (char c : pem.substr(b + begin.size(), e - b - begin.size())) {
        if (c != '\n' && c != '\r' && c != ' ' && c != '\t') {
            body.push_back(c);
        }
    }
    return util::base64_decode(body);
}

// The first DER element of `der`, header and content; nullopt when its length runs past the end.
std::optional<std::string_view> der_element(std::string_view der) {
    if (der.size() < 2) {
        return std::nullopt;
    }
    auto first = static_cast<unsigned char>(der[1]);
    std::size_t header = 2;
    std::size_t length = first;
    if (first & 0x80U) {
        std::size_t n = first & 0x7FU;
        if (n == 0 || n > 4 || der.size() < 2 + n) {
            return std::nullopt;
        }
        length = 0;
        for (std::size_t i = 0; i < n; ++i) {
            length = (length << 8U) | static_cast<unsigned char>(der[2 + i]);
        }
        header += n;
    }
    if (der.size() - header < length) {
        return std::nullopt;
    }
    return der.substr(0, header + length);
}

// The content of a constructed element (what follows its header).
std::string_view der_content(std::string_view element) {
    auto first = static_cast<unsigned char>(element[1]);
    return element.substr(2 + ((first & 0x80U) ? (first & 0x7FU) : 0));
}

// The whole SubjectPublicKeyInfo element of a DER certificate, found by walking RFC 5280 §4.1:
// Certificate { tbsCertificate { [0] version OPTIONAL, serialNumber, signature, issuer,
// validity, subject, subjectPublicKeyInfo, ... }, ... }. nullopt when the layout differs.
std::optional<std::string_view> subject_public_key_info(std::string_view der) {
    constexpr unsigned char k_sequence = 0x30;
    constexpr unsigned char k_version = 0xA0;
    auto cert = der_element(der);
    if (!cert || cert->size() != der.size() || static_cast<unsigned char>(der[0]) != k_sequence) {
        return std::nullopt;
    }
    auto tbs = der_element(der_content(*cert));
    if (!tbs || static_cast<unsigned char>((*tbs)[0]) != k_sequence) {
        return std::nullopt;
    }
    std::string_view rest = der_content(*tbs);
    int skip = !rest.empty() && static_cast<unsigned char>(rest[0]) == k_version ? 6 : 5;
    for (int i = 0; i <= skip; ++i) {
        auto el = der_element(rest);
        if (!el) {
            return std::nullopt;
        }
        if (i == skip) {
            return static_cast<unsigned char>((*el)[0]) == k_sequence ? el : std::nullopt;
        }
        rest.remove_prefix(el->size());
    }
    return std::nullopt;
}

std::string sha256_base64(std::string_view bytes) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
    return util::base64_encode(
        std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
        s.replace(pos, from.size(), to);
    }
}

} // namespace

std::string relabel_private_key(std::string_view pem) {
    std::string out(pem);
    for (std::string_view which : {"BEGIN", "END"}) {
        replace_all(out, pem_boundary(which, k_ed25519_label), pem_boundary(which, k_pkcs8_label));
    }
    return out;
}

Status check_certificate(std::string_view pem) {
    auto cert = read_certificate(pem);
    return cert ? ok_status() : Status(cert.error());
}

Status check_private_key(std::string_view pem) {
    auto key = read_private_key(pem);
    return key ? ok_status() : Status(key.error());
}

Status check_key_matches(std::string_view cert_pem, std::string_view key_pem) {
    auto cert = read_certificate(cert_pem);
    if (!cert) {
        return cert.error();
    }
    auto key = read_private_key(key_pem);
    if (!key) {
        return key.error();
    }
    if (X509_check_private_key(cert->get(), key->get()) != 1) {
        ERR_clear_error();
        return make_error(ErrorKind::Config, "the key does not belong to the certificate");
    }
    return ok_status();
}

Result<std::string> spki_fingerprint(std::string_view cert_pem) {
    // Walking the DER is a twentieth of the cost of OpenSSL 3's parse, which runs every public
    // key through its decoder framework; a client fingerprints every connection it makes.
    if (auto der = first_certificate_der(cert_pem)) {
        if (auto spki = subject_public_key_info(*der)) {
            return sha256_base64(*spki);
        }
    }
    auto cert = read_certificate(cert_pem);
    if (!cert) {
        return cert.error();
    }
    unsigned char* der = nullptr;
    int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert->get()), &der);
    if (len <= 0) {
        return make_error(ErrorKind::Config, "cannot encode the public key: " + openssl_reason());
    }
    std::string fp = sha256_base64(
        std::string_view(reinterpret_cast<const char*>(der), static_cast<size_t>(len)));
    OPENSSL_free(der);
    return fp;
}

Result<std::string> parse_fingerprint(std::string_view text) {
    auto bad = [&](std::string_view reason) {
        return make_error(ErrorKind::Usage, "bad certificate fingerprint \"" + std::string(text) +
                                                "\": " + std::string(reason));
    };
    auto bytes = util::base64_decode(util::trim(text));
    if (!bytes || util::trim(text).empty()) {
        return bad("not base64");
    }
    if (bytes->size() != SHA256_DIGEST_LENGTH) {
        return bad("not a SHA-256 digest (" + std::to_string(bytes->size()) + " bytes)");
    }
    return util::base64_encode(*bytes);
}

} // namespace ichor::talos
