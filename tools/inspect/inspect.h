// kubectl ichor inspect: read Talos nodes; one Inspection per address.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <string>
#include <vector>

namespace ichor::tools::inspect {

struct Options {
    std::vector<std::string> addresses;
    cli::TalosOptions talos;
    bool insecure = false;
    std::string fingerprint;
    cli::InputOptions input; // -f: re-render saved Inspections instead of reading nodes
    cli::OutputOptions output;
};

// Pure: arguments to options, help text, or a usage error.
Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::inspect
