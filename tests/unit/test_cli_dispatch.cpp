#include "common/cli/dispatch.h"

#include <catch2/catch.hpp>

using namespace ichor;

namespace {
bool only_inspect(const std::string& p) {
    return p == "/opt/bin/kubectl-ichor-inspect";
}
} // namespace

TEST_CASE("the dispatcher runs the sibling binary with the remaining arguments",
          "[cli][dispatch]") {
    auto d = cli::resolve_dispatch({"kubectl-ichor", "inspect", "10.0.0.1", "-o", "table"},
                                   "/opt/bin", only_inspect);
    REQUIRE(d.ok());
    CHECK(d->program == "/opt/bin/kubectl-ichor-inspect");
    CHECK(d->args ==
          std::vector<std::string>{"/opt/bin/kubectl-ichor-inspect", "10.0.0.1", "-o", "table"});
}

TEST_CASE("without a verb the dispatcher lists the verbs and the exit status", "[cli][dispatch]") {
    auto d = cli::resolve_dispatch({"kubectl-ichor"}, "/opt/bin", only_inspect);
    REQUIRE(d.ok());
    CHECK(d->program.empty());
    CHECK(d->text.find("inspect") != std::string::npos);
    CHECK(d->text.find("reclaim") != std::string::npos);
    CHECK(d->text.find("(not installed)") != std::string::npos);
    CHECK(d->text.find("Exit status:") != std::string::npos);
}

TEST_CASE("an unknown verb is a usage error naming the verbs", "[cli][dispatch]") {
    auto d = cli::resolve_dispatch({"kubectl-ichor", "adpot"}, "/opt/bin", only_inspect);
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().kind == ErrorKind::Usage);
    CHECK(d.error().message == "unknown verb \"adpot\"; the verbs are: adopt, inspect, trustcheck, "
                               "drift, hold, reclaim, credentials, discovery");
    auto missing = cli::resolve_dispatch({"kubectl-ichor", "reclaim"}, "/opt/bin", only_inspect);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().kind == ErrorKind::Config);
}
