#include "common/cli/run.h"
#include "tools/discovery/discovery.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "discovery", ichor::tools::discovery::run);
}
