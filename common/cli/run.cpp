#include "common/cli/run.h"

#include "common/cli/errors.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <ostream>

namespace ichor::cli {

int fail(Streams& s, std::string_view verb, const Error& e) {
    report_error(s, verb, e);
    return exit_code(e.kind);
}

int run_main(int argc, char** argv, std::string_view verb, RunFn run) {
    Streams s = process_streams();
    std::vector<std::string> args(argv, argv + argc);
    int code = 0;
    try {
        code = run(args, s);
    } catch (const std::exception& e) {
        code = fail(s, verb,
                    make_error(ErrorKind::Internal, std::string("internal error: ") + e.what(),
                               "please report this with the command line"));
    }
    int err = stdout_errno();
    if (err != 0 && err != EPIPE) {
        return fail(
            s, verb,
            make_error(ErrorKind::Findings, std::string("write stdout: ") + std::strerror(err)));
    }
    return code;
}

} // namespace ichor::cli
