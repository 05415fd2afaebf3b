#include "common/cli/complete.h"
#include "common/cli/dispatch.h"
#include "common/cli/flags.h"
#include "common/cli/run.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace ichor;
using ichor::kube::testing::TempDir;

namespace {

const cli::ToolInfo k_info{"demo", "A demo tool.", "kubectl ichor demo ACTION", "", ""};

// A tool's options as the tools build them: the shared groups, a switch, a DIR, and the
// positional words.
cxxopts::Options demo_options(const std::string& positional_help = "apply|release|abort") {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
    opts.add_options("Demo")("yes", "consent without a prompt")(
        "backup-dir", "where to save", cxxopts::value<std::string>(), "DIR")(
        "machine", "only this machine (repeatable)", cxxopts::value<std::vector<std::string>>(),
        "NAME")("add-machine", "a node to add", cxxopts::value<std::vector<std::string>>(),
                "ADDRESS")("action", "", cxxopts::value<std::vector<std::string>>(),
                           positional_help);
    opts.parse_positional({"action"});
    return opts;
}

// inspect's shape: talos flags only, so --context is the talosconfig's.
cxxopts::Options talos_only_options() {
    auto opts = cli::make_options(k_info);
    cli::add_talos_flags(opts, true);
    opts.add_options()("addresses", "", cxxopts::value<std::vector<std::string>>(), "ADDRESS");
    opts.parse_positional({"addresses"});
    return opts;
}

cli::Completion ask(const cxxopts::Options& opts, std::vector<std::string> words,
                    const cli::CompletionSources& src = {}) {
    std::vector<std::string> args{"kubectl-ichor-demo", "__complete"};
    args.insert(args.end(), words.begin(), words.end());
    return cli::complete(cli::completion_request(opts, args), src);
}

std::vector<std::string> values(const cli::Completion& c) {
    std::vector<std::string> out;
    for (const auto& x : c.candidates) {
        out.push_back(x.value);
    }
    return out;
}

// The long flags of a --help text's Flags table.
std::set<std::string> help_flags(const std::string& help) {
    std::set<std::string> out;
    std::string table = help.substr(help.find("\nFlags:"));
    table = table.substr(0, table.find("\nExit status:"));
    std::regex flag(R"((^|[ ,])(--[a-z][a-z0-9-]*))");
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
        line = line.substr(0, line.find("  ", line.find_first_not_of(' ')));
        for (std::sregex_iterator it(line.begin(), line.end(), flag), end; it != end; ++it) {
            out.insert((*it)[2]);
        }
    }
    return out;
}

std::string talosconfig_text() {
    return "context: prod\n"
           "contexts:\n"
           "  prod:\n"
           "    endpoints: [10.0.0.11]\n"
           "    nodes: [10.0.0.21, \"10.0.0.22:50001\"]\n"
           "  staging:\n"
           "    endpoints: [10.1.0.11, 10.1.0.12]\n";
}

} // namespace

TEST_CASE("completion offers every long flag that --help lists, with its description",
          "[cli][complete]") {
    auto opts = demo_options();
    auto want = help_flags(cli::help_text(k_info, opts));
    REQUIRE(want.size() >= 15);
    auto c = ask(opts, {"--"});
    std::set<std::string> got;
    for (const auto& x : c.candidates) {
        got.insert(x.value);
        CHECK_FALSE(x.description.empty());
    }
    CHECK(got == want);
    CHECK(c.directive == cli::k_comp_no_file);
    // The positional option is not a flag.
    CHECK(got.count("--action") == 0);
}

TEST_CASE("completion of flag names: short forms, prefixes, flags already given",
          "[cli][complete]") {
    auto opts = demo_options();
    CHECK(values(ask(opts, {"--ta"})) ==
          std::vector<std::string>{"--talosconfig", "--talos-context"});
    CHECK(values(ask(opts, {"-o"})) == std::vector<std::string>{"-o"});
    auto all = values(ask(opts, {"-"}));
    for (const char* s : {"-h", "-f", "-n", "-o", "--help", "--cluster"}) {
        CHECK(std::find(all.begin(), all.end(), s) != all.end());
    }
    // Given once: not again, unless it repeats.
    auto after = values(ask(opts, {"--cluster", "prod", "--machine", "m1", "--"}));
    CHECK(std::find(after.begin(), after.end(), "--cluster") == after.end());
    CHECK(std::find(after.begin(), after.end(), "--machine") != after.end());
    auto short_given = values(ask(opts, {"-ojson", "--o"}));
    CHECK(short_given.empty());
}

TEST_CASE("completion of values: -o, files, directories, positional words", "[cli][complete]") {
    auto opts = demo_options();
    auto o = ask(opts, {"-o", ""});
    CHECK(values(o) == std::vector<std::string>{"yaml", "json", "table", "objects"});
    CHECK(o.directive == cli::k_comp_no_file);
    CHECK(values(ask(opts, {"--output", "j"})) == std::vector<std::string>{"json"});
    // --flag=VALUE gives the value alone (cobra); -oVALUE the whole word.
    CHECK(values(ask(opts, {"--output=t"})) == std::vector<std::string>{"table"});
    CHECK(values(ask(opts, {"-o=y"})) == std::vector<std::string>{"yaml"});
    CHECK(values(ask(opts, {"-oj"})) == std::vector<std::string>{"-ojson"});

    auto f = ask(opts, {"-f", ""});
    CHECK(f.candidates.empty());
    CHECK(f.directive == cli::k_comp_default);
    CHECK(ask(opts, {"--filename=pl"}).directive == cli::k_comp_default);
    auto d = ask(opts, {"--backup-dir", ""});
    CHECK(d.candidates.empty());
    CHECK(d.directive == cli::k_comp_filter_dirs);
    auto none = ask(opts, {"--call-timeout", ""});
    CHECK(none.candidates.empty());
    CHECK(none.directive == cli::k_comp_no_file);

    auto first = ask(opts, {""});
    CHECK(values(first) == std::vector<std::string>{"apply", "release", "abort"});
    CHECK(first.directive == cli::k_comp_no_file);
    CHECK(values(ask(opts, {"--yes", "re"})) == std::vector<std::string>{"release"});
    CHECK(values(ask(opts, {"-o", "json", "-n", "ns", "a"})) ==
          std::vector<std::string>{"apply", "abort"});
    // Only the first positional argument is an action; after "--" words are positional.
    CHECK(ask(opts, {"apply", ""}).candidates.empty());
    CHECK(values(ask(opts, {"--", "-"})).empty());
    CHECK(values(ask(opts, {"--", ""})) == std::vector<std::string>{"apply", "release", "abort"});
    // --help or --version on the line: nothing more.
    auto help = ask(opts, {"--help", ""});
    CHECK(help.candidates.empty());
    CHECK(help.directive == cli::k_comp_no_file);
}

TEST_CASE("completion of talosconfig contexts and nodes", "[cli][complete]") {
    TempDir t;
    std::string path = t.write("talosconfig", talosconfig_text());
    std::string other =
        t.write("other", "context: lab\ncontexts:\n  lab:\n    endpoints: [127.0.0.9]\n");
    cli::CompletionSources src;
    src.env.vars["TALOSCONFIG"] = path;
    auto opts = demo_options();

    auto ctx = ask(opts, {"--talos-context", ""}, src);
    CHECK(values(ctx) == std::vector<std::string>{"prod", "staging"});
    CHECK(ctx.candidates[0].description == "current context, endpoint 10.0.0.11");
    CHECK(ctx.directive == cli::k_comp_no_file);
    CHECK(values(ask(opts, {"--talosconfig", other, "--talos-context", ""}, src)) ==
          std::vector<std::string>{"lab"});
    // Nodes of the current context, of the chosen one, and endpoints when it names no nodes.
    auto nodes = ask(opts, {"--add-machine", ""}, src);
    CHECK(values(nodes) == std::vector<std::string>{"10.0.0.21", "10.0.0.22:50001"});
    CHECK(nodes.candidates[0].description == "node of prod");
    CHECK(values(ask(opts, {"--talos-context=staging", "--add-machine", "10.1.0.1"}, src)) ==
          std::vector<std::string>{"10.1.0.11", "10.1.0.12"});
    CHECK(values(ask(opts, {"--talosconfig=" + other, "--add-machine", ""}, src)) ==
          std::vector<std::string>{"127.0.0.9"});
    // Without --kubeconfig among the flags, --context is the talosconfig's (inspect).
    auto talos = talos_only_options();
    CHECK(values(ask(talos, {"--context", "st"}, src)) == std::vector<std::string>{"staging"});
    CHECK(values(ask(talos, {"--context", "staging", "10.1"}, src)) ==
          std::vector<std::string>{"10.1.0.11", "10.1.0.12"});
    CHECK(values(ask(talos, {"10.0.0.21", ""}, src)) ==
          std::vector<std::string>{"10.0.0.21", "10.0.0.22:50001"});
    // No talosconfig at all: nothing, and no error.
    cli::CompletionSources none;
    none.env.vars["HOME"] = t.path();
    auto empty = ask(opts, {"--talos-context", ""}, none);
    CHECK(empty.candidates.empty());
    CHECK(empty.directive == cli::k_comp_no_file);
}

TEST_CASE("the cluster flag asks the lister with the kube flags typed on the line",
          "[cli][complete]") {
    auto opts = demo_options();
    cli::KubeOptions seen;
    std::int64_t bound = 0;
    cli::CompletionSources src;
    src.clusters = [&](const cli::KubeOptions& k, std::int64_t ms) {
        seen = k;
        bound = ms;
        return std::vector<cli::Candidate>{{"prod", "TalosCluster in x"}, {"staging", ""}};
    };
    auto c =
        ask(opts, {"--kubeconfig", "/k", "--context=lab", "-n", "fleet", "--cluster", "p"}, src);
    CHECK(values(c) == std::vector<std::string>{"prod"});
    CHECK(c.directive == cli::k_comp_no_file);
    CHECK(seen.kubeconfig == "/k");
    CHECK(seen.context == "lab");
    CHECK(seen.ns == "fleet");
    CHECK(bound == 2500);
    // A CLUSTER argument (credentials NAME) is completed the same way.
    auto creds = demo_options("CLUSTER");
    CHECK(values(ask(creds, {""}, src)) == std::vector<std::string>{"prod", "staging"});
    // Without a lister (a tool without the kube flags): nothing.
    CHECK(ask(opts, {"--cluster", ""}).candidates.empty());
    src.kube_contexts = [](const cli::KubeOptions& k) {
        return std::vector<cli::Candidate>{{"lab", k.kubeconfig}};
    };
    CHECK(values(ask(opts, {"--context", ""}, src)) == std::vector<std::string>{"lab"});
}

TEST_CASE("the kube listers: kubeconfig contexts, and a silent API server within the bound",
          "[cli][complete]") {
    TempDir t;
    // A listener that never answers: the TLS handshake waits until the bound.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    std::string server = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    std::string kc = t.write("kubeconfig", "apiVersion: v1\nkind: Config\n"
                                           "clusters:\n- name: c\n  cluster: {server: \"" +
                                               server +
                                               "\", insecure-skip-tls-verify: true}\n"
                                               "users:\n- name: u\n  user: {token: x}\n"
                                               "contexts:\n- name: silent\n  context: {cluster: "
                                               "c, user: u}\n- name: other\n  context: {cluster: "
                                               "c, user: u}\ncurrent-context: silent\n");
    Environment env;
    env.vars["HOME"] = t.path();
    cli::KubeOptions k;
    k.kubeconfig = kc;
    auto contexts = cli::list_kube_contexts(k, env);
    REQUIRE(contexts.size() == 2);
    CHECK(contexts[0].value == "other");
    CHECK(contexts[1].value == "silent");
    CHECK(contexts[1].description == "current context");

    auto start = std::chrono::steady_clock::now();
    auto clusters = cli::list_clusters(k, env, 400);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    ::close(fd);
    CHECK(clusters.empty());
    CHECK(ms >= 300);
    CHECK(ms < 2000);
    // No kubeconfig at all: nothing, at once.
    cli::KubeOptions missing;
    missing.kubeconfig = t.path() + "/none";
    CHECK(cli::list_clusters(missing, env, 400).empty());
    CHECK(cli::list_kube_contexts(missing, env).empty());
}

TEST_CASE("cobra's output format and the descriptions switch", "[cli][complete]") {
    cli::Completion c{{{"prod", "TalosCluster in ichor-system\nsecond line"}, {"x", ""}},
                      cli::k_comp_no_file};
    CHECK(cli::format_completion(c, true) == "prod\tTalosCluster in ichor-system\nx\n:4\n");
    CHECK(cli::format_completion(c, false) == "prod\nx\n:4\n");
    CHECK(cli::format_completion({}, true) == ":4\n");
    Environment env;
    CHECK(cli::completion_descriptions("__complete", env));
    CHECK_FALSE(cli::completion_descriptions("__completeNoDesc", env));
    env.vars["COBRA_COMPLETION_DESCRIPTIONS"] = "false";
    CHECK_FALSE(cli::completion_descriptions("__complete", env));
    env.vars["KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS"] = "true";
    CHECK(cli::completion_descriptions("__complete", env));
    env.vars["KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS"] = "0";
    CHECK_FALSE(cli::completion_descriptions("__complete", env));
}

TEST_CASE("a tool answers __complete before parsing, and prints nothing else", "[cli][complete]") {
    auto opts = demo_options();
    bool ran = false;
    auto parsed = cli::parse_tool<int>(k_info, opts, {"x", "__complete", "--bogus", "-o", ""},
                                       [&](const cxxopts::ParseResult&) -> Result<int> {
                                           ran = true;
                                           return 1;
                                       });
    REQUIRE(parsed.ok());
    REQUIRE(parsed->completion);
    std::istringstream in;
    std::ostringstream out, err;
    cli::Streams s{in, out, err};
    s.env.vars["KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS"] = "false";
    auto outcome = cli::run_parsed(std::move(parsed), s, [&](int, cli::Streams&) {
        ran = true;
        return stages::Outcome{};
    });
    CHECK_FALSE(outcome.error);
    CHECK_FALSE(ran);
    CHECK(out.str() == "yaml\njson\ntable\nobjects\n:4\n");
    CHECK(err.str().empty());
}

namespace {
bool hold_only(const std::string& p) {
    return p == "/opt/bin/kubectl-ichor-hold";
}
std::string text_of(const std::vector<std::string>& args) {
    auto d = cli::resolve_dispatch(args, "/opt/bin", hold_only);
    REQUIRE(d.ok());
    CHECK(d->program.empty());
    return d->text;
}
} // namespace

TEST_CASE("the dispatcher completes verbs and forwards the rest to the verb's binary",
          "[cli][complete][dispatch]") {
    std::string verbs = text_of({"kubectl-ichor", "__completeNoDesc", ""});
    CHECK(verbs ==
          "adopt\ninspect\ntrustcheck\ndrift\nhold\nreclaim\ncredentials\ndiscovery\ncompletion\n:"
          "4\n");
    CHECK(text_of({"kubectl-ichor", "__complete", "ho"}) ==
          "hold\tapply a plan as held machines, release them after a zero-drift check, or "
          "abort\n:4\n");
    CHECK(text_of({"kubectl-ichor", "__completeNoDesc", "--v"}) == "--version\n:4\n");
    CHECK(text_of({"kubectl-ichor", "__complete", "completion", ""}) ==
          "bash\nzsh\nfish\nkubectl-shim\n:4\n");
    // An unknown verb, or one not installed: nothing.
    CHECK(text_of({"kubectl-ichor", "__complete", "hodl", ""}) == ":4\n");
    CHECK(text_of({"kubectl-ichor", "__complete", "adopt", "--"}) == ":4\n");

    auto d = cli::resolve_dispatch({"kubectl-ichor", "__completeNoDesc", "hold", "-o", ""},
                                   "/opt/bin", hold_only);
    REQUIRE(d.ok());
    CHECK(d->program == "/opt/bin/kubectl-ichor-hold");
    CHECK(d->args ==
          std::vector<std::string>{"/opt/bin/kubectl-ichor-hold", "__completeNoDesc", "-o", ""});
}

TEST_CASE("kubectl-ichor completion prints the scripts, the shim in completions/ is the same",
          "[cli][complete][dispatch]") {
    for (auto shell : cli::completion_shells()) {
        std::string text = text_of({"kubectl-ichor", "completion", std::string(shell)});
        CHECK(text == cli::completion_script(shell));
        CHECK(text.find("kubectl-ichor __complete") != std::string::npos);
    }
    CHECK(text_of({"kubectl-ichor", "completion", "bash"}).find("complete -o default -F") !=
          std::string::npos);
    auto bad =
        cli::resolve_dispatch({"kubectl-ichor", "completion", "tcsh"}, "/opt/bin", hold_only);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().kind == ErrorKind::Usage);
    CHECK(bad.error().message == "unknown shell \"tcsh\"; give bash, zsh, fish or kubectl-shim");
    REQUIRE_FALSE(
        cli::resolve_dispatch({"kubectl-ichor", "completion"}, "/opt/bin", hold_only).ok());

    std::ifstream f(std::string(ICHOR_SOURCE_DIR) + "/completions/kubectl_complete-ichor");
    std::string file((std::istreambuf_iterator<char>(f)), {});
    CHECK(file == cli::completion_script("kubectl-shim"));
}
