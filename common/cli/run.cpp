#include "common/cli/run.h"

#include "common/cli/errors.h"
#include "common/cli/function.h"
#include "common/doc/resource_list.h"
#include "common/util/files.h"
#include "common/util/platform.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <ostream>
#include <sstream>

namespace ichor::cli {

namespace {

// As a KRM function (function.h): the input is read here, its functionConfig's flags join the
// arguments, and the tool reads the same text from a buffer. An input that does not parse, or
// carries no functionConfig, reaches the tool unchanged (it reports a malformed input itself).
stages::Outcome run_as_function(const std::vector<std::string>& args, Streams& s, RunFn run) {
    auto read = util::read_stream(s.in, "<stdin>");
    if (!read) {
        return stages::failed(read.error());
    }
    const std::string text = std::move(*read);
    std::vector<std::string> all = args;
    auto list = doc::read_resource_list(text, "<stdin>");
    const bool configured = list && !list->function_config.is_null();
    if (configured) {
        auto flags = function_config_flags(list->function_config);
        if (!flags) {
            return stages::failed(flags.error());
        }
        all.insert(all.end(), flags->begin(), flags->end());
    }
    std::istringstream in(text);
    Streams buffered{in, s.out, s.err, false, s.out_tty, s.err_tty, s.color, s.env, s.verb};
    stages::Outcome out = run(all, buffered);
    if (configured && out.error && out.error->kind == ErrorKind::Usage) {
        // The hints name command-line flags; under kpt they are written KEY=VALUE.
        Error& e = *out.error;
        e.hint += std::string(e.hint.empty() ? "" : "; ") +
                  "as a KRM function, a flag --KEY VALUE is KEY=VALUE in the functionConfig (kpt "
                  "fn eval DIR --exec kubectl-ichor-" +
                  s.verb + " -- cluster=NAME)";
    }
    return out;
}

} // namespace

int run_tool(const std::vector<std::string>& args, Streams& s, std::string_view verb, RunFn run) {
    s.verb = std::string(verb);
    stages::Outcome out;
    try {
        out = may_run_as_function(args, s, verb) ? run_as_function(args, s, run) : run(args, s);
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

bool user_sets_malloc_arenas(const char* malloc_arena_max, const char* glibc_tunables) {
    return malloc_arena_max != nullptr ||
           (glibc_tunables != nullptr && std::strstr(glibc_tunables, "arena_max") != nullptr);
}

namespace {

// At most two malloc arenas, unless the user set glibc's own knob. glibc gives each thread that
// contends for the heap an arena of its own (up to eight per core), and memory freed in one arena
// is not reused by another: the plan of a 256-node adoption peaked at 64.2 MB of RSS for 26 MB
// of live heap, 60.4 MB with two arenas, for the same CPU (1.007x; inspect 0.977x; 15 and 25
// alternating runs, bench/HISTORY.md, "malloc arenas"). One arena saved more (58 MB) but
// cost a tenth more CPU, the loop threads waiting for its lock.
void limit_malloc_arenas() {
    if (!user_sets_malloc_arenas(std::getenv("MALLOC_ARENA_MAX"), std::getenv("GLIBC_TUNABLES"))) {
        util::platform::limit_malloc_arenas(2);
    }
}

} // namespace

int run_main(int argc, char** argv, std::string_view verb, RunFn run) {
    limit_malloc_arenas(); // before any thread starts
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
