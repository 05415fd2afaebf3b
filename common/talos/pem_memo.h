// Memoized PEM reads under gRPC's TLS contexts (pem_memo.cpp says why). Built and linked only
// with ICHOR_STATIC_GRPC, which defines ICHOR_PEM_MEMO: with shared libraries, gRPC's calls into
// OpenSSL cannot be wrapped at link time.
#pragma once

namespace ichor::talos {

// True when PEM_read_bio_PrivateKey and PEM_read_bio_X509_AUX are wrapped in this executable.
bool pem_memo_active();

} // namespace ichor::talos
