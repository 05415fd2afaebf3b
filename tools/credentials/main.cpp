#include "common/cli/run.h"
#include "tools/credentials/credentials.h"

int main(int argc, char** argv) {
    return ichor::cli::run_main(argc, argv, "credentials", ichor::tools::credentials::run);
}
