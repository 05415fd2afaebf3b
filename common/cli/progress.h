// Progress lines on the terminal only: nothing when stderr is not a terminal, so pipes and logs
// stay quiet. Steps that a user must always see (a warning, an announced step) are printed with
// report_warning or announce, which write whether or not stderr is a terminal.
#pragma once

#include "common/cli/streams.h"

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

} // namespace ichor::cli
