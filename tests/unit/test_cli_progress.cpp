// The terminal's reporter (common/cli/progress.h): status lines on a terminal only, steps and
// warnings always.
#include "common/cli/progress.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

using namespace ichor;

TEST_CASE("status lines are quiet when stderr is not a terminal, steps are not",
          "[cli][progress]") {
    test::TestStreams t({}, {.in = true, .out = true}); // only stderr matters
    cli::StreamReporter p(t.s, "hold");
    p.status("reading 10.0.0.21");
    p.status("reading 10.0.0.22");
    p.end_status();
    CHECK(t.err_text().empty());
    p.step("saved the live configuration of 10.0.0.21");
    CHECK(t.err_text() == "saved the live configuration of 10.0.0.21\n");
    CHECK(t.out_text().empty());
}

TEST_CASE("on a terminal a status line overwrites the last and is cleared", "[cli][progress]") {
    test::TestStreams t({}, {.err = true});
    cli::StreamReporter p(t.s, "hold");
    p.status("waiting for prod-w-2");
    p.status("waiting for prod-w-2 (Ready=False)");
    CHECK(t.err_text() == "\r\033[Kwaiting for prod-w-2\r\033[Kwaiting for prod-w-2 (Ready=False)");
    p.end_status();
    p.end_status(); // nothing open: nothing to clear
    CHECK(t.err_text() ==
          "\r\033[Kwaiting for prod-w-2\r\033[Kwaiting for prod-w-2 (Ready=False)\r\033[K");
}

TEST_CASE("a step clears an open status line first", "[cli][progress]") {
    test::TestStreams t({}, {.err = true});
    cli::StreamReporter p(t.s, "hold");
    p.step("step one");
    p.status("working");
    p.step("step two");
    p.end_status();
    CHECK(t.err_text() == "step one\n\r\033[Kworking\r\033[Kstep two\n");
}
