#include "common/cli/consent.h"

#include "common/cli/prompt.h"
#include "common/doc/vocabulary.h"

#include <ostream>

namespace ichor::cli {

Status obtain_consent(Streams& s, const std::string& what, const std::vector<std::string>& changes,
                      bool yes) {
    if (!changes.empty()) {
        s.err << "Adopting replaces these values on the node with the ones Ichor renders (class "
                 "B):\n";
        for (const auto& c : changes) {
            s.err << "  " << c << "\n";
        }
    }
    if (yes) {
        s.err << "Consent given with --yes: " << what << "\n";
        return ok_status();
    }
    if (!can_prompt(s)) {
        return make_error(ErrorKind::Findings,
                          "consent needed to " + what + ", and there is no terminal to ask; " +
                              std::string(vocab::k_nothing_written),
                          "read the plan, then run again with --yes",
                          vocab::code::k_consent_needed);
    }
    auto answer = prompt_line(s, "Type yes to " + what + ": ");
    if (!answer || *answer != "yes") {
        return make_error(ErrorKind::Findings,
                          "not confirmed; " + std::string(vocab::k_nothing_written), "",
                          vocab::code::k_not_confirmed);
    }
    return ok_status();
}

} // namespace ichor::cli
