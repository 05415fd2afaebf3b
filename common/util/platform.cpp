#include "common/util/platform.h"

#if defined(__linux__) && !defined(ICHOR_POSIX_ONLY)
#define ICHOR_LINUX_PATH 1
#else
#define ICHOR_LINUX_PATH 0
#endif

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#if ICHOR_LINUX_PATH
#include <malloc.h>
#endif
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <stdlib.h>
#endif

namespace ichor::util::platform {

bool linux_path() {
    return ICHOR_LINUX_PATH != 0;
}

int sync_filesystem_of(int fd) {
#if ICHOR_LINUX_PATH
    return ::syncfs(fd);
#else
    (void)fd;
    ::sync();
    return 0;
#endif
}

std::string self_executable() {
#if ICHOR_LINUX_PATH
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    return n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
#elif defined(__APPLE__)
    char buf[PATH_MAX];
    uint32_t size = sizeof(buf);
    char real[PATH_MAX];
    if (_NSGetExecutablePath(buf, &size) == 0 && ::realpath(buf, real) != nullptr) {
        return real;
    }
    return {};
#else
    return {};
#endif
}

void limit_malloc_arenas(int n) {
#if ICHOR_LINUX_PATH && defined(M_ARENA_MAX)
    mallopt(M_ARENA_MAX, n);
#else
    (void)n;
#endif
}

void release_free_memory() {
#if ICHOR_LINUX_PATH && defined(__GLIBC__)
    malloc_trim(0);
#endif
}

int pipe_cloexec(int fds[2]) {
#if ICHOR_LINUX_PATH
    return ::pipe2(fds, O_CLOEXEC);
#else
    if (::pipe(fds) != 0) {
        return -1;
    }
    for (int i = 0; i < 2; ++i) {
        if (::fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            return -1;
        }
    }
    return 0;
#endif
}

} // namespace ichor::util::platform
