#include "common/cli/run.h"
#include "tools/reclaim/reclaim.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "reclaim", ichor::tools::reclaim::run);
}
