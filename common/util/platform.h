#pragma once
// The suite's only Linux-specific calls, each with a POSIX fallback (docs/design.md "macOS").
// The fallback is taken on every system that is not Linux, and on Linux when the build defines
// ICHOR_POSIX_ONLY (CMake option of the same name; tests/unit's portability.posix test compiles
// the callers that way). Nothing else in common/ or tools/ may call syncfs, mallopt, pipe2 or
// read /proc (ctest portability.linux_calls_in_one_module).

#include <string>

namespace ichor::util::platform {

// True when the Linux path is compiled in.
bool linux_path();

// Flushes the filesystem that holds the open file or directory fd to its disk, as one journal
// commit (Linux: syncfs(2)); elsewhere sync(2), which flushes every filesystem. 0 or -1 (errno).
int sync_filesystem_of(int fd);

// The absolute path of the running executable (Linux: /proc/self/exe; macOS:
// _NSGetExecutablePath), or "" when the system does not tell.
std::string self_executable();

// At most n malloc arenas (glibc: mallopt(M_ARENA_MAX)); elsewhere nothing to limit.
void limit_malloc_arenas(int n);

// Gives the pages that the heap holds free back to the system (glibc: malloc_trim(0), which also
// releases whole free pages inside the heap and in every arena, not only at its top); elsewhere
// nothing. Nothing allocated moves.
void release_free_memory();

// pipe(2) with both ends close-on-exec (Linux: pipe2 in one call). 0 or -1 (errno).
int pipe_cloexec(int fds[2]);

} // namespace ichor::util::platform
