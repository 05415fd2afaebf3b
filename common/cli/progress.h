// Progress lines on the terminal only: nothing when stderr is not a terminal, so pipes and logs
// stay quiet. Steps that a user must always see (a warning, an announced step) are printed with
// report_warning or announce, which write whether or not stderr is a terminal.
#pragma once

#include "common/cli/streams.h"
#include "common/stages/reporter.h"

#include <string>
#include <string_view>

namespace ichor::cli {

class Progress {
  public:
    explicit Progress(Streams& s) : m_s(s) {}
    // A transient status line, overwritten by the next one (carriage return, erase line); faint
    // when colour is on (a terminal, NO_COLOR unset).
    void update(std::string_view line);
    // Clears the transient line.
    void done();
    // A permanent line on stderr, terminal or not.
    void announce(std::string_view line);

  private:
    Streams& m_s;
    bool m_open = false;
};

// The stages' reporter on the process's streams: status lines as Progress::update (a terminal
// only), steps as Progress::announce, warnings as report_warning for the tool `verb` (the status
// line cleared first).
class StreamReporter final : public stages::Reporter {
  public:
    StreamReporter(Streams& s, std::string verb) : m_s(s), m_verb(std::move(verb)), m_p(s) {}
    void status(std::string_view line) override { m_p.update(line); }
    void end_status() override { m_p.done(); }
    void step(std::string_view line) override { m_p.announce(line); }
    void warning(std::string_view line) override;

  private:
    Streams& m_s;
    std::string m_verb;
    Progress m_p;
};

} // namespace ichor::cli
