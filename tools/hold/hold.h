// kubectl ichor hold apply|release|abort.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::tools::hold {

struct Options {
    std::string action; // apply, release, abort
    cli::KubeOptions kube;
    cli::TalosOptions talos;
    cli::InputOptions input;
    cli::OutputOptions output;
    bool yes = false;
    std::string backup_dir;
    cli::BundleOptions bundle; // release: --secrets-bundle
    std::vector<std::string> machines;
    std::int64_t timeout_ms = 15 * 60 * 1000;
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::hold
