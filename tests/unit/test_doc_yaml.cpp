#include "common/doc/value.h"

#include <catch2/catch.hpp>

using ichor::doc::Value;
using namespace ichor::doc;

TEST_CASE("plain scalars resolve without changing meaning", "[doc]") {
    CHECK(resolve_plain_scalar("on") == Value("on"));
    CHECK(resolve_plain_scalar("yes") == Value("yes"));
    CHECK(resolve_plain_scalar("0755") == Value("0755"));
    CHECK(resolve_plain_scalar("1e3") == Value("1e3"));
    CHECK(resolve_plain_scalar("0x1f") == Value("0x1f"));
    CHECK(resolve_plain_scalar("123456789012345678901234567890") ==
          Value("123456789012345678901234567890"));
    CHECK(resolve_plain_scalar("18446744073709551615") == Value(18446744073709551615ULL));
    CHECK(resolve_plain_scalar("42") == Value(42));
    CHECK(resolve_plain_scalar("-7") == Value(-7));
    CHECK(resolve_plain_scalar("0.5") == Value(0.5));
    CHECK(resolve_plain_scalar("1.50") == Value("1.50"));
    CHECK(resolve_plain_scalar("true") == Value(true));
    CHECK(resolve_plain_scalar("~").is_null());
}

TEST_CASE("ambiguous strings are quoted on output and read back the same", "[doc]") {
    for (const char* s : {"on", "yes", "0755", "1e3", "0x1f", "", "null", "true", "- x", "a: b",
                          "#c", "123456789012345678901234567890", "y", "1_000", "12:30"}) {
        Value v = Value::object();
        v["k"] = s;
        std::string y = to_yaml(v);
        auto back = parse_one(y, "test");
        REQUIRE(back.ok());
        CHECK((*back)["k"] == Value(s));
    }
}

TEST_CASE("yaml round trip keeps structure, order and multi-line strings", "[doc]") {
    const char* text =
        "b: 1\na:\n  z: [1, 2]\n  y: {}\n  x: []\nlist:\n- name: one\n  v: \"0755\"\n- two\n"
        "blob: |\n  line one\n    indented\n  last\n"
        "keep: |+\n  a\n\n"
        "strip: |-\n  a\n  b\n"
        "lead: \"  starts with spaces\\nsecond\"\n";
    auto v = parse_one(text, "t");
    REQUIRE(v.ok());
    CHECK(v->begin().key() == "b");
    CHECK((*v)["list"][0]["v"] == Value("0755"));
    CHECK((*v)["blob"] == Value("line one\n  indented\nlast\n"));
    std::string y = to_yaml(*v);
    auto again = parse_one(y, "t2");
    REQUIRE(again.ok());
    CHECK(*again == *v);
    CHECK(to_yaml(*again) == y);
}

TEST_CASE("json input and malformed input", "[doc]") {
    auto docs = parse_documents("{\"a\":1} {\"b\":2}", "t");
    REQUIRE(docs.ok());
    CHECK(docs->size() == 2);
    auto bad = parse_documents("a: [1, 2\nb: 3\n", "in.yaml");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().kind == ichor::ErrorKind::Usage);
    CHECK(bad.error().message.rfind("in.yaml:", 0) == 0);
    auto badjson = parse_documents("{\"a\": }", "x.json");
    REQUIRE_FALSE(badjson.ok());
    CHECK(badjson.error().message.find("x.json:1:") == 0);
}

TEST_CASE("bytes that are not UTF-8 are emitted, not thrown", "[doc]") {
    // Found by tests/fuzz/fuzz_stream: a key or string with a stray byte made dump() throw.
    auto docs = parse_documents("a: \"x\\xdd\"\n\"k\\xdd\": 1\n", "input");
    REQUIRE(docs);
    Value v = Value::object();
    v["k: \xdd"] = "v\xdd\x01";
    CHECK(to_yaml(v) == "\"k: \xef\xbf\xbd\": \"v\xef\xbf\xbd\\u0001\"\n");
    CHECK(to_json(v) == "{\n  \"k: \xef\xbf\xbd\": \"v\xef\xbf\xbd\\u0001\"\n}\n");
}

TEST_CASE("a JSON number past double's range is a malformed input, not a crash", "[doc]") {
    // nlohmann throws out_of_range for it, which the JSON reader did not catch.
    auto v = parse_one("{\"a\": 3e3327}", "in.json");
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().kind == ichor::ErrorKind::Usage);
    CHECK(v.error().code == "MalformedInput");
    CHECK(v.error().message.rfind("in.json: malformed JSON: ", 0) == 0);
}
