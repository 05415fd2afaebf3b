#include "common/cli/run.h"
#include "tools/adopt/adopt.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "adopt", ichor::tools::adopt::run);
}
