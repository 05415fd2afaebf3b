// Errors as values. An Error has a kind (which decides the exit code, in common/cli only), a
// one-line message with its context, and an optional hint: the command a user should run instead.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ichor {

enum class ErrorKind {
    Findings,    // a refusal, blocking drift, a failed trust check: exit 1
    Usage,       // bad flags or malformed input: exit 2
    Config,      // talosconfig, kubeconfig, bundle, missing object or permission: exit 3
    Unreachable, // cannot reach the cluster API or a node at all: exit 4
    Partial,     // some done, some refused or failed: exit 5
    Internal,    // a bug: exit 70
    Io,          // a write to stdout or a file failed (disk full, a closed descriptor): exit 74
};

struct Error {
    ErrorKind kind = ErrorKind::Internal;
    std::string message;
    std::string hint;
    // A machine-readable code (tags ichor.maesh.dev/code), e.g. "Timeout", "UnknownAuthority".
    std::string code;

    // Returns a copy whose message is "context: message".
    [[nodiscard]] Error wrap(const std::string& context) const {
        Error e = *this;
        e.message = context + ": " + message;
        return e;
    }
};

inline Error make_error(ErrorKind kind, std::string message, std::string hint = {},
                        std::string_view code = {}) {
    return Error{kind, std::move(message), std::move(hint), std::string(code)};
}

// Result<T> holds a T or an Error. A minimal std::expected for C++20.
template <class T> class [[nodiscard]] Result {
  public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    [[nodiscard]] bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(m_v);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }

  private:
    std::variant<T, Error> m_v;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() {
    return Ok{};
}

} // namespace ichor
