#include "common/cli/run.h"
#include "tools/trustcheck/trustcheck.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "trustcheck", ichor::tools::trustcheck::run);
}
