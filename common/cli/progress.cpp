#include "common/cli/progress.h"

#include <ostream>

namespace ichor::cli {

void Progress::update(std::string_view line) {
    if (!m_s.err_tty) {
        return;
    }
    m_s.err << "\r\033[K" << line;
    m_s.err.flush();
    m_open = true;
}

void Progress::done() {
    if (m_open) {
        m_s.err << "\r\033[K";
        m_s.err.flush();
        m_open = false;
    }
}

void Progress::announce(std::string_view line) {
    done();
    m_s.err << line << '\n';
    m_s.err.flush();
}

} // namespace ichor::cli
