// kubectl ichor adopt --cluster NAME --add-machine ADDRESS...: inspect, trustcheck, drift, then
// hold apply and hold release, in one process over the same documents.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::tools::adopt {

struct Options {
    cli::KubeOptions kube;
    cli::TalosOptions talos;
    cli::OutputOptions output;
    std::vector<std::string> add_machines;
    bool plan_only = false;
    bool yes = false;
    bool explain = false;
    bool node_check = true; // --no-node-check skips the dry run of each machine on its node
    std::string keep_stages;
    cli::BundleOptions bundle;
    std::string backup_dir;
    std::int64_t timeout_ms = 15 * 60 * 1000;
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
// The equivalent pipeline of single tools (--explain).
std::string explain(const Options& o);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::adopt
