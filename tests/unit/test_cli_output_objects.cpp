// -o objects (common/cli/output.cpp, write_list and objects_list; the format list in flags.h).
#include "common/cli/flags.h"
#include "common/cli/output.h"
#include "common/doc/resource_list.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

using namespace ichor;

namespace {

doc::Value parse(const std::string& text) {
    auto v = doc::parse_one(text, "test");
    REQUIRE(v.ok());
    return *v;
}

// A plan as drift leaves it: an Inspection, a TalosMachine and its patch, a foreign object, and
// results of every severity.
doc::ResourceList plan() {
    doc::ResourceList list;
    list.items.push_back(parse("apiVersion: adopt.ichor.maesh.dev/v1alpha1\nkind: Inspection\n"
                               "metadata: {name: 10.0.0.21}\n"));
    list.items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosMachine\n"
                               "metadata:\n  name: w-2\n  namespace: ichor-system\n"
                               "  annotations: {ichor.maesh.dev/hold-apply: \"true\"}\n"
                               "spec: {cluster: prod, role: worker}\n"));
    list.items.push_back(parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n"));
    list.items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosConfigPatch\n"
                               "metadata:\n  name: w-2-adopted\n  namespace: ichor-system\n"
                               "spec: {cluster: prod, layer: machine, machine: w-2}\n"));
    list.add_result(doc::Severity::Error, "10.0.0.22: blocked", "Unrepresentable");
    list.add_result(doc::Severity::Warning, "10.0.0.21: consent needed", "CNI");
    list.add_result(doc::Severity::Warning, "10.0.0.21: consent needed too", "KubeProxy");
    list.add_result(doc::Severity::Error, "10.0.0.23: refused", "NotTrustChecked");
    list.add_result(doc::Severity::Info, "plan: 1 machine to adopt", "Plan");
    return list;
}

struct Run {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    cli::Streams s{in, out, err};
    Run() { s.verb = "drift"; }
};

cli::OutputOptions format(std::string f, std::string jq = {}) {
    cli::OutputOptions o;
    o.format = std::move(f);
    o.jq = std::move(jq);
    return o;
}

} // namespace

TEST_CASE("objects: -o objects is a v1 List of the Ichor API's items alone, in order",
          "[cli][output]") {
    doc::Value v = cli::objects_list(plan());
    CHECK(v["apiVersion"] == "v1");
    CHECK(v["kind"] == "List");
    REQUIRE(v["items"].size() == 2);
    CHECK(v["items"][0]["kind"] == "TalosMachine");
    CHECK(v["items"][1]["kind"] == "TalosConfigPatch");
    // The object is the plan's, untouched: its own annotations stay.
    CHECK(v["items"][0] == plan().items[1]);
    CHECK_FALSE(v.contains("results"));
}

TEST_CASE("objects: -o objects of a list without Ichor objects is an empty List", "[cli][output]") {
    doc::ResourceList list;
    list.items.push_back(parse("apiVersion: adopt.ichor.maesh.dev/v1alpha1\nkind: Inspection\n"
                               "metadata: {name: a}\n"));
    doc::Value v = cli::objects_list(list);
    CHECK(v["items"].is_array());
    CHECK(v["items"].empty());
}

TEST_CASE("objects: -o objects drops an orchestrator's annotations and keeps the object's",
          "[cli][output]") {
    doc::ResourceList list;
    list.items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosMachine\n"
                               "metadata:\n  name: w-2\n  annotations:\n"
                               "    config.kubernetes.io/path: ichor-system/w.yaml\n"
                               "    config.kubernetes.io/index: '0'\n"
                               "    internal.config.kubernetes.io/id: '3'\n"
                               "    config.k8s.io/id: '3'\n"
                               "    ichor.maesh.dev/hold-apply: 'true'\n"));
    list.items.push_back(parse("apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosMachine\n"
                               "metadata:\n  name: w-3\n  annotations:\n"
                               "    config.kubernetes.io/path: ichor-system/w3.yaml\n"));
    doc::Value v = cli::objects_list(list);
    REQUIRE(v["items"].size() == 2);
    CHECK(v["items"][0]["metadata"]["annotations"] ==
          parse("ichor.maesh.dev/hold-apply: 'true'\n"));
    CHECK_FALSE(v["items"][1]["metadata"].contains("annotations"));
}

TEST_CASE("write_list -o objects prints the List as YAML, each error result on stderr",
          "[cli][output]") {
    Run r;
    REQUIRE(cli::write_list(r.s, format("objects"), plan(), nullptr).ok());
    auto printed = doc::parse_documents(r.out.str(), "stdout");
    REQUIRE(printed.ok());
    REQUIRE(printed->size() == 1);
    CHECK(printed->front() == cli::objects_list(plan()));
    CHECK(r.err.str() == "kubectl ichor drift: warning: 10.0.0.22: blocked\n"
                         "kubectl ichor drift: warning: 10.0.0.23: refused\n"
                         "kubectl ichor drift: warning: -o objects leaves out 2 warning result(s); "
                         "-o yaml shows every result\n");
}

TEST_CASE("write_list -o objects says nothing on stderr when only info results are left out",
          "[cli][output]") {
    doc::ResourceList list = plan();
    list.results = doc::Value::array();
    list.add_result(doc::Severity::Info, "plan: 1 machine to adopt", "Plan");
    Run r;
    REQUIRE(cli::write_list(r.s, format("objects"), list, nullptr).ok());
    CHECK(r.err.str().empty());
    CHECK(r.out.str().rfind("apiVersion: v1\nkind: List\nitems:\n", 0) == 0);
}

TEST_CASE("with -o objects, --jq runs over the List", "[cli][output]") {
    Run r;
    REQUIRE(cli::write_list(r.s,
                            format("objects", ".kind, (.items | map(.metadata.name) | "
                                              "join(\",\"))"),
                            plan(), nullptr)
                .ok());
    CHECK(r.out.str() == "List\nw-2,w-2-adopted\n");
    // The results are left out all the same, so they are still reported.
    CHECK(r.err.str().find("10.0.0.22: blocked") != std::string::npos);
    Run yaml;
    REQUIRE(cli::write_list(yaml.s, format("yaml", ".kind"), plan(), nullptr).ok());
    CHECK(yaml.out.str() == "ResourceList\n");
    CHECK(yaml.err.str().empty());
}

TEST_CASE("the other formats keep the envelope and print nothing on stderr", "[cli][output]") {
    for (const char* f : {"yaml", "json"}) {
        Run r;
        REQUIRE(cli::write_list(r.s, format(f), plan(), nullptr).ok());
        auto printed = doc::parse_one(r.out.str(), "stdout");
        REQUIRE(printed.ok());
        CHECK((*printed)["kind"] == "ResourceList");
        CHECK((*printed)["items"].size() == 4);
        CHECK((*printed)["results"].size() == 5);
        CHECK(r.err.str().empty());
    }
}

TEST_CASE("objects: -o objects is one of the output formats, and the refusal lists them all",
          "[cli][output][flags]") {
    CHECK(std::find(cli::k_output_formats.begin(), cli::k_output_formats.end(), "objects") !=
          cli::k_output_formats.end());
    cli::ToolInfo info{"drift", "plan", "kubectl ichor drift", "", ""};
    auto opts = cli::make_options(info);
    cli::add_output_flags(opts);
    auto ok = cli::parse_args(opts, {"kubectl-ichor-drift", "-o", "objects"});
    REQUIRE(ok.ok());
    auto o = cli::to_output_options(*ok);
    REQUIRE(o.ok());
    CHECK(o->format == "objects");

    auto bad = cli::parse_args(opts, {"kubectl-ichor-drift", "-o", "xml"});
    REQUIRE(bad.ok());
    auto refused = cli::to_output_options(*bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().kind == ErrorKind::Usage);
    CHECK(refused.error().message ==
          "unknown output format \"xml\"; allowed: yaml, json, table, objects");
    CHECK(cli::help_text(info, opts).find("output format: yaml, json, table or objects") !=
          std::string::npos);
}
