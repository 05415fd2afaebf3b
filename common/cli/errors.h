// The error funnel: one mapping from error kinds to exit codes, one way to print an error.
#pragma once

#include "common/cli/streams.h"
#include "common/stages/stage.h"
#include "common/util/result.h"

#include <string_view>

namespace ichor::cli {

// The exit-status table of ARCHITECTURE.md: the one place error categories become exit codes.
int exit_code(ErrorKind kind);
// A stage's or a tool's outcome: 0 when nothing blocks, else the code of stages::category.
int exit_code(const stages::Outcome& outcome);

// The table as printed at the end of every --help.
std::string_view exit_status_help();

// Prints "kubectl ichor VERB: error: MESSAGE" and, when there is one, "hint: HINT" to err.
void report_error(Streams& s, std::string_view verb, const Error& e);
// Prints "kubectl ichor VERB: warning: MESSAGE" to err; nothing under -q (s.quiet).
void report_warning(Streams& s, std::string_view verb, std::string_view message);
// Prints a finding of the list's results as one line: "kubectl ichor VERB: error: MESSAGE" for
// severity error, as report_warning for warning (so nothing under -q); nothing for info. A line
// break in the message becomes a space.
void report_finding(Streams& s, std::string_view verb, std::string_view severity,
                    std::string_view message);

} // namespace ichor::cli
