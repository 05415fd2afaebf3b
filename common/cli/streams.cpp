#include "common/cli/streams.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <streambuf>

extern char** environ;

namespace ichor::cli {

namespace {

// An unbuffered-on-error streambuf over a file descriptor that remembers the first errno.
class FdOutBuf : public std::streambuf {
  public:
    explicit FdOutBuf(int fd) : m_fd(fd) { setp(m_buf, m_buf + sizeof(m_buf)); }
    ~FdOutBuf() override { sync(); }
    int error() const { return m_errno; }

  protected:
    int_type overflow(int_type ch) override {
        if (flush_buffer() != 0) {
            return traits_type::eof();
        }
        if (ch != traits_type::eof()) {
            *pptr() = static_cast<char>(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return flush_buffer(); }

  private:
    int flush_buffer() {
        char* p = pbase();
        while (p < pptr()) {
            if (m_errno != 0) {
                break;
            }
            ssize_t n = ::write(m_fd, p, static_cast<size_t>(pptr() - p));
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                m_errno = errno;
                break;
            }
            p += n;
        }
        setp(m_buf, m_buf + sizeof(m_buf));
        return m_errno == 0 ? 0 : -1;
    }
    int m_fd;
    int m_errno = 0;
    char m_buf[1 << 15];
};

FdOutBuf& out_buf() {
    static FdOutBuf buf(1);
    return buf;
}

} // namespace

Environment process_environment() {
    Environment env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) {
            env.vars[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
    }
    return env;
}

Streams process_streams() {
    std::signal(SIGPIPE, SIG_IGN); // a closed pipe is seen as EPIPE on write, then ends quietly
    static std::ostream out(&out_buf());
    Environment env = process_environment();
    bool err_tty = ::isatty(2) != 0;
    bool color = err_tty && !env.get("NO_COLOR").has_value() && env.get_or("TERM", "") != "dumb";
    return Streams{std::cin,         out,     std::cerr, ::isatty(0) != 0,
                   ::isatty(1) != 0, err_tty, color,     std::move(env)};
}

int stdout_errno() {
    out_buf().pubsync();
    return out_buf().error();
}

} // namespace ichor::cli
