#include "common/cli/run.h"
#include "tools/driftclass/driftclass.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "drift", ichor::tools::driftclass::run);
}
