// Consent before a write (common/cli/consent.h): --yes, a typed "yes" on the terminal, and the
// refusals without a terminal or without the word.
#include "common/cli/consent.h"
#include "test_cli_support.h"

#include <catch2/catch.hpp>

using namespace ichor;

namespace {

const std::string k_what = "create 1 held object(s) in namespace ichor-system";
const std::vector<std::string> k_changes{
    "10.0.0.21: machine.install.image: \"a\" -> \"b\"",
    "10.0.0.21: machine.network.hostname: \"x\" -> \"prod-w-2\"",
};
const std::string k_listed =
    "Adopting replaces these values on the node with the ones Ichor renders (class B):\n"
    "  10.0.0.21: machine.install.image: \"a\" -> \"b\"\n"
    "  10.0.0.21: machine.network.hostname: \"x\" -> \"prod-w-2\"\n";

const test::Terminal k_terminal{.in = true, .err = true};

} // namespace

TEST_CASE("consent with --yes: the changes are listed, nothing is asked", "[cli][consent]") {
    test::TestStreams t("no\n", k_terminal); // a terminal is not asked when --yes is given
    auto st = cli::obtain_consent(t.s, k_what, k_changes, true);
    REQUIRE(st.ok());
    CHECK(t.err_text() == k_listed + "Consent given with --yes: " + k_what + "\n");
    CHECK(t.out_text().empty());

    test::TestStreams none;
    REQUIRE(cli::obtain_consent(none.s, k_what, {}, true).ok());
    CHECK(none.err_text() == "Consent given with --yes: " + k_what + "\n");
}

TEST_CASE("consent without a terminal and without --yes is refused", "[cli][consent]") {
    // stdin a terminal but stderr not (2> log): the question could not be seen.
    for (test::Terminal tty :
         {test::Terminal{}, test::Terminal{.in = true}, test::Terminal{.err = true}}) {
        test::TestStreams t("yes\n", tty);
        auto st = cli::obtain_consent(t.s, k_what, k_changes, false);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().kind == ErrorKind::Findings);
        CHECK(st.error().code == "ConsentNeeded");
        CHECK(st.error().message == "consent needed to " + k_what +
                                        ", and there is no terminal to ask; nothing was written");
        CHECK(st.error().hint == "read the plan, then run again with --yes");
        CHECK(t.err_text() == k_listed); // the changes are shown even so
    }
}

TEST_CASE("consent typed on the terminal: only yes", "[cli][consent]") {
    test::TestStreams yes("  yes \n", k_terminal);
    REQUIRE(cli::obtain_consent(yes.s, k_what, k_changes, false).ok());
    CHECK(yes.err_text() == k_listed + "Type yes to " + k_what + ": ");

    for (const char* answer : {"y\n", "YES\n", "no\n", ""}) {
        INFO("answer: " << answer);
        test::TestStreams t(answer, k_terminal);
        auto st = cli::obtain_consent(t.s, k_what, {}, false);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().kind == ErrorKind::Findings);
        CHECK(st.error().code == "NotConfirmed");
        CHECK(st.error().message == "not confirmed; nothing was written");
    }
}
