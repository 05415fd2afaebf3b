// kubectl ichor reclaim: reset a machine another cluster configured, and register it.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::tools::reclaim {

struct Options {
    std::string address;
    cli::TalosOptions talos;
    cli::KubeOptions kube;
    bool force_ungraceful = false;
    std::string confirm_uuid;
    std::string confirm_serial;
    std::int64_t wait_timeout_ms = 15 * 60 * 1000;
    cli::OutputOptions output;
};

// Pure: arguments to options, help text, or a usage error.
Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::reclaim
