// Streams and the outcome of a tool: the one struct every run() is handed.
#pragma once

#include "common/util/env.h"

#include <iosfwd>
#include <string>

namespace ichor::cli {

struct Streams {
    std::istream& in;
    std::ostream& out;
    std::ostream& err;
    bool in_tty = false;
    bool out_tty = false;
    bool err_tty = false;
    bool color = false; // err is a terminal and NO_COLOR is unset
    Environment env;
    std::string verb;   // the tool's verb, set by run_tool: its warnings name it
    bool quiet = false; // -q: report_warning prints nothing (errors still print)
};

// Reads the real environment and terminals (the only place that does).
Environment process_environment();

// The process's streams over file descriptors 0, 1 and 2. Writes to fd 1 are checked: see
// stdout_failed().
Streams process_streams();

// After the run: 0 when stdout was written completely; EPIPE when the reader went away (the tool
// then ends quietly); another errno for a real failure (e.g. ENOSPC), which is an error.
int stdout_errno();

} // namespace ichor::cli
