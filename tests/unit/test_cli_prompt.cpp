// Prompts on the terminal (common/cli/prompt.h): only when stdin and stderr are terminals; one
// line, trimmed.
#include "common/cli/prompt.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

using namespace ichor;

TEST_CASE("a question is asked only when stdin and stderr are terminals", "[cli][prompt]") {
    CHECK(cli::can_prompt(test::TestStreams({}, {.in = true, .err = true}).s));
    CHECK_FALSE(cli::can_prompt(test::TestStreams({}, {.in = true, .out = true}).s));
    CHECK_FALSE(cli::can_prompt(test::TestStreams({}, {.out = true, .err = true}).s));
    CHECK_FALSE(cli::can_prompt(test::TestStreams().s));

    test::TestStreams t("4c4c4544\n", {.in = true, .out = true});
    CHECK_FALSE(cli::prompt_line(t.s, "Type the UUID: "));
    CHECK(t.err_text().empty());
    std::string left;
    std::getline(t.in, left);
    CHECK(left == "4c4c4544"); // stdin was not read
}

TEST_CASE("prompt_line prints the question and reads one trimmed line", "[cli][prompt]") {
    test::TestStreams t("  4c4c4544-0042 \r\nsecond\n", {.in = true, .err = true});
    auto a = cli::prompt_line(t.s, "Type the UUID of 10.0.0.21: ");
    REQUIRE(a);
    CHECK(*a == "4c4c4544-0042");
    auto b = cli::prompt_line(t.s, "Again: ");
    REQUIRE(b);
    CHECK(*b == "second");
    CHECK(t.err_text() == "Type the UUID of 10.0.0.21: Again: ");
    CHECK(t.out_text().empty());
}

TEST_CASE("stdin that ends before a line is no answer", "[cli][prompt]") {
    test::TestStreams t("", {.in = true, .err = true});
    CHECK_FALSE(cli::prompt_line(t.s, "Type yes: "));
    CHECK(t.err_text() == "Type yes: \n"); // the line is ended for the shell prompt
}
