// The one way a stage tells the user what happens: one interface, one name per kind of message.
// cli::StreamReporter is the terminal's; tests record the lines.
#pragma once

#include <string_view>

namespace ichor::stages {

// How the user is told what happens, one name per kind of message. The terminal's reporter
// (cli::StreamReporter) shows status lines on a terminal only; steps and warnings always.
class Reporter {
  public:
    virtual ~Reporter() = default;
    // A transient line (what is being waited for), replaced by the next one.
    virtual void status(std::string_view line) = 0;
    // Clears the transient line.
    virtual void end_status() = 0;
    // A step begun or done, a permanent line.
    virtual void step(std::string_view line) = 0;
    // Something the user must know that does not stop the run.
    virtual void warning(std::string_view line) = 0;
};

} // namespace ichor::stages
