#include "common/util/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ichor::util {

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return make_error(ErrorKind::Config, "open " + path + ": " + std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return make_error(ErrorKind::Config, "read " + path + ": " + std::strerror(errno));
    }
    return ss.str();
}

namespace {
Status write_all(int fd, const std::string& path, const std::string& content) {
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
    if (::fsync(fd) != 0) {
        return make_error(ErrorKind::Config, "fsync " + path + ": " + std::strerror(errno));
    }
    return ok_status();
}
} // namespace

Status write_private_file(const std::string& path, const std::string& content) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            return make_error(ErrorKind::Config, path + " already exists; it is never overwritten",
                              "choose another path, or move the existing file away first");
        }
        return make_error(ErrorKind::Config, "create " + path + ": " + std::strerror(errno));
    }
    ::fchmod(fd, 0600); // the umask may have narrowed it further; never wider
    Status st = write_all(fd, path, content);
    ::close(fd);
    if (!st) {
        ::unlink(path.c_str());
    }
    return st;
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
