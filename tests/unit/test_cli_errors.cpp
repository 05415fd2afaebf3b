// The error funnel (common/cli/errors.h): error kinds and outcomes to exit codes, and the one way
// an error or a warning is printed.
#include "common/cli/errors.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

using namespace ichor;

namespace {

const std::vector<std::pair<ErrorKind, int>> k_codes{
    {ErrorKind::Findings, 1},    {ErrorKind::Usage, 2},   {ErrorKind::Config, 3},
    {ErrorKind::Unreachable, 4}, {ErrorKind::Partial, 5}, {ErrorKind::Internal, 70},
    {ErrorKind::Io, 74},
};

stages::Outcome counted(int done, int stopped, int unreachable, int skipped = 0) {
    stages::Outcome o;
    o.done = done;
    o.stopped = stopped;
    o.unreachable = unreachable;
    o.skipped = skipped;
    return o;
}

} // namespace

TEST_CASE("every error kind has its exit code", "[cli][errors]") {
    for (const auto& [kind, code] : k_codes) {
        INFO("kind " << static_cast<int>(kind));
        CHECK(cli::exit_code(kind) == code);
    }
}

TEST_CASE("the exit-status table of --help lists every code an error kind maps to",
          "[cli][errors]") {
    const std::string table(cli::exit_status_help());
    CHECK(table.starts_with("Exit status:\n  0   done; nothing blocks\n"));
    for (const auto& [kind, code] : k_codes) {
        std::string row = "\n  " + std::to_string(code) + (code < 10 ? "   " : "  ");
        INFO(row);
        CHECK(test::count_of(table, row) == 1);
    }
    CHECK(table.find("\n  74  writing to standard output or a file failed (an I/O error)\n") !=
          std::string::npos);
}

TEST_CASE("an outcome's exit code follows its category", "[cli][errors]") {
    SECTION("nothing stopped: 0, whatever was done or skipped") {
        CHECK(cli::exit_code(stages::Outcome{}) == 0);
        CHECK(cli::exit_code(counted(3, 0, 0, 2)) == 0);
    }
    SECTION("an error decides, whatever the counts") {
        stages::Outcome o = counted(2, 1, 1);
        o.error = make_error(ErrorKind::Config, "no bundle");
        CHECK(cli::exit_code(o) == 3);
        o.error = make_error(ErrorKind::Io, "write stdout: No space left on device");
        CHECK(cli::exit_code(o) == 74);
        CHECK(cli::exit_code(stages::failed(make_error(ErrorKind::Usage, "bad flag"))) == 2);
    }
    SECTION("some done and some stopped: partial") {
        CHECK(cli::exit_code(counted(1, 1, 0)) == 5);
        CHECK(cli::exit_code(counted(1, 2, 2)) == 5);
    }
    SECTION("none done, every stopped unit unreachable: unreachable") {
        CHECK(cli::exit_code(counted(0, 2, 2)) == 4);
    }
    SECTION("none done, a stopped unit that was reached: findings") {
        CHECK(cli::exit_code(counted(0, 2, 1)) == 1);
        CHECK(cli::exit_code(counted(0, 1, 0, 3)) == 1);
    }
}

TEST_CASE("report_error prints the tool's error line and its hint", "[cli][errors]") {
    SECTION("with a hint, without color") {
        test::TestStreams t;
        cli::report_error(t.s, "hold",
                          make_error(ErrorKind::Usage, "give one action", "kubectl ichor hold -h"));
        CHECK(t.err_text() ==
              "kubectl ichor hold: error: give one action\nhint: kubectl ichor hold -h\n");
        CHECK(t.out_text().empty());
    }
    SECTION("without a hint: no hint line") {
        test::TestStreams t;
        cli::report_error(t.s, "inspect", make_error(ErrorKind::Config, "no talosconfig"));
        CHECK(t.err_text() == "kubectl ichor inspect: error: no talosconfig\n");
    }
    SECTION("with color, only the word is colored") {
        test::TestStreams t({}, {.err = true, .color = true});
        cli::report_error(t.s, "drift", make_error(ErrorKind::Findings, "blocked", "see results"));
        CHECK(t.err_text() ==
              "kubectl ichor drift: \033[31merror\033[0m: blocked\nhint: see results\n");
    }
    SECTION("the dispatcher, without a verb") {
        test::TestStreams t;
        cli::report_error(t.s, "", make_error(ErrorKind::Usage, "unknown verb"));
        CHECK(t.err_text() == "kubectl ichor: error: unknown verb\n");
    }
}

TEST_CASE("report_warning prints the tool's warning line", "[cli][errors]") {
    test::TestStreams plain;
    cli::report_warning(plain.s, "trustcheck", "secrets.yaml is readable by others");
    CHECK(plain.err_text() ==
          "kubectl ichor trustcheck: warning: secrets.yaml is readable by others\n");

    test::TestStreams colored({}, {.err = true, .color = true});
    cli::report_warning(colored.s, "reclaim", "no approved TalosMachine");
    CHECK(colored.err_text() ==
          "kubectl ichor reclaim: \033[33mwarning\033[0m: no approved TalosMachine\n");
    CHECK(colored.out_text().empty());
}
