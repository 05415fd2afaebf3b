// kubectl ichor drift: the plan of an adoption from trusted Inspections.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <string>
#include <vector>

namespace ichor::tools::driftclass {

struct Options {
    cli::KubeOptions kube;
    cli::BundleOptions bundle;
    std::string cluster_file; // offline: the TalosCluster
    std::string patches_file; // offline: its TalosConfigPatches and TalosMachines
    bool add_machine = false;
    bool node_check = false; // --node-check: each planned machine dry-run on its node
    cli::TalosOptions talos; // the credential for --node-check
    cli::InputOptions input;
    cli::OutputOptions output;
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::driftclass
