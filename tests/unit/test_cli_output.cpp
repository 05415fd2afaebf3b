// Writing a tool's document and reading its input (common/cli/output.h), on string streams.
#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "test_cli_support.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {

doc::ResourceList sample() {
    doc::ResourceList list;
    Value cm = Value::object();
    cm["apiVersion"] = "v1";
    cm["kind"] = "ConfigMap";
    cm["metadata"]["name"] = "cm-1";
    list.items.push_back(cm);
    list.add_result(doc::Severity::Warning, "cm-1: looks odd", "Odd", &cm);
    return list;
}

cli::OutputOptions format(const std::string& f, const std::string& jq = {}) {
    cli::OutputOptions o;
    o.format = f;
    o.jq = jq;
    return o;
}

} // namespace

TEST_CASE("write_list: yaml by default, json with -o json", "[cli][output]") {
    test::TestStreams y;
    REQUIRE(cli::write_list(y.s, format("yaml"), sample(), nullptr).ok());
    CHECK(y.out_text() == "apiVersion: config.kubernetes.io/v1\n"
                          "kind: ResourceList\n"
                          "items:\n"
                          "- apiVersion: v1\n"
                          "  kind: ConfigMap\n"
                          "  metadata:\n"
                          "    name: cm-1\n"
                          "results:\n"
                          "- severity: warning\n"
                          "  message: \"cm-1: looks odd\"\n"
                          "  resourceRef:\n"
                          "    apiVersion: v1\n"
                          "    kind: ConfigMap\n"
                          "    name: cm-1\n"
                          "  tags:\n"
                          "    ichor.maesh.dev/code: Odd\n");
    CHECK(y.err_text().empty());

    test::TestStreams j;
    REQUIRE(cli::write_list(j.s, format("json"), sample(), nullptr).ok());
    auto back = doc::parse_one(j.out_text(), "json");
    REQUIRE(back.ok());
    CHECK(*back == sample().to_value());
    CHECK(j.out_text().starts_with("{\n"));
    CHECK(j.out_text().ends_with("}\n"));
}

TEST_CASE("write_list: a table prints the items, then one line per result", "[cli][output]") {
    std::vector<bool> colors;
    cli::TableFn table = [&colors](const doc::ResourceList& l, bool color) {
        colors.push_back(color);
        return "NAME\n" + doc::get_string(l.items[0], "metadata.name") + "\n";
    };

    test::TestStreams plain;
    REQUIRE(cli::write_list(plain.s, format("table"), sample(), table).ok());
    CHECK(plain.out_text() == "NAME\ncm-1\n\nWARNING  Odd  cm-1: looks odd\n");

    // Color only when stdout is a terminal and color is on.
    test::TestStreams err_only({}, {.err = true, .color = true});
    REQUIRE(cli::write_list(err_only.s, format("table"), sample(), table).ok());
    test::TestStreams tty({}, {.out = true, .err = true, .color = true});
    REQUIRE(cli::write_list(tty.s, format("table"), sample(), table).ok());
    CHECK(colors == std::vector<bool>{false, false, true});
    CHECK(tty.out_text() == "NAME\ncm-1\n\n\033[33mWARNING\033[0m  Odd  cm-1: looks odd\n");

    // No results: no results section; no table function: only the results.
    doc::ResourceList quiet = sample();
    quiet.results = Value::array();
    test::TestStreams q;
    REQUIRE(cli::write_list(q.s, format("table"), quiet, table).ok());
    CHECK(q.out_text() == "NAME\ncm-1\n");
    test::TestStreams n;
    REQUIRE(cli::write_list(n.s, format("table"), sample(), nullptr).ok());
    CHECK(n.out_text() == "\nWARNING  Odd  cm-1: looks odd\n");
}

TEST_CASE("write_list: --jq runs over the envelope, strings print raw", "[cli][output]") {
    // libjq is opened with dlopen on the first --jq; the test machine has it (libjq1).
    test::TestStreams t;
    auto st = cli::write_list(t.s, format("table", ".items[].metadata.name, (.results | length)"),
                              sample(), nullptr);
    REQUIRE(st.ok());
    CHECK(t.out_text() == "cm-1\n1\n");

    test::TestStreams obj;
    REQUIRE(cli::write_list(obj.s, format("yaml", ".results[0].tags"), sample(), nullptr).ok());
    CHECK(obj.out_text() == "{\"ichor.maesh.dev/code\":\"Odd\"}\n");

    test::TestStreams bad;
    auto e = cli::write_list(bad.s, format("yaml", ".items[] |"), sample(), nullptr);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().kind == ErrorKind::Usage);
    CHECK(e.error().message.find("jq") != std::string::npos);
    CHECK(bad.out_text().empty());
}

TEST_CASE("format_results: severity, code and message per line", "[cli][output]") {
    doc::ResourceList list;
    list.add_result(doc::Severity::Error, "10.0.0.2: another cluster", "OtherCluster");
    list.add_result(doc::Severity::Info, "plan: 1 machine", "");
    list.results.push_back(Value{{"message", "no severity"}});
    CHECK(cli::format_results(list, false) == "ERROR  OtherCluster  10.0.0.2: another cluster\n"
                                              "INFO  plan: 1 machine\n"
                                              "INFO  no severity\n");
    CHECK(cli::format_results(list, true) ==
          "\033[31mERROR\033[0m  OtherCluster  10.0.0.2: another cluster\n"
          "\033[36mINFO\033[0m  plan: 1 machine\n"
          "\033[36mINFO\033[0m  no severity\n");
    CHECK(cli::format_results(doc::ResourceList{}, false).empty());
}

TEST_CASE("read_input refuses to wait on a terminal", "[cli][output]") {
    test::TestStreams t("kind: ignored\n", {.in = true});
    auto r = cli::read_input(t.s, {}, "inspect", "Inspections");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::Usage);
    CHECK(r.error().code == "Usage");
    CHECK(r.error().message == "no input: standard input is a terminal");
    CHECK(r.error().hint ==
          "pipe Inspections in, or give -f FILE; see kubectl ichor inspect --help");
    CHECK(t.err_text().empty());

    // "-f -" is asked for explicitly: stdin is read even from a terminal.
    test::TestStreams dash("apiVersion: v1\nkind: ConfigMap\n", {.in = true});
    cli::InputOptions in;
    in.file = "-";
    auto d = cli::read_input(dash.s, in, "inspect", "Inspections");
    REQUIRE(d.ok());
    CHECK(d->items.size() == 1);
}

TEST_CASE("read_input reads stdin or -f FILE, errors name the source", "[cli][output]") {
    test::TestStreams piped("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: Secret\n");
    auto r = cli::read_input(piped.s, {}, "drift", "a plan");
    REQUIRE(r.ok());
    REQUIRE(r->items.size() == 2);
    CHECK(r->items[1]["kind"] == "Secret");

    test::TestStreams scalar("just words\n");
    auto s = cli::read_input(scalar.s, {}, "drift", "a plan");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().kind == ErrorKind::Usage);
    CHECK(s.error().message.starts_with("<stdin>: "));

    kube::testing::TempDir dir;
    cli::InputOptions in;
    in.file = dir.write("plan.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    test::TestStreams tty({}, {.in = true});
    auto f = cli::read_input(tty.s, in, "hold", "a plan");
    REQUIRE(f.ok());
    CHECK(f->items.size() == 1);

    in.file = dir.path() + "/missing.yaml";
    auto m = cli::read_input(tty.s, in, "hold", "a plan");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().kind == ErrorKind::Usage); // a wrong -f is a usage error, exit 2
    CHECK(m.error().message.find("missing.yaml") != std::string::npos);
}

namespace {

// A list with an error and a warning of stage `mine` (which ran here) and of stage `earlier`
// (which ran in an earlier tool of the pipe), and an info result.
doc::ResourceList findings() {
    doc::ResourceList list;
    auto add = [&list](doc::Severity sev, const std::string& msg, const std::string& stage) {
        Value tags = Value::object();
        tags[std::string(vocab::k_tag_stage)] = stage;
        list.add_result(sev, msg, "Code", nullptr, tags);
    };
    add(doc::Severity::Error, "10.0.0.1: refused\nsecond line", "mine");
    add(doc::Severity::Warning, "10.0.0.2: replaced", "mine");
    add(doc::Severity::Info, "plan: 1 machine", "mine");
    add(doc::Severity::Error, "10.0.0.9: did not answer", "earlier");
    list.stages_run = {"mine"};
    return list;
}

} // namespace

TEST_CASE("write_list: with stdout not a terminal, this process's findings go to stderr too",
          "[cli][output]") {
    for (const std::string f : {"yaml", "json", "table"}) {
        test::TestStreams t;
        t.s.verb = "adopt";
        REQUIRE(cli::write_list(t.s, format(f), findings(), nullptr).ok());
        CHECK(t.err_text() == "kubectl ichor adopt: error: 10.0.0.1: refused second line\n"
                              "kubectl ichor adopt: warning: 10.0.0.2: replaced\n");
    }
    SECTION("the moving overload says the same") {
        test::TestStreams t;
        t.s.verb = "adopt";
        doc::ResourceList list = findings();
        REQUIRE(cli::write_list(t.s, format("yaml"), std::move(list), nullptr).ok());
        CHECK(test::count_of(t.err_text(), "error: 10.0.0.1: refused") == 1);
        CHECK(test::count_of(t.err_text(), "10.0.0.9") == 0);
    }
    SECTION("-q: the errors only") {
        test::TestStreams t;
        t.s.verb = "adopt";
        t.s.quiet = true;
        REQUIRE(cli::write_list(t.s, format("yaml"), findings(), nullptr).ok());
        CHECK(t.err_text() == "kubectl ichor adopt: error: 10.0.0.1: refused second line\n");
    }
    SECTION("on a terminal nothing more: the output shows them") {
        test::TestStreams t("", test::Terminal{false, true, true, false});
        t.s.verb = "adopt";
        REQUIRE(cli::write_list(t.s, format("table"), findings(), nullptr).ok());
        CHECK(t.err_text().empty());
    }
    SECTION("no stage ran here (a tool that only passes results on): nothing") {
        test::TestStreams t;
        doc::ResourceList list = findings();
        list.stages_run.clear();
        REQUIRE(cli::write_list(t.s, format("yaml"), list, nullptr).ok());
        CHECK(t.err_text().empty());
    }
}

TEST_CASE("report_warning: nothing under -q; report_error still prints", "[cli][output]") {
    test::TestStreams t;
    t.s.quiet = true;
    cli::report_warning(t.s, "drift", "a warning");
    cli::report_error(t.s, "drift", make_error(ErrorKind::Findings, "an error"));
    CHECK(t.err_text() == "kubectl ichor drift: error: an error\n");
}
