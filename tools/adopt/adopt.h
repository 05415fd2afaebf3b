// kubectl ichor adopt: a whole running cluster (without --add-machine), or --cluster NAME
// --add-machine ADDRESS...: the options parsed here, the flow in common/stages/adopt.h.
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
    // A whole cluster (no --add-machine):
    std::vector<std::string> nodes;  // --nodes; empty: the talosconfig context's nodes
    bool cni_unmanaged = false;      // --cni-unmanaged: spec.cni.preset unmanaged
    std::string cilium_values;       // --cilium-values FILE: spec.cni.cilium.values (takeover)
    bool accept_cilium_diff = false; // --accept-cilium-diff: the preflight's differences consented
    int parallel = 1;                // --parallel: workers released at once
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
// The equivalent pipeline of single tools (--explain).
std::string explain(const Options& o);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::adopt
