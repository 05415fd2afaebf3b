#include "common/cli/run.h"

#include "common/cli/errors.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <ostream>

namespace ichor::cli {

int run_tool(const std::vector<std::string>& args, Streams& s, std::string_view verb, RunFn run) {
    stages::Outcome out;
    try {
        out = run(args, s);
    } catch (const std::exception& e) {
        out = stages::failed(make_error(ErrorKind::Internal,
                                        std::string("internal error: ") + e.what(),
                                        "please report this with the command line"));
    }
    if (out.error) {
        report_error(s, verb, *out.error);
    }
    return exit_code(out);
}

void run_completion(const CompletionRequest& req, Streams& s, CompletionSources src) {
    bool descriptions =
        completion_descriptions(req.descriptions ? "__complete" : "__completeNoDesc", src.env);
    s.out << format_completion(complete(req, src), descriptions);
    s.out.flush();
}

int run_main(int argc, char** argv, std::string_view verb, RunFn run) {
    Streams s = process_streams();
    std::vector<std::string> args(argv, argv + argc);
    int code = run_tool(args, s, verb, run);
    int err = stdout_errno();
    if (err != 0 && err != EPIPE) {
        Error e = make_error(ErrorKind::Io, std::string("write stdout: ") + std::strerror(err));
        report_error(s, verb, e);
        return exit_code(e.kind);
    }
    return code;
}

} // namespace ichor::cli
