// File helpers. Errors carry the path; the caller adds what the file was for.
#pragma once

#include "common/util/result.h"

#include <string>

namespace ichor::util {

// Reads a whole file. Error kind Config: "open PATH: reason".
Result<std::string> read_file(const std::string& path);

// Writes a new file with mode 0600, refusing to replace an existing one (O_EXCL), fsynced.
Status write_private_file(const std::string& path, const std::string& content);

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
