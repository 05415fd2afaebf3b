// The flag groups and the prologue of every option parser (common/cli/flags.h): help, version and
// usage errors from parse_tool, and each group's values and refusals.
#include "common/cli/errors.h"
#include "common/cli/flags.h"
#include "common/util/files.h"
#include "common/util/version.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace ichor;

namespace {

const cli::ToolInfo k_info{
    "thing",
    "Do a thing to nodes.",
    "kubectl ichor thing ADDRESS [flags]",
    "A paragraph of details.",
    "  kubectl ichor thing 10.0.0.1",
};

std::vector<std::string> argv(std::vector<std::string> args) {
    args.insert(args.begin(), "kubectl-ichor-thing");
    return args;
}

// Parses `args` with a parser that has every group; `recover` registers the recover flags.
cxxopts::ParseResult parsed(const std::vector<std::string>& args, bool context_is_talos = false,
                            bool recover = true) {
    auto opts = cli::make_options(k_info);
    cli::add_output_flags(opts);
    cli::add_input_flags(opts);
    cli::add_talos_flags(opts, context_is_talos);
    if (!context_is_talos) {
        cli::add_kube_flags(opts, true);
    }
    cli::add_bundle_flags(opts, recover, "default: the Secret");
    opts.add_options()("timeout", "", cxxopts::value<std::string>()->default_value("15m"))(
        "name", "", cxxopts::value<std::vector<std::string>>());
    auto r = cli::parse_args(opts, argv(args));
    REQUIRE(r.ok());
    return *r;
}

struct ThingOptions {
    std::string name;
};

Result<cli::Parsed<ThingOptions>> parse_thing(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_output_flags(opts);
    opts.add_options()("name", "", cxxopts::value<std::vector<std::string>>());
    opts.parse_positional({"name"});
    return cli::parse_tool<ThingOptions>(
        k_info, opts, argv(args), [](const cxxopts::ParseResult& r) -> Result<ThingOptions> {
            auto names = cli::strings_flag(r, "name");
            if (names.size() != 1) {
                return cli::usage_error("give one NAME", "kubectl ichor thing NAME");
            }
            return ThingOptions{names.front()};
        });
}

void check_usage(const Error& e, const std::string& message, const std::string& hint = {}) {
    CHECK(e.kind == ErrorKind::Usage);
    CHECK(e.code == "Usage");
    CHECK(e.message == message);
    CHECK(e.hint == hint);
}

} // namespace

TEST_CASE("parse_tool: --help gives the help text, summary first, exit table last",
          "[cli][flags]") {
    for (const char* flag : {"--help", "-h"}) {
        auto p = parse_thing({flag});
        REQUIRE(p.ok());
        CHECK_FALSE(p->options);
        const std::string& h = p->text;
        CHECK(h.starts_with("Do a thing to nodes.\n\nUsage:\n  kubectl ichor thing ADDRESS "
                            "[flags]\n\nA paragraph of details.\n\nExamples:\n  kubectl ichor "
                            "thing 10.0.0.1\n\nFlags:\n"));
        CHECK(h.ends_with("\n" + std::string(cli::exit_status_help())));
        CHECK(h.find("  -o, --output FORMAT") != std::string::npos);
        CHECK(h.find("--version") != std::string::npos);
        CHECK(h.find("kubectl ichor thing [flags]") == std::string::npos); // cxxopts' own line
    }
}

TEST_CASE("text_block: drops the newline a raw string opens with, and nothing else",
          "[cli][flags]") {
    CHECK(cli::text_block(R"(
first line
  second line
)") == "first line\n  second line\n");
    CHECK(cli::text_block("no newline first\n") == "no newline first\n");
    CHECK(cli::text_block("\n\ntwo") == "\ntwo");
    CHECK(cli::text_block("").empty());
}

TEST_CASE("parse_tool: --version gives the version line", "[cli][flags]") {
    auto p = parse_thing({"--version", "x"});
    REQUIRE(p.ok());
    CHECK_FALSE(p->options);
    CHECK(p->text == "kubectl-ichor-thing " + std::string(util::k_version) + "\n");
    CHECK(cli::version_text(k_info) == p->text);
}

TEST_CASE("parse_tool: usage errors name the flag, fill's error passes through", "[cli][flags]") {
    auto unknown = parse_thing({"--bogus"});
    REQUIRE_FALSE(unknown.ok());
    check_usage(unknown.error(), "Option \u2018bogus\u2019 does not exist", "see --help");

    auto missing = parse_thing({"a", "-o"});
    REQUIRE_FALSE(missing.ok());
    check_usage(missing.error(), "Option \u2018o\u2019 is missing an argument", "see --help");

    auto fill = parse_thing({"a", "b"});
    REQUIRE_FALSE(fill.ok());
    check_usage(fill.error(), "give one NAME", "kubectl ichor thing NAME");
    CHECK(cli::exit_code(fill.error().kind) == 2);

    auto good = parse_thing({"prod"});
    REQUIRE(good.ok());
    REQUIRE(good->options);
    CHECK(good->options->name == "prod");
    CHECK(good->text.empty());
}

TEST_CASE("output flags: yaml by default, an unknown -o lists the allowed values", "[cli][flags]") {
    auto d = cli::to_output_options(parsed({}));
    REQUIRE(d.ok());
    CHECK(d->format == "yaml");
    CHECK(d->jq.empty());

    auto j = cli::to_output_options(parsed({"-o", "table", "--jq", ".items[0]"}));
    REQUIRE(j.ok());
    CHECK(j->format == "table");
    CHECK(j->jq == ".items[0]");

    for (const char* f : {"yaml", "json", "table", "objects"}) {
        CHECK(cli::to_output_options(parsed({"--output", f})).ok());
    }
    auto bad = cli::to_output_options(parsed({"-o", "xml"}));
    REQUIRE_FALSE(bad.ok());
    check_usage(bad.error(), "unknown output format \"xml\"; allowed: yaml, json, table, objects");
}

TEST_CASE("input flags: -f FILE, or stdin", "[cli][flags]") {
    CHECK(cli::to_input_options(parsed({})).file.empty());
    CHECK(cli::to_input_options(parsed({"-f", "plan.yaml"})).file == "plan.yaml");
    CHECK(cli::to_input_options(parsed({"--filename", "-"})).file == "-");
}

TEST_CASE("talos flags: the context flag's name, durations and the concurrency bounds",
          "[cli][flags]") {
    auto d = cli::to_talos_options(parsed({}), false);
    REQUIRE(d.ok());
    CHECK(d->call_timeout_ms == 20000);
    CHECK(d->concurrency == 16);
    CHECK(d->talosconfig.empty());
    CHECK(d->context.empty());

    auto both = cli::to_talos_options(
        parsed({"--talosconfig", "tc", "--talos-context", "lab", "--call-timeout", "1m"}), false);
    REQUIRE(both.ok());
    CHECK(both->talosconfig == "tc");
    CHECK(both->context == "lab");
    CHECK(both->call_timeout_ms == 60000);

    auto only =
        cli::to_talos_options(parsed({"--context", "lab", "--call-timeout", "500ms"}, true), true);
    REQUIRE(only.ok());
    CHECK(only->context == "lab");
    CHECK(only->call_timeout_ms == 500);

    for (const char* text : {"0s", "abc", "-5s"}) {
        auto bad = cli::to_talos_options(parsed({"--call-timeout=" + std::string(text)}), false);
        REQUIRE_FALSE(bad.ok());
        check_usage(bad.error(), "--call-timeout: \"" + std::string(text) +
                                     "\" is not a duration such as 20s, 500ms or 1m");
    }
    for (const char* n : {"1", "1024"}) {
        auto ok = cli::to_talos_options(parsed({"--concurrency", n}), false);
        REQUIRE(ok.ok());
        CHECK(ok->concurrency == std::stoi(n));
    }
    for (const char* n : {"0", "1025", "-1"}) {
        INFO(n);
        auto bad = cli::to_talos_options(parsed({"--concurrency=" + std::string(n)}), false);
        REQUIRE_FALSE(bad.ok());
        check_usage(bad.error(), "--concurrency must be between 1 and 1024");
    }
}

TEST_CASE("kube flags: kubeconfig, context, namespace and cluster", "[cli][flags]") {
    auto k = cli::to_kube_options(
        parsed({"--kubeconfig", "kc", "--context", "admin", "-n", "ops", "--cluster", "prod"}),
        true);
    CHECK(k.kubeconfig == "kc");
    CHECK(k.context == "admin");
    CHECK(k.ns == "ops");
    CHECK(k.cluster == "prod");
    CHECK(k.offline_ns() == "ops");
    CHECK(cli::to_kube_options(parsed({}), true).offline_ns() == "ichor-system");
}

TEST_CASE("bundle flags: one source at a time, recover with its address", "[cli][flags]") {
    const std::string usage = "kubectl ichor thing --recover-secrets --recover-from ADDRESS";
    SECTION("no flag: the Secret") {
        auto b = cli::to_bundle_options(parsed({}), true, usage);
        REQUIRE(b.ok());
        CHECK(b->from_secret());
    }
    SECTION("a file") {
        auto b = cli::to_bundle_options(parsed({"--secrets-bundle", "s.yaml"}), true, usage);
        REQUIRE(b.ok());
        CHECK(b->file == "s.yaml");
        CHECK_FALSE(b->from_secret());
    }
    SECTION("recovered, with where to write it") {
        auto b = cli::to_bundle_options(parsed({"--recover-secrets", "--recover-from", "10.0.0.11",
                                                "--recover-to", "out.yaml"}),
                                        true, usage);
        REQUIRE(b.ok());
        CHECK(b->recover);
        CHECK(b->recover_from == "10.0.0.11");
        CHECK(b->recover_to == "out.yaml");
        CHECK_FALSE(b->from_secret());
    }
    SECTION("--recover-secrets without --recover-from") {
        auto b = cli::to_bundle_options(parsed({"--recover-secrets"}), true, usage);
        REQUIRE_FALSE(b.ok());
        check_usage(b.error(), "--recover-secrets and --recover-from ADDRESS go together", usage);
    }
    SECTION("--recover-from without --recover-secrets") {
        auto b = cli::to_bundle_options(parsed({"--recover-from", "10.0.0.11"}), true, usage);
        REQUIRE_FALSE(b.ok());
        check_usage(b.error(), "--recover-secrets and --recover-from ADDRESS go together", usage);
    }
    SECTION("both sources") {
        auto b = cli::to_bundle_options(parsed({"--secrets-bundle", "s.yaml", "--recover-secrets",
                                                "--recover-from", "10.0.0.11"}),
                                        true, usage);
        REQUIRE_FALSE(b.ok());
        check_usage(b.error(), "give --secrets-bundle or --recover-secrets, not both");
    }
    SECTION("a tool without recover reads only --secrets-bundle") {
        auto b =
            cli::to_bundle_options(parsed({"--secrets-bundle", "s.yaml"}, false, false), false, "");
        REQUIRE(b.ok());
        CHECK(b->file == "s.yaml");
        CHECK_FALSE(b->recover);
    }
}

TEST_CASE("string, strings and duration flags", "[cli][flags]") {
    auto r = parsed({"--name", "a", "--name", "b", "--timeout", "90s", "--talosconfig", "tc"});
    CHECK(cli::string_flag(r, "talosconfig") == "tc");
    CHECK(cli::string_flag(r, "kubeconfig").empty());
    CHECK(cli::strings_flag(r, "name") == std::vector<std::string>{"a", "b"});
    CHECK(cli::strings_flag(parsed({}), "name").empty());

    auto d = cli::duration_flag(r, "timeout", "15m or 90s");
    REQUIRE(d.ok());
    CHECK(*d == 90000);
    auto def = cli::duration_flag(parsed({}), "timeout", "15m or 90s");
    REQUIRE(def.ok());
    CHECK(*def == 15 * 60 * 1000);
    auto bad = cli::duration_flag(parsed({"--timeout", "soon"}), "timeout", "15m or 90s");
    REQUIRE_FALSE(bad.ok());
    check_usage(bad.error(), "--timeout: \"soon\" is not a duration such as 15m or 90s");
    auto zero = cli::duration_flag(parsed({"--timeout", "0s"}), "timeout", "15m or 90s");
    REQUIRE_FALSE(zero.ok());
    check_usage(zero.error(), "--timeout: \"0s\" is not a duration such as 15m or 90s");
}

TEST_CASE("kube flags: Ichor's objects are in ichor-system whatever namespace the context sets",
          "[cli][flags]") {
    // ADR 0128 amendment finding 3: a kubeconfig whose context says `namespace: default` does not
    // move the suite's objects; only -n does.
    char dir[] = "/tmp/ichor-ns-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    const std::string kc = std::string(dir) + "/kubeconfig";
    REQUIRE(util::write_file_atomic(kc,
                                    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                                    "clusters:\n- name: k\n  cluster: {server: "
                                    "https://127.0.0.1:1}\n"
                                    "users:\n- name: u\n  user: {token: t}\n"
                                    "contexts:\n- name: c\n  context: {cluster: k, user: u, "
                                    "namespace: default}\n",
                                    0600));
    test::TestStreams ts;
    auto k = cli::to_kube_options(parsed({"--kubeconfig", kc}), true);
    auto client = k.connect(ts.s, "adopt");
    REQUIRE(client.ok());
    CHECK((*client)->ns() == "ichor-system");
    auto ops = cli::to_kube_options(parsed({"--kubeconfig", kc, "-n", "ops"}), true);
    auto with_n = ops.connect(ts.s, "adopt");
    REQUIRE(with_n.ok());
    CHECK((*with_n)->ns() == "ops");
    std::remove(kc.c_str());
    ::rmdir(dir);
}
