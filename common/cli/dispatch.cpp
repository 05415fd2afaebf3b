#include "common/cli/dispatch.h"

#include "common/cli/errors.h"
#include "common/cli/run.h"
#include "common/cli/streams.h"
#include "common/util/files.h"
#include "common/util/version.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <iostream>

namespace ichor::cli {

const std::vector<Verb>& verbs() {
    static const std::vector<Verb> k_verbs = {
        {"adopt", "adopt installed Talos machines into an Ichor cluster (--add-machine)"},
        {"inspect", "read Talos nodes over their API"},
        {"trustcheck", "check that inspected nodes carry the cluster's CAs"},
        {"drift", "plan: the machines and patches to create, and the drift in classes A, B, C"},
        {"hold", "apply a plan as held machines, release them after a zero-drift check, or abort"},
        {"reclaim", "reset a machine another cluster configured, and register it"},
        {"credentials", "write a talosconfig for a cluster from its secrets bundle"},
    };
    return k_verbs;
}

namespace {
std::string verb_list(const std::string& dir, bool (*executable)(const std::string&)) {
    std::string out = "Adopt installed Talos machines and clusters into Ichor.\n\nUsage:\n"
                      "  kubectl ichor VERB [flags]\n\nVerbs:\n";
    for (const auto& v : verbs()) {
        std::string name(v.name);
        bool there = executable(dir + "/kubectl-ichor-" + name);
        out += "  " + name + std::string(14 - name.size(), ' ') + std::string(v.summary) +
               (there ? "" : " (not installed)") + "\n";
    }
    out += "\nRun 'kubectl ichor VERB --help' for a verb's flags, examples and exit status.\n\n";
    out += std::string(exit_status_help());
    return out;
}
} // namespace

Result<Dispatch> resolve_dispatch(const std::vector<std::string>& args, const std::string& dir,
                                  bool (*executable)(const std::string& path)) {
    Dispatch d;
    if (args.size() < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
        d.text = verb_list(dir, executable);
        return d;
    }
    if (args[1] == "--version" || args[1] == "version") {
        d.text = "kubectl-ichor " + std::string(util::k_version) + "\n";
        return d;
    }
    const std::string& verb = args[1];
    bool known = false;
    for (const auto& v : verbs()) {
        known = known || v.name == verb;
    }
    std::string names;
    for (const auto& v : verbs()) {
        names += (names.empty() ? "" : ", ") + std::string(v.name);
    }
    if (!known) {
        return make_error(ErrorKind::Usage,
                          "unknown verb \"" + verb + "\"; the verbs are: " + names,
                          "kubectl ichor --help", "Usage");
    }
    d.program = dir + "/kubectl-ichor-" + verb;
    if (!executable(d.program)) {
        return make_error(ErrorKind::Config, d.program + " is not installed next to kubectl-ichor",
                          "reinstall the plugin: kubectl krew install ichor", "NotInstalled");
    }
    d.args.push_back(d.program);
    d.args.insert(d.args.end(), args.begin() + 2, args.end());
    return d;
}

stages::Outcome dispatch_run(const std::vector<std::string>& args, Streams& s) {
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::string path = n > 0 ? std::string(self, static_cast<size_t>(n))
                             : (args.empty() ? std::string() : args.front());
    auto exe = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0; };
    auto d = resolve_dispatch(args, util::dirname(path), exe);
    if (!d) {
        return stages::failed(d.error());
    }
    if (d->program.empty()) {
        s.out << d->text;
        s.out.flush();
        return {};
    }
    std::vector<char*> cargs;
    for (auto& a : d->args) {
        cargs.push_back(a.data());
    }
    cargs.push_back(nullptr);
    ::execv(d->program.c_str(), cargs.data());
    return stages::failed(
        make_error(ErrorKind::Internal, "exec " + d->program + ": " + std::strerror(errno)));
}

int dispatch_main(int argc, char** argv) {
    return run_main(argc, argv, "", dispatch_run);
}

} // namespace ichor::cli
