// Memoized DER reads of TLS peers' certificates (der_memo.cpp says why). Built and linked only
// with ICHOR_STATIC_GRPC, which defines ICHOR_PEM_MEMO: with shared libraries, libssl's calls into
// libcrypto cannot be wrapped at link time.
#pragma once

namespace ichor::talos {

// True when d2i_X509 is wrapped in this executable.
bool der_memo_active();

} // namespace ichor::talos
