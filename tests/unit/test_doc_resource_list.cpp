// The stream between the tools (common/doc/resource_list.h): what is read as a ResourceList, what
// is refused, and how results are appended.
#include "common/doc/resource_list.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ichor;
using doc::Value;

namespace {

doc::ResourceList read_ok(const std::string& text) {
    auto r = doc::read_resource_list(text, "stdin");
    if (!r.ok()) {
        FAIL(r.error().message);
    }
    return *r;
}

Error read_error(const std::string& text) {
    auto r = doc::read_resource_list(text, "stdin");
    REQUIRE_FALSE(r.ok());
    return r.error();
}

const Value k_machine = Value::parse(R"({"apiVersion": "ichor.maesh.dev/v1alpha1",
    "kind": "TalosMachine", "metadata": {"name": "cp-1", "namespace": "ichor-system",
    "labels": {"a": "b"}}, "spec": {"address": "10.5.0.2"}})");

} // namespace

TEST_CASE("a ResourceList keeps its items and the results before it", "[doc]") {
    auto list = read_ok("apiVersion: config.kubernetes.io/v1\n"
                        "kind: ResourceList\n"
                        "items:\n"
                        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
                        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"
                        "results:\n"
                        "- {severity: warning, message: earlier}\n");
    CHECK(list.items.dump() ==
          R"([{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},)"
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}])");
    CHECK(list.results.dump() == R"([{"severity":"warning","message":"earlier"}])");
    CHECK_FALSE(list.has_errors());
}

TEST_CASE("a ResourceList in JSON reads the same", "[doc]") {
    auto list = read_ok(R"({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
        "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]})");
    REQUIRE(list.items.size() == 1);
    CHECK(list.items[0]["metadata"]["name"] == "a");
    CHECK(list.results.empty());
}

TEST_CASE("a v1 List gives its items, results are a ResourceList's only", "[doc]") {
    auto list = read_ok("apiVersion: v1\n"
                        "kind: List\n"
                        "items:\n"
                        "- {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: n}}\n"
                        "results:\n"
                        "- {severity: error, message: not ours}\n");
    REQUIRE(list.items.size() == 1);
    CHECK(list.items[0]["kind"] == "Secret");
    CHECK(list.results.empty());
    CHECK_FALSE(list.has_errors());
}

TEST_CASE("a list whose items are null is empty", "[doc]") {
    CHECK(read_ok("apiVersion: v1\nkind: List\nitems:\n").items.empty());
    CHECK(read_ok("apiVersion: v1\nkind: List\n").items.empty());
    CHECK(read_ok("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: null\n")
              .items.empty());
}

TEST_CASE("a stream of documents is a list of those items, in order", "[doc]") {
    auto list = read_ok("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                        "---\n"
                        "---\n"
                        "apiVersion: v1\nkind: List\nitems: []\n"
                        "---\n"
                        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    REQUIRE(list.items.size() == 3);
    CHECK(list.items[0]["metadata"]["name"] == "a");
    // In a stream a List is one item like any other: only a lone document is unwrapped.
    CHECK(list.items[1]["kind"] == "List");
    CHECK(list.items[2]["metadata"]["name"] == "c");

    auto one = read_ok("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only}\n");
    REQUIRE(one.items.size() == 1);
    CHECK(one.items[0]["metadata"]["name"] == "only");
}

TEST_CASE("empty input is an empty list", "[doc]") {
    for (const char* empty : {"", "\n", "---\n", "  \n---\n---\n", "# nothing here\n"}) {
        INFO(empty);
        auto list = read_ok(empty);
        CHECK(list.items.empty());
        CHECK(list.results.empty());
    }
}

TEST_CASE("a document that is not an object with apiVersion and kind is a usage error naming the "
          "source and the document",
          "[doc]") {
    for (const char* text : {"hello\n", "[1, 2]\n", "kind: ConfigMap\n", "apiVersion: v1\n"}) {
        INFO(text);
        Error e = read_error(text);
        CHECK(e.kind == ErrorKind::Usage);
        CHECK(e.message ==
              "stdin: document 1 is not a Kubernetes-style object (apiVersion and kind)");
        CHECK(e.hint == "pipe the output of another kubectl ichor tool, or a ResourceList");
        CHECK(e.code == "MalformedInput");
    }

    Error second = read_error("apiVersion: v1\nkind: ConfigMap\n---\n- a\n");
    CHECK(second.message ==
          "stdin: document 2 is not a Kubernetes-style object (apiVersion and kind)");

    Error item = read_error("apiVersion: v1\nkind: List\nitems:\n"
                            "- {apiVersion: v1, kind: ConfigMap}\n- {name: x}\n");
    CHECK(item.message ==
          "stdin: document 2 is not a Kubernetes-style object (apiVersion and kind)");
}

TEST_CASE("items that are not a list are a usage error naming the source and the kind", "[doc]") {
    Error e = read_error("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {}\n");
    CHECK(e.kind == ErrorKind::Usage);
    CHECK(e.message == "stdin: items of the ResourceList is not a list");
    CHECK(e.code == "MalformedInput");
    CHECK(read_error("apiVersion: v1\nkind: List\nitems: text\n").message ==
          "stdin: items of the List is not a list");
}

TEST_CASE("malformed YAML or JSON is a usage error with the source, line and column", "[doc]") {
    Error yaml = read_error("apiVersion: v1\nkind: [ConfigMap\n");
    CHECK(yaml.kind == ErrorKind::Usage);
    CHECK(yaml.code == "MalformedInput");
    CHECK(yaml.message == "stdin:3:1: malformed YAML: end of sequence flow not found");

    Error json = read_error("{\"apiVersion\": \"v1\",\n \"kind\": }\n");
    CHECK(json.kind == ErrorKind::Usage);
    CHECK(json.message == "stdin:2:10: malformed JSON: syntax error while parsing value - "
                          "unexpected '}'; expected '[', '{', or a literal");
}

TEST_CASE("add_result appends a result with its code, its item and its tags", "[doc]") {
    doc::ResourceList list;
    list.add_result(doc::Severity::Warning, "cp-1: drift in class B", "Drift", &k_machine,
                    Value{{"ichor.maesh.dev/class", "B"}, {"field", "machine.install.disk"}});
    list.add_result(doc::Severity::Info, "nothing to do", "");
    REQUIRE(list.results.size() == 2);
    CHECK(list.results[0].dump() ==
          R"({"severity":"warning","message":"cp-1: drift in class B",)"
          R"("resourceRef":{"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosMachine",)"
          R"("name":"cp-1","namespace":"ichor-system"},)"
          R"("field":"machine.install.disk",)"
          R"("tags":{"ichor.maesh.dev/code":"Drift","ichor.maesh.dev/class":"B"}})");
    CHECK(list.results[1].dump() == R"({"severity":"info","message":"nothing to do","tags":{}})");
    CHECK_FALSE(list.has_errors());
}

TEST_CASE("results are appended after those read, never replacing them", "[doc]") {
    auto list = read_ok("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
                        "results:\n- {severity: info, message: first}\n");
    list.add_result(doc::Severity::Error, "second", "Refused");
    REQUIRE(list.results.size() == 2);
    CHECK(list.results[0]["message"] == "first");
    CHECK(list.results[1]["message"] == "second");
}

TEST_CASE("has_errors is true when any result, read or added, is an error", "[doc]") {
    doc::ResourceList list;
    CHECK_FALSE(list.has_errors());
    list.add_result(doc::Severity::Warning, "w", "W");
    list.add_result(doc::Severity::Info, "i", "I");
    CHECK_FALSE(list.has_errors());
    list.add_result(doc::Severity::Error, "e", "E");
    CHECK(list.has_errors());

    CHECK(read_ok("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
                  "results:\n- {severity: error, message: upstream}\n")
              .has_errors());
}

TEST_CASE("to_value is the envelope, results are left out when there are none", "[doc]") {
    doc::ResourceList list;
    CHECK(list.to_value().dump() ==
          R"({"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[]})");
    list.items.push_back(Value{{"apiVersion", "v1"}, {"kind", "ConfigMap"}});
    list.add_result(doc::Severity::Error, "e", "E");
    CHECK(list.to_value().dump() ==
          R"({"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList",)"
          R"("items":[{"apiVersion":"v1","kind":"ConfigMap"}],)"
          R"("results":[{"severity":"error","message":"e","tags":{"ichor.maesh.dev/code":"E"}}]})");
    auto back = read_ok(list.to_value().dump());
    CHECK(back.to_value() == list.to_value());
}

TEST_CASE("ref_of names an item by apiVersion, kind, name and namespace when it has one", "[doc]") {
    CHECK(doc::ref_of(k_machine).dump() ==
          R"({"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosMachine","name":"cp-1",)"
          R"("namespace":"ichor-system"})");
    CHECK(doc::ref_of(Value{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n"}}}})
              .dump() == R"({"apiVersion":"v1","kind":"Node","name":"n"})");
    CHECK(doc::ref_of(Value{{"kind", "Thing"}}).dump() == R"({"apiVersion":"","kind":"Thing"})");
    CHECK(doc::ref_of(Value{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", Value::object()}})
              .dump() == R"({"apiVersion":"v1","kind":"Node","name":""})");
}

TEST_CASE("severities print as the KRM functions spec spells them", "[doc]") {
    CHECK(doc::severity_name(doc::Severity::Error) == "error");
    CHECK(doc::severity_name(doc::Severity::Warning) == "warning");
    CHECK(doc::severity_name(doc::Severity::Info) == "info");
}

TEST_CASE("kind, apiVersion or name of another type is refused, never thrown", "[doc]") {
    // Found by tests/fuzz/fuzz_stream: a list as the kind threw nlohmann's type_error.
    auto r = doc::read_resource_list("apiVersion: v1\nkind:\n- name: c\n", "input");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::Usage);
    CHECK(r.error().message ==
          "input: document 1 is not a Kubernetes-style object (apiVersion and kind)");
    CHECK_FALSE(doc::read_resource_list("apiVersion: [v1]\nkind: X\n", "input"));
    doc::Value item =
        doc::Value::parse(R"({"apiVersion": 1, "kind": {}, "metadata": {"name": 2}})");
    doc::Value ref = doc::ref_of(item);
    CHECK(ref["apiVersion"] == "");
    CHECK(ref["name"] == "");
}
