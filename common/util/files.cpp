#include "common/util/files.h"

#include "common/util/platform.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>

namespace ichor::util {

namespace {

Error too_large(std::string_view source, std::size_t max_bytes) {
    std::string size = std::to_string(max_bytes) + " bytes";
    if (max_bytes >= (1u << 20) && max_bytes % (1u << 20) == 0) {
        size += " (" + std::to_string(max_bytes >> 20) + " MiB)";
    }
    return make_error(ErrorKind::Usage,
                      std::string(source) + ": the input is larger than the limit of " + size,
                      "the limits are in docs/design.md, \"Limits of the readers\"",
                      "InputLimit"); // vocab::code::k_input_limit
}

// Reads up to max_bytes + 1 bytes in chunks: one byte past the limit is enough to refuse.
bool read_bounded(std::istream& in, std::size_t max_bytes, std::string& out) {
    char buf[64 * 1024];
    while (in) {
        in.read(buf, sizeof buf);
        auto n = static_cast<std::size_t>(in.gcount());
        if (out.size() + n > max_bytes) {
            return false;
        }
        out.append(buf, n);
    }
    return true;
}

} // namespace

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return make_error(ErrorKind::Config, "open " + path + ": " + std::strerror(errno));
    }
    std::string text;
    if (!read_bounded(in, max_bytes, text)) {
        return too_large(path, max_bytes);
    }
    if (in.bad()) {
        return make_error(ErrorKind::Config, "read " + path + ": " + std::strerror(errno));
    }
    return text;
}

Result<std::string> read_stream(std::istream& in, std::string_view source, std::size_t max_bytes) {
    std::string text;
    if (!read_bounded(in, max_bytes, text)) {
        return too_large(source, max_bytes);
    }
    return text;
}

namespace {
Status write_all(int fd, const std::string& path, const std::string& content, bool sync = true) {
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_error(ErrorKind::Config, "write " + path + ": " + std::strerror(errno));
        }
        done += static_cast<size_t>(n);
    }
    if (sync && ::fsync(fd) != 0) {
        return make_error(ErrorKind::Config, "fsync " + path + ": " + std::strerror(errno));
    }
    return ok_status();
}
} // namespace

Status write_private_file(const std::string& path, const std::string& content, bool sync) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            return make_error(ErrorKind::Config, path + " already exists; it is never overwritten",
                              "choose another path, or move the existing file away first");
        }
        return make_error(ErrorKind::Config, "create " + path + ": " + std::strerror(errno));
    }
    ::fchmod(fd, 0600); // the umask may have narrowed it further; never wider
    Status st = write_all(fd, path, content, sync);
    ::close(fd);
    if (!st) {
        ::unlink(path.c_str());
    }
    return st;
}

Status sync_filesystem(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return make_error(ErrorKind::Config, "open " + dir + ": " + std::strerror(errno));
    }
    int rc = platform::sync_filesystem_of(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) {
        return make_error(ErrorKind::Config, "sync " + dir + ": " + std::strerror(err));
    }
    return ok_status();
}

Status write_file_atomic(const std::string& path, const std::string& content, unsigned mode) {
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        return make_error(ErrorKind::Config, "create " + tmp + ": " + std::strerror(errno));
    }
    ::fchmod(fd, mode);
    Status st = write_all(fd, tmp, content);
    ::close(fd);
    if (!st) {
        ::unlink(tmp.c_str());
        return st;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return make_error(ErrorKind::Config, "rename " + tmp + ": " + std::strerror(errno));
    }
    return ok_status();
}

bool readable_by_others(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return false;
    }
    return (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
}

std::string expand_home(const std::string& path, const std::string& home) {
    if (path == "~") {
        return home;
    }
    if (path.rfind("~/", 0) == 0) {
        return home + path.substr(1);
    }
    return path;
}

std::string dirname(const std::string& path) {
    auto pos = path.find_last_of('/');
    if (pos == std::string::npos) {
        return ".";
    }
    if (pos == 0) {
        return "/";
    }
    return path.substr(0, pos);
}

} // namespace ichor::util
