#include "common/cli/run.h"
#include "tools/inspect/inspect.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "inspect", ichor::tools::inspect::run);
}
