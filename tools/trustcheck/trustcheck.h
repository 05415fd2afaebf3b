// kubectl ichor trustcheck: is each inspected node a member of the cluster's PKI?
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <string>
#include <vector>

namespace ichor::tools::trustcheck {

struct Options {
    cli::KubeOptions kube;
    cli::TalosOptions talos;
    cli::BundleOptions bundle;
    cli::InputOptions input;
    cli::OutputOptions output;
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::trustcheck
