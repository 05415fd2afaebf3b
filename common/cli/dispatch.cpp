#include "common/cli/dispatch.h"

#include "common/cli/complete.h"
#include "common/cli/errors.h"
#include "common/cli/run.h"
#include "common/cli/streams.h"
#include "common/doc/vocabulary.h"
#include "common/util/files.h"
#include "common/util/platform.h"
#include "common/util/version.h"

#include <unistd.h>

#include <algorithm>
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
        {"discovery", "add an address to a cluster's discovery and say which command applies"},
    };
    return k_verbs;
}

namespace {
std::string verb_list(const std::string& dir, bool (*executable)(const std::string&)) {
    std::string out =
        "Adopt installed Talos machines and clusters into Ichor.\n\nUsage:\n"
        "  kubectl ichor VERB [flags]\n"
        "  kubectl ichor completion bash|zsh|fish|kubectl-shim\n\n"
        "completion prints a shell completion script: bash, zsh and fish complete kubectl-ichor "
        "run\n"
        "by its own name; kubectl-shim is kubectl_complete-ichor, which kubectl 1.26+ runs from "
        "PATH\n"
        "to complete `kubectl ichor ...` (krew installs kubectl-ichor alone: put the shim beside "
        "it).\n"
        "Candidates come from each verb's own flags (kubectl-ichor __complete ARGS... WORD).\n"
        "  source <(kubectl-ichor completion bash)     # zsh alike; fish: ... | source\n"
        "  kubectl ichor completion kubectl-shim > ~/.krew/bin/kubectl_complete-ichor\n"
        "  chmod +x ~/.krew/bin/kubectl_complete-ichor\n\n"
        "Verbs:\n";
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

namespace {
bool known_verb(std::string_view name) {
    const auto& vs = verbs();
    return std::any_of(vs.begin(), vs.end(), [name](const Verb& v) { return v.name == name; });
}

// `kubectl-ichor __complete WORDS...`: the verbs and the dispatcher's own words here; after a
// verb, the verb's binary answers with its own flags (the same exec as a run).
Dispatch dispatch_completion(const std::vector<std::string>& args, const std::string& dir,
                             bool (*executable)(const std::string&)) {
    Dispatch d;
    bool descriptions = args[1] == "__complete";
    std::vector<std::string> words(args.begin() + 2, args.end());
    Completion c;
    if (words.size() <= 1) {
        std::string cur = words.empty() ? "" : words.front();
        if (!cur.empty() && cur[0] == '-') {
            c.candidates = {{"--help", "list the verbs"},
                            {"-h", "list the verbs"},
                            {"--version", "print the version"}};
        } else {
            for (const auto& v : verbs()) {
                c.candidates.push_back({std::string(v.name), std::string(v.summary)});
            }
            c.candidates.push_back({"completion", "print a shell completion script"});
        }
        std::erase_if(c.candidates,
                      [&cur](const Candidate& x) { return x.value.rfind(cur, 0) != 0; });
    } else if (words.front() == "completion" && words.size() == 2) {
        for (auto shell : completion_shells()) {
            if (shell.substr(0, words[1].size()) == words[1]) {
                c.candidates.push_back({std::string(shell), ""});
            }
        }
    } else if (known_verb(words.front()) && executable(dir + "/kubectl-ichor-" + words.front())) {
        d.program = dir + "/kubectl-ichor-" + words.front();
        d.args = {d.program, args[1]};
        d.args.insert(d.args.end(), words.begin() + 1, words.end());
        return d;
    }
    d.text = format_completion(c, descriptions);
    return d;
}
} // namespace

Result<Dispatch> resolve_dispatch(const std::vector<std::string>& args, const std::string& dir,
                                  bool (*executable)(const std::string& path)) {
    Dispatch d;
    if (is_completion_request(args)) {
        return dispatch_completion(args, dir, executable);
    }
    if (args.size() >= 2 && args[1] == "completion") {
        std::string shell = args.size() == 3 ? args[2] : "";
        d.text = std::string(completion_script(shell));
        if (d.text.empty()) {
            return make_error(ErrorKind::Usage,
                              args.size() == 3 ? "unknown shell \"" + shell +
                                                     "\"; give bash, zsh, fish or kubectl-shim"
                                               : "give one of bash, zsh, fish or kubectl-shim",
                              "kubectl ichor completion bash", vocab::code::k_usage);
        }
        return d;
    }
    if (args.size() < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
        d.text = verb_list(dir, executable);
        return d;
    }
    if (args[1] == "--version" || args[1] == "version") {
        d.text = "kubectl-ichor " + std::string(util::k_version) + "\n";
        return d;
    }
    const std::string& verb = args[1];
    bool known = known_verb(verb);
    std::string names;
    for (const auto& v : verbs()) {
        names += (names.empty() ? "" : ", ") + std::string(v.name);
    }
    if (!known) {
        return make_error(ErrorKind::Usage,
                          "unknown verb \"" + verb + "\"; the verbs are: " + names,
                          "kubectl ichor --help", vocab::code::k_usage);
    }
    d.program = dir + "/kubectl-ichor-" + verb;
    if (!executable(d.program)) {
        return make_error(ErrorKind::Config, d.program + " is not installed next to kubectl-ichor",
                          "reinstall the plugin: kubectl krew install ichor",
                          vocab::code::k_not_installed);
    }
    d.args.push_back(d.program);
    d.args.insert(d.args.end(), args.begin() + 2, args.end());
    return d;
}

stages::Outcome dispatch_run(const std::vector<std::string>& args, Streams& s) {
    std::string path = util::platform::self_executable();
    if (path.empty() && !args.empty()) {
        path = args.front();
    }
    auto exe = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0; };
    std::vector<std::string> request = args;
    if (is_completion_request(request) && !completion_descriptions(request[1], s.env)) {
        request[1] = "__completeNoDesc"; // so that the verb's binary leaves them out too
    }
    auto d = resolve_dispatch(request, util::dirname(path), exe);
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
