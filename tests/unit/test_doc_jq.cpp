// --jq through libjq (common/doc/jq.h): outputs as values, printed like `jq -r`, and jq's own
// messages in the errors. Needs libjq1 installed (scripts/setup installs it).
#include "common/doc/jq.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ichor;
using doc::Value;

namespace {

const Value k_list = Value::parse(R"({"apiVersion": "config.kubernetes.io/v1",
    "kind": "ResourceList", "items": [
      {"kind": "Inspection", "metadata": {"name": "10.5.0.2"}, "status": {"mode": "configured"}},
      {"kind": "Inspection", "metadata": {"name": "10.5.0.3"}, "status": {"mode": "maintenance"}}
    ]})");

std::vector<Value> jq_ok(const std::string& expr, const Value& input = k_list) {
    auto r = doc::run_jq(expr, input);
    if (!r.ok()) {
        FAIL(r.error().message);
    }
    return *r;
}

Error jq_error(const std::string& expr, const Value& input = k_list) {
    auto r = doc::run_jq(expr, input);
    REQUIRE_FALSE(r.ok());
    return r.error();
}

} // namespace

TEST_CASE("a filter gives each output as a value, in order", "[doc]") {
    auto names = jq_ok(".items[].metadata.name");
    CHECK(names == std::vector<Value>{"10.5.0.2", "10.5.0.3"});

    auto objects = jq_ok(R"(.items[] | {name: .metadata.name, mode: .status.mode})");
    REQUIRE(objects.size() == 2);
    CHECK(objects[1].dump() == R"({"name":"10.5.0.3","mode":"maintenance"})");

    CHECK(jq_ok(".items | length") == std::vector<Value>{2});
    CHECK(jq_ok(".missing") == std::vector<Value>{nullptr});
    CHECK(jq_ok("empty").empty());
    // Object keys keep their input order on the way through libjq.
    CHECK(jq_ok(".items[0]")[0].dump() ==
          R"({"kind":"Inspection","metadata":{"name":"10.5.0.2"},"status":{"mode":"configured"}})");
}

TEST_CASE("strings print raw, anything else as compact JSON, one output a line", "[doc]") {
    CHECK(doc::format_jq_outputs(jq_ok(".items[].metadata.name")) == "10.5.0.2\n10.5.0.3\n");
    CHECK(doc::format_jq_outputs(jq_ok(".items[0].status, (.items | length), true, null")) ==
          "{\"mode\":\"configured\"}\n2\ntrue\nnull\n");
    CHECK(doc::format_jq_outputs({Value("two\nlines"), Value("")}) == "two\nlines\n\n");
    CHECK(doc::format_jq_outputs({}).empty());
}

TEST_CASE("a runtime error is a usage error quoting jq", "[doc]") {
    Error index = jq_error(".[0]");
    CHECK(index.kind == ErrorKind::Usage);
    CHECK(index.message == "--jq: Cannot index object with number");

    Error raised = jq_error(R"(.items[] | error("no " + .metadata.name))");
    CHECK(raised.kind == ErrorKind::Usage);
    CHECK(raised.message == "--jq: no 10.5.0.2"); // the first error stops the run

    CHECK(jq_error(R"(error({"x": 1}))").message == "--jq: error");
}

TEST_CASE("an expression that does not compile is a usage error with jq's reason and a hint",
          "[doc]") {
    Error syntax = jq_error(".[");
    CHECK(syntax.kind == ErrorKind::Usage);
    CHECK(
        syntax.message ==
        "--jq: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1");
    CHECK(syntax.hint == "check the expression, e.g. --jq '.items[].metadata.name'");

    Error undefined = jq_error("foo");
    CHECK(undefined.kind == ErrorKind::Usage);
    CHECK(undefined.message == "--jq: foo/0 is not defined at <top-level>, line 1");
    CHECK(undefined.hint == "check the expression, e.g. --jq '.items[].metadata.name'");

    // Two mistakes, both named, on one line.
    CHECK(jq_error("foo | bar").message == "--jq: foo/0 is not defined at <top-level>, line 1; "
                                           "bar/0 is not defined at <top-level>, line 1");
}
