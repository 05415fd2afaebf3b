// kubectl ichor discovery add: put an address where Ichor's discovery looks, and say what becomes
// of the machine there (ADR 0128 decision 2, the discovery hint).
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/stages/stage.h"
#include "common/talos/address.h"

#include <string>
#include <vector>

namespace ichor::tools::discovery {

struct Options {
    std::string action; // add
    talos::Address address;
    cli::KubeOptions kube;
    cli::TalosOptions talos;
    cli::OutputOptions output;
};

// A malformed address is a usage error here, before anything connects or writes.
Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args);
stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s);

} // namespace ichor::tools::discovery
