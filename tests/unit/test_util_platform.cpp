#include "common/util/platform.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

namespace {

// The resident size of this process in bytes (Linux), else 0.
long resident_bytes() {
#if defined(__linux__)
    long pages = 0;
    long resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) {
            resident = 0;
        }
        std::fclose(f);
    }
    return resident * ::sysconf(_SC_PAGESIZE);
#else
    return 0;
#endif
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ICHOR_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ICHOR_TEST_ASAN 1
#endif

} // namespace

TEST_CASE("platform: release_free_memory gives back the free pages inside the heap") {
    // 48 MB in blocks below glibc's mmap threshold, touched; every other one freed. The blocks
    // kept stand between the freed ones, so no free chunk reaches the heap's top or fills a
    // mapping of its own, and free() alone leaves their 24 MB resident.
    std::vector<char*> blocks;
    for (int i = 0; i < 768; ++i) {
        auto* b = static_cast<char*>(std::malloc(64 * 1024));
        REQUIRE(b != nullptr);
        std::memset(b, 1, 64 * 1024);
        blocks.push_back(b);
    }
    for (std::size_t i = 0; i < blocks.size(); i += 2) {
        std::free(blocks[i]);
    }
    const long before = resident_bytes();
    platform::release_free_memory();
    const long after = resident_bytes();
    for (std::size_t i = 1; i < blocks.size(); i += 2) {
        std::free(blocks[i]);
    }
#if defined(ICHOR_POSIX_ONLY) || !defined(__linux__) || !defined(__GLIBC__) ||                     \
    defined(ICHOR_TEST_ASAN)
    SUCCEED(); // nothing to release, or not glibc's heap
    (void)before;
    (void)after;
#else
    CHECK(before - after > 16L * 1024 * 1024);
#endif
}
