#include "common/cli/errors.h"

#include <algorithm>
#include <ostream>
#include <string>

namespace ichor::cli {

int exit_code(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::Findings:
        return 1;
    case ErrorKind::Usage:
        return 2;
    case ErrorKind::Config:
        return 3;
    case ErrorKind::Unreachable:
        return 4;
    case ErrorKind::Partial:
        return 5;
    case ErrorKind::Internal:
        return 70;
    case ErrorKind::Io:
        return 74;
    }
    return 70;
}

int exit_code(const stages::Outcome& outcome) {
    auto kind = stages::category(outcome);
    return kind ? exit_code(*kind) : 0;
}

std::string_view exit_status_help() {
    return "Exit status:\n"
           "  0   done; nothing blocks\n"
           "  1   findings that stop the flow: a refusal, blocking drift, a failed trust check\n"
           "      (nothing was written)\n"
           "  2   usage error\n"
           "  3   configuration or credentials error (talosconfig, kubeconfig, bundle)\n"
           "  4   cannot reach the cluster API or a node at all\n"
           "  5   partial: some machines done, some refused or failed (each named in results)\n"
           "  70  internal error (a bug)\n"
           "  74  writing to standard output or a file failed (an I/O error)\n";
}

namespace {
void prefix(Streams& s, std::string_view verb, std::string_view word, std::string_view ansi) {
    s.err << "kubectl ichor" << (verb.empty() ? "" : " ") << verb << ": ";
    if (s.color) {
        s.err << ansi << word << "\033[0m";
    } else {
        s.err << word;
    }
    s.err << ": ";
}
} // namespace

void report_error(Streams& s, std::string_view verb, const Error& e) {
    prefix(s, verb, "error", "\033[31m");
    s.err << e.message << '\n';
    if (!e.hint.empty()) {
        s.err << "hint: " << e.hint << '\n';
    }
    s.err.flush();
}

void report_warning(Streams& s, std::string_view verb, std::string_view message) {
    if (s.quiet) {
        return;
    }
    prefix(s, verb, "warning", "\033[33m");
    s.err << message << '\n';
    s.err.flush();
}

void report_finding(Streams& s, std::string_view verb, std::string_view severity,
                    std::string_view message) {
    std::string line(message);
    std::replace(line.begin(), line.end(), '\n', ' ');
    if (severity == "error") {
        prefix(s, verb, "error", "\033[31m");
        s.err << line << '\n';
        s.err.flush();
    } else if (severity == "warning") {
        report_warning(s, verb, line);
    }
}

} // namespace ichor::cli
