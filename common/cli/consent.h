// Consent before a write: the changes listed on stderr, then "yes" typed on the terminal, or
// --yes. Without a terminal and without --yes, a refusal (nothing is written).
#pragma once

#include "common/cli/streams.h"
#include "common/util/result.h"

#include <string>
#include <vector>

namespace ichor::cli {

// `what` says what will be written ("create 1 TalosMachine and 1 TalosConfigPatch in
// ichor-system").
Status obtain_consent(Streams& s, const std::string& what, const std::vector<std::string>& changes,
                      bool yes);

} // namespace ichor::cli
