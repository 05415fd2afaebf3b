// The shape of every tool (common/cli/run.h): run_tool reports an outcome's error once and maps
// the outcome to the exit code; run_parsed turns a parse into help text, a usage error or a run.
#include "common/cli/errors.h"
#include "common/cli/run.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

#include <ostream>
#include <stdexcept>

using namespace ichor;

namespace {

stages::Outcome fails_with_config(const std::vector<std::string>& /*args*/, cli::Streams& s) {
    s.out << "partial output\n";
    stages::Outcome o = stages::failed(make_error(
        ErrorKind::Config, "talosconfig ./tc: no context \"prod\"", "talosctl config contexts"));
    o.done = 1;
    return o;
}

stages::Outcome stops_one(const std::vector<std::string>& /*args*/, cli::Streams& /*s*/) {
    stages::Outcome o;
    o.done = 2;
    o.stopped = 1;
    return o;
}

stages::Outcome throws(const std::vector<std::string>& /*args*/, cli::Streams& /*s*/) {
    throw std::runtime_error("map::at");
}

stages::Outcome echoes(const std::vector<std::string>& args, cli::Streams& s) {
    for (const auto& a : args) {
        s.out << a << "\n";
    }
    return {};
}

struct Opts {
    std::string name;
};

} // namespace

TEST_CASE("run_tool reports an outcome's error exactly once and returns its code", "[cli][run]") {
    test::TestStreams t;
    int rc = cli::run_tool({"kubectl-ichor-inspect"}, t.s, "inspect", fails_with_config);
    CHECK(rc == 3);
    CHECK(t.err_text() == "kubectl ichor inspect: error: talosconfig ./tc: no context \"prod\"\n"
                          "hint: talosctl config contexts\n");
    CHECK(test::count_of(t.err_text(), "kubectl ichor inspect: error:") == 1);
    CHECK(t.out_text() == "partial output\n"); // what run wrote stays
}

TEST_CASE("run_tool turns an outcome without an error into its code, printing nothing",
          "[cli][run]") {
    test::TestStreams t;
    CHECK(cli::run_tool({"kubectl-ichor-hold"}, t.s, "hold", stops_one) == 5);
    CHECK(t.err_text().empty());

    test::TestStreams u;
    CHECK(cli::run_tool({"kubectl-ichor-hold", "a", "b"}, u.s, "hold", echoes) == 0);
    CHECK(u.out_text() == "kubectl-ichor-hold\na\nb\n");
    CHECK(u.err_text().empty());
}

TEST_CASE("an exception that escapes run is an internal error: one report, exit 70", "[cli][run]") {
    test::TestStreams t;
    CHECK(cli::run_tool({"kubectl-ichor-drift"}, t.s, "drift", throws) == 70);
    CHECK(t.err_text() == "kubectl ichor drift: error: internal error: map::at\n"
                          "hint: please report this with the command line\n");
    CHECK(test::count_of(t.err_text(), "kubectl ichor drift: error:") == 1);
}

TEST_CASE("run_parsed prints help text, fails on a usage error, or runs the body", "[cli][run]") {
    int ran = 0;
    auto body = [&ran](const Opts& o, cli::Streams& s) {
        ++ran;
        s.out << "hello " << o.name << "\n";
        stages::Outcome out;
        out.done = 1;
        return out;
    };

    SECTION("help or version text goes to stdout; the body does not run") {
        test::TestStreams t;
        cli::Parsed<Opts> p;
        p.text = "Do a thing.\n\nUsage:\n  kubectl ichor thing\n";
        auto out = cli::run_parsed(Result<cli::Parsed<Opts>>(p), t.s, body);
        CHECK_FALSE(out.error);
        CHECK(cli::exit_code(out) == 0);
        CHECK(t.out_text() == "Do a thing.\n\nUsage:\n  kubectl ichor thing\n");
        CHECK(t.err_text().empty());
        CHECK(ran == 0);
    }
    SECTION("a usage error is the outcome's error, printed by nobody yet") {
        test::TestStreams t;
        auto out = cli::run_parsed(
            Result<cli::Parsed<Opts>>(make_error(ErrorKind::Usage, "no address given", "h")), t.s,
            body);
        REQUIRE(out.error);
        CHECK(out.error->message == "no address given");
        CHECK(cli::exit_code(out) == 2);
        CHECK(t.out_text().empty());
        CHECK(t.err_text().empty());
        CHECK(ran == 0);
    }
    SECTION("options run the body with them") {
        test::TestStreams t;
        cli::Parsed<Opts> p;
        p.options = Opts{"prod"};
        auto out = cli::run_parsed(Result<cli::Parsed<Opts>>(p), t.s, body);
        CHECK(out.done == 1);
        CHECK(t.out_text() == "hello prod\n");
        CHECK(ran == 1);
    }
}

TEST_CASE("the tools limit malloc's arenas unless the user set glibc's own knob", "[cli][run]") {
    CHECK_FALSE(cli::user_sets_malloc_arenas(nullptr, nullptr));
    CHECK_FALSE(cli::user_sets_malloc_arenas(nullptr, "glibc.malloc.tcache_count=64"));
    CHECK(cli::user_sets_malloc_arenas("8", nullptr));
    CHECK(cli::user_sets_malloc_arenas("", nullptr)); // set, even empty: glibc's to read
    CHECK(cli::user_sets_malloc_arenas(nullptr,
                                       "glibc.malloc.tcache_count=64:glibc.malloc.arena_max=4"));
}
