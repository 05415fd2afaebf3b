#include "common/kube/process.h"

#include "common/util/platform.h"
#include "common/util/strings.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ichor::kube {

namespace {

bool is_executable_file(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<char*> c_strings(const std::vector<std::string>& v) {
    std::vector<char*> out;
    for (const auto& s : v) {
        out.push_back(const_cast<char*>(s.c_str()));
    }
    out.push_back(nullptr);
    return out;
}

struct Pipe {
    int r = -1;
    int w = -1;
    ~Pipe() {
        close_read();
        close_write();
    }
    void close_read() {
        if (r >= 0) {
            ::close(r);
            r = -1;
        }
    }
    void close_write() {
        if (w >= 0) {
            ::close(w);
            w = -1;
        }
    }
};

enum class Drained { Done, TimedOut, TooLarge };

// Reads both pipes until EOF, the deadline or more than `max_bytes` on one of them.
Drained drain(Pipe& out, Pipe* err, ProcessResult& res, std::int64_t timeout_ms,
              std::size_t max_bytes) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buf[8192];
    while (out.r >= 0 || (err != nullptr && err->r >= 0)) {
        pollfd fds[2] = {{out.r, POLLIN, 0}, {err != nullptr ? err->r : -1, POLLIN, 0}};
        int wait = -1;
        if (timeout_ms > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return Drained::TimedOut;
            }
            wait = static_cast<int>(left.count());
        }
        int n = ::poll(fds, 2, wait);
        if (n < 0 && errno != EINTR) {
            return Drained::Done;
        }
        for (int i = 0; i < 2 && n > 0; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) {
                continue;
            }
            Pipe& p = i == 0 ? out : *err;
            ssize_t got = ::read(p.r, buf, sizeof buf);
            if (got > 0) {
                std::string& into = i == 0 ? res.out : res.err;
                if (max_bytes > 0 && into.size() + static_cast<size_t>(got) > max_bytes) {
                    return Drained::TooLarge;
                }
                into.append(buf, static_cast<size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                p.close_read();
            }
        }
    }
    return Drained::Done;
}

} // namespace

std::optional<std::string> find_executable(const std::string& command, const std::string& base_dir,
                                           const std::string& path_list) {
    if (command.find('/') != std::string::npos) {
        std::string p = command.front() == '/' ? command : base_dir + "/" + command;
        return is_executable_file(p) ? std::optional<std::string>(p) : std::nullopt;
    }
    for (const auto& dir : util::split(path_list, ':')) {
        if (dir.empty()) {
            continue;
        }
        std::string p = dir + "/" + command;
        if (is_executable_file(p)) {
            return p;
        }
    }
    return std::nullopt;
}

Result<ProcessResult> run_process(const ProcessSpec& spec) {
    Pipe out;
    Pipe err;
    int fds[2];
    if (util::platform::pipe_cloexec(fds) != 0) {
        return make_error(ErrorKind::Internal, std::string("pipe: ") + std::strerror(errno));
    }
    out.r = fds[0];
    out.w = fds[1];
    bool capture_err = spec.stderr_fd < 0;
    if (capture_err) {
        if (util::platform::pipe_cloexec(fds) != 0) {
            return make_error(ErrorKind::Internal, std::string("pipe: ") + std::strerror(errno));
        }
        err.r = fds[0];
        err.w = fds[1];
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!spec.inherit_stdin) {
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    }
    posix_spawn_file_actions_adddup2(&fa, out.w, 1);
    if (capture_err) {
        posix_spawn_file_actions_adddup2(&fa, err.w, 2);
    } else if (spec.stderr_fd != 2) {
        posix_spawn_file_actions_adddup2(&fa, spec.stderr_fd, 2);
    }
    auto argv = c_strings(spec.argv);
    auto envp = c_strings(spec.envp);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, spec.path.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        return make_error(ErrorKind::Internal, "run " + spec.path + ": " + std::strerror(rc));
    }
    out.close_write();
    err.close_write();
    ProcessResult res;
    Drained d =
        drain(out, capture_err ? &err : nullptr, res, spec.timeout_ms, spec.max_output_bytes);
    if (d != Drained::Done) {
        res.timed_out = d == Drained::TimedOut;
        res.output_too_large = d == Drained::TooLarge;
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
        res.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res.signal = WTERMSIG(status);
    }
    return res;
}

} // namespace ichor::kube
