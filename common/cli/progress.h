// Status lines on the terminal only: nothing when stderr is not a terminal, so pipes and logs stay
// quiet. What a user must always see (a step, a warning) is written whether or not stderr is a
// terminal.
#pragma once

#include "common/cli/streams.h"
#include "common/stages/reporter.h"

#include <string>
#include <string_view>
#include <utility>

namespace ichor::cli {

// The stages' reporter on the process's streams: status lines transient (overwritten by the next
// one: carriage return, erase line; faint when colour is on) and on a terminal only; steps and
// warnings (report_warning, for the tool `verb`) always, the status line cleared first.
class StreamReporter final : public stages::Reporter {
  public:
    StreamReporter(Streams& s, std::string verb) : m_s(s), m_verb(std::move(verb)) {}
    void status(std::string_view line) override;
    void end_status() override;
    void step(std::string_view line) override;
    void warning(std::string_view line) override;

  private:
    Streams& m_s;
    std::string m_verb;
    bool m_open = false; // a status line is on the terminal
};

} // namespace ichor::cli
