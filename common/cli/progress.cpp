#include "common/cli/progress.h"

#include "common/cli/errors.h"

#include <ostream>

namespace ichor::cli {

void StreamReporter::status(std::string_view line) {
    if (!m_s.err_tty) {
        return;
    }
    // Faint, so that it reads as transient beside the lines that stay; plain under NO_COLOR.
    m_s.err << "\r\033[K";
    if (m_s.color) {
        m_s.err << "\033[2m" << line << "\033[0m";
    } else {
        m_s.err << line;
    }
    m_s.err.flush();
    m_open = true;
}

void StreamReporter::end_status() {
    if (m_open) {
        m_s.err << "\r\033[K";
        m_s.err.flush();
        m_open = false;
    }
}

void StreamReporter::step(std::string_view line) {
    end_status();
    m_s.err << line << '\n';
    m_s.err.flush();
}

void StreamReporter::warning(std::string_view line) {
    end_status(); // the warning stays; the transient line it would run into goes
    report_warning(m_s, m_verb, line);
}

} // namespace ichor::cli
