// kubectl ichor credentials NAME: a talosconfig with an os:admin client certificate minted from
// the cluster's bundle, written 0600.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ichor::tools::credentials {

struct Options {
    cli::KubeOptions kube;
    cli::BundleOptions bundle;
    std::vector<std::string> endpoints;
    std::vector<std::string> roles;
    std::int64_t ttl_seconds = 0;
    std::string output_file;
};

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::credentials
