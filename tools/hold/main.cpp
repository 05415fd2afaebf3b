#include "common/cli/run.h"
#include "tools/hold/hold.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "hold", ichor::tools::hold::run);
}
