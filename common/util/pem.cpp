#include "common/util/pem.h"

#include "common/util/strings.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

namespace ichor::util {

std::optional<std::string> certificate_fingerprint(std::string_view pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    if (bio == nullptr) {
        return std::nullopt;
    }
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (cert == nullptr) {
        return std::nullopt;
    }
    unsigned char* der = nullptr;
    int len = i2d_X509(cert, &der);
    X509_free(cert);
    if (len <= 0) {
        return std::nullopt;
    }
    std::string out =
        sha256_digest(std::string_view(reinterpret_cast<char*>(der), static_cast<size_t>(len)));
    OPENSSL_free(der);
    return out;
}

std::vector<std::string> certificate_organizations(std::string_view pem) {
    std::vector<std::string> out;
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    if (bio == nullptr) {
        return out;
    }
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (cert == nullptr) {
        return out;
    }
    X509_NAME* subject = X509_get_subject_name(cert);
    int idx = -1;
    while ((idx = X509_NAME_get_index_by_NID(subject, NID_organizationName, idx)) >= 0) {
        ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
        out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                         static_cast<size_t>(ASN1_STRING_length(data)));
    }
    X509_free(cert);
    return out;
}

} // namespace ichor::util
