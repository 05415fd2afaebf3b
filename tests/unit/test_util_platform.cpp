#include "common/util/platform.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <string>

// Built twice: in ichor-unit (the Linux path) and in ichor-unit-posix (ICHOR_POSIX_ONLY, the
// fallbacks macOS takes), tests/unit/CMakeLists.txt.
namespace platform = ichor::util::platform;

TEST_CASE("platform: the path this build took") {
#if defined(ICHOR_POSIX_ONLY) || !defined(__linux__)
    CHECK_FALSE(platform::linux_path());
#else
    CHECK(platform::linux_path());
#endif
}

TEST_CASE("platform: pipe_cloexec gives two close-on-exec ends that carry bytes") {
    int fds[2] = {-1, -1};
    REQUIRE(platform::pipe_cloexec(fds) == 0);
    CHECK((::fcntl(fds[0], F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(fds[1], F_GETFD) & FD_CLOEXEC) != 0);
    REQUIRE(::write(fds[1], "x", 1) == 1);
    char c = 0;
    REQUIRE(::read(fds[0], &c, 1) == 1);
    CHECK(c == 'x');
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("platform: sync_filesystem_of flushes an open directory") {
    int fd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(platform::sync_filesystem_of(fd) == 0);
    ::close(fd);
}

TEST_CASE("platform: self_executable") {
    std::string self = platform::self_executable();
    if (platform::linux_path()) {
        REQUIRE_FALSE(self.empty());
        CHECK(self.front() == '/');
        CHECK(::access(self.c_str(), X_OK) == 0);
    } else {
#if defined(__APPLE__)
        CHECK_FALSE(self.empty());
#else
        CHECK(self.empty()); // the dispatcher then takes argv[0]
#endif
    }
}

TEST_CASE("platform: limit_malloc_arenas returns on either path") {
    platform::limit_malloc_arenas(2);
    SUCCEED();
}
