#include "common/cli/dispatch.h"

int main(int argc, char** argv) {
    return ichor::cli::dispatch_main(argc, argv);
}
