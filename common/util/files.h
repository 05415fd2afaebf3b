// File helpers. Errors carry the path; the caller adds what the file was for.
#pragma once

#include "common/util/result.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

namespace ichor::util {

// The most any reader takes from one file or stream unless told less: doc::Limits's stream limit
// (64 MiB; util cannot include doc). A single document's readers pass its limit (3 MiB).
inline constexpr std::size_t k_max_read_bytes = 64u << 20;

// Reads a whole file, at most `max_bytes`: a larger file, or one without end (/dev/zero, a FIFO
// that never closes its writer), is refused once byte max_bytes + 1 arrives, never read to its
// end: kind Usage, code InputLimit, "PATH: the input is larger than the limit of N bytes (M MiB)".
// Other errors are kind Config: "open PATH: reason", "read PATH: reason".
Result<std::string> read_file(const std::string& path, std::size_t max_bytes = k_max_read_bytes);

// Reads a stream to its end, at most `max_bytes`, refusing a longer one as read_file does (the
// message names `source`). What was read of a refused stream is discarded.
Result<std::string> read_stream(std::istream& in, std::string_view source,
                                std::size_t max_bytes = k_max_read_bytes);

// Writes a new file with mode 0600, refusing to replace an existing one (O_EXCL), fsynced; with
// `sync` false not fsynced: the caller makes it durable with sync_filesystem, once for many.
Status write_private_file(const std::string& path, const std::string& content, bool sync = true);

// Makes what was written to the filesystem that holds `dir` durable, the folder's entries
// included (syncfs(2)): one journal commit for many new files instead of an fsync each, which
// on a disk that takes milliseconds per fsync is most of the time to save 256 backups.
Status sync_filesystem(const std::string& dir);

// Writes (replacing) a file with the given mode, atomically through a temporary in the same
// folder.
Status write_file_atomic(const std::string& path, const std::string& content, unsigned mode);

// True when the file can be read by group or others (mode & 077 on the read bits).
bool readable_by_others(const std::string& path);

// Expands a leading "~/" with $HOME as given.
std::string expand_home(const std::string& path, const std::string& home);

// The folder of a path ("." for a bare name).
std::string dirname(const std::string& path);

} // namespace ichor::util
