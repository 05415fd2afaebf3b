// Progress lines (common/cli/progress.h): transient lines on a terminal only, announced lines
// always.
#include "common/cli/progress.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

using namespace ichor;

TEST_CASE("progress is quiet when stderr is not a terminal, announcements are not",
          "[cli][progress]") {
    test::TestStreams t({}, {.in = true, .out = true}); // only stderr matters
    cli::Progress p(t.s);
    p.update("reading 10.0.0.21");
    p.update("reading 10.0.0.22");
    p.done();
    CHECK(t.err_text().empty());
    p.announce("saved the live configuration of 10.0.0.21");
    CHECK(t.err_text() == "saved the live configuration of 10.0.0.21\n");
    CHECK(t.out_text().empty());
}

TEST_CASE("on a terminal a progress line overwrites the last and is cleared", "[cli][progress]") {
    test::TestStreams t({}, {.err = true});
    cli::Progress p(t.s);
    p.update("waiting for prod-w-2");
    p.update("waiting for prod-w-2 (Ready=False)");
    CHECK(t.err_text() == "\r\033[Kwaiting for prod-w-2\r\033[Kwaiting for prod-w-2 (Ready=False)");
    p.done();
    p.done(); // nothing open: nothing to clear
    CHECK(t.err_text() ==
          "\r\033[Kwaiting for prod-w-2\r\033[Kwaiting for prod-w-2 (Ready=False)\r\033[K");
}

TEST_CASE("an announcement clears an open progress line first", "[cli][progress]") {
    test::TestStreams t({}, {.err = true});
    cli::Progress p(t.s);
    p.announce("step one");
    p.update("working");
    p.announce("step two");
    p.done();
    CHECK(t.err_text() == "step one\n\r\033[Kworking\r\033[Kstep two\n");
}
