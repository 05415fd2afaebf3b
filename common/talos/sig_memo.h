// Memoized signature checks of the certificates TLS peers present (sig_memo.cpp says why). Built
// and linked only with ICHOR_STATIC_GRPC, which defines ICHOR_PEM_MEMO: with shared libraries,
// libcrypto's call from its chain verification into X509_verify cannot be wrapped at link time.
#pragma once

#include <cstdint>

namespace ichor::talos {

// True when X509_verify is wrapped in this executable.
bool sig_memo_active();

// How many checks the memo has answered, in this process (for tests).
std::uint64_t sig_memo_answered();

} // namespace ichor::talos
