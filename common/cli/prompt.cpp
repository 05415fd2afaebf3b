#include "common/cli/prompt.h"

#include "common/util/strings.h"

#include <istream>
#include <ostream>

namespace ichor::cli {

bool can_prompt(const Streams& s) {
    return s.in_tty && s.err_tty;
}

std::optional<std::string> prompt_line(Streams& s, std::string_view question) {
    if (!can_prompt(s)) {
        return std::nullopt;
    }
    s.err << question;
    s.err.flush();
    std::string line;
    if (!std::getline(s.in, line)) {
        s.err << '\n';
        return std::nullopt;
    }
    return std::string(util::trim(line));
}

} // namespace ichor::cli
