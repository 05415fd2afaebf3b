// Running a child process (an exec credential plugin) with an explicit environment, its stdout
// captured. Internal to common/kube.
#pragma once

#include "common/util/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ichor::kube {

struct ProcessSpec {
    std::string path;              // absolute or relative to the working directory
    std::vector<std::string> argv; // argv[0] included
    std::vector<std::string> envp; // "NAME=value", the child's whole environment
    bool inherit_stdin = false;    // else /dev/null
    int stderr_fd = 2;             // the child's stderr goes here; < 0: captured
    std::int64_t timeout_ms = 0;   // 0: none; on expiry the child is killed
    // Bytes read from stdout, and from stderr when captured, each at most; 0: no limit. Past
    // it the child is killed and nothing more is read.
    std::size_t max_output_bytes = 0;
};

struct ProcessResult {
    int exit_code = -1; // -1 when killed by a signal
    int signal = 0;
    bool timed_out = false;
    bool output_too_large = false; // killed for writing past max_output_bytes
    std::string out;
    std::string err; // only when stderr_fd < 0
};

// Starts, waits for and reaps the child. Error (Internal) only when it cannot be started at all.
Result<ProcessResult> run_process(const ProcessSpec& spec);

// Where `command` runs from: a command with a '/' is taken relative to `base_dir` (unless
// absolute); a bare name is looked up in `path_list` (':'-separated). nullopt when there is no
// executable file there.
std::optional<std::string> find_executable(const std::string& command, const std::string& base_dir,
                                           const std::string& path_list);

} // namespace ichor::kube
