// The readers' limits (common/doc/limits.h): hostile inputs are refused with a clear message,
// before the input is expanded; legitimate large inputs still pass. A refusal that came only after
// expanding would hang or exhaust memory here and fail by ctest's timeout.
#include "common/doc/limits.h"
#include "common/doc/value.h"
#include "common/doc/yaml_block.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace ichor;
using namespace ichor::doc;

namespace {

// The classic "billion laughs": nine levels, each a list of nine aliases of the level below
// (9^9 = 387,420,489 strings when expanded), in 342 bytes of text.
std::string alias_bomb() {
    std::string s =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
        char p = static_cast<char>(c - 1);
        s += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 9; ++i) {
            s += std::string(i == 0 ? "" : ",") + "*" + p;
        }
        s += "]\n";
    }
    return s;
}

std::string repeat(std::string_view s, size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (size_t i = 0; i < n; ++i) {
        out += s;
    }
    return out;
}

std::string read_data(const std::string& name) {
    std::ifstream in(std::string(ICHOR_SOURCE_DIR) + "/tests/unit/data/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Error refusal(std::string_view text, const Limits& limits = k_limits) {
    auto r = parse_documents(text, "input", limits);
    REQUIRE_FALSE(r);
    return r.error();
}

} // namespace

TEST_CASE("an alias bomb is refused while converting, by go-yaml's rule", "[doc][limits]") {
    std::string bomb = alias_bomb();
    CHECK(bomb.size() == 342);
    Error e = refusal(bomb);
    CHECK(e.kind == ErrorKind::Usage);
    CHECK(e.code == "InputLimit");
    // Refused at the anchored list whose expansion tipped the ratio, some 1400 values in.
    CHECK(e.message == "input:1:4: the document contains excessive aliasing (1387 of the first "
                       "1401 values come through aliases)");
    CHECK(e.hint.find("Limits of the readers") != std::string::npos);
    // parse_one, which the configuration readers use, refuses it the same way.
    auto one = parse_one(bomb, "kubeconfig");
    REQUIRE_FALSE(one);
    CHECK(one.error().code == "InputLimit");
}

TEST_CASE("a few aliases, as people write them, still expand", "[doc][limits]") {
    auto r = parse_one("base: &b {image: x, tag: 1}\nuse: [*b, *b, *b]\n", "input");
    REQUIRE(r);
    CHECK((*r)["use"].size() == 3);
    CHECK((*r)["use"][2]["image"] == "x");
}

TEST_CASE("an alias inside its own anchor is refused, not walked forever", "[doc][limits]") {
    CHECK(refusal("a: &x [*x]\n").message ==
          "input:1:4: an alias refers to a collection that contains it");
    CHECK(refusal("a: &x {b: *x}\n").message ==
          "input:1:4: an alias refers to a collection that contains it");
}

TEST_CASE("nesting deeper than the limit is refused in every reader", "[doc][limits]") {
    const size_t n = 100000;
    SECTION("YAML flow") {
        Error e = refusal("a: " + repeat("[", n) + repeat("]", n) + "\n");
        CHECK(e.code == "InputLimit");
        CHECK(e.message == "input:1:200004: the input nests deeper than 256 levels");
    }
    SECTION("YAML block") {
        Error e = refusal(repeat("- ", n) + "x\n");
        CHECK(e.code == "InputLimit");
        CHECK(e.message == "input:1:1000: the input nests deeper than 256 levels");
    }
    SECTION("JSON") {
        Error e = refusal(repeat("[", n) + repeat("]", n));
        CHECK(e.code == "InputLimit");
        CHECK(e.message == "input:1:257: the input nests deeper than 256 levels");
    }
}

TEST_CASE("nesting up to the limit is read", "[doc][limits]") {
    const size_t d = k_limits.max_depth;
    CHECK(parse_documents(repeat("[", d) + repeat("]", d), "input"));
    CHECK_FALSE(parse_documents(repeat("[", d + 1) + repeat("]", d + 1), "input"));
    // The mapping is a level too.
    CHECK(parse_documents("a: " + repeat("[", d - 1) + repeat("]", d - 1), "input"));
    CHECK_FALSE(parse_documents("a: " + repeat("[", d) + repeat("]", d), "input"));
    CHECK(parse_documents(repeat("- ", d) + "x\n", "input"));
    CHECK_FALSE(parse_documents(repeat("- ", d + 1) + "x\n", "input"));
}

TEST_CASE("an oversized input is refused before it is read", "[doc][limits]") {
    std::string doc = "a: " + std::string(k_limits.max_document_bytes, 'x') + "\n";
    auto one = parse_one(doc, "talosconfig");
    REQUIRE_FALSE(one);
    CHECK(one.error().code == "InputLimit");
    CHECK(one.error().message == "talosconfig: the input is 3145732 bytes, over the limit of "
                                 "3145728 bytes (3 MiB) for one document");
    // The same text is within a stream's limit.
    CHECK(parse_documents(doc, "stream"));
    std::string stream(k_limits.max_stream_bytes + 1, '#');
    Error e = refusal(stream);
    CHECK(e.message ==
          "input: the input is 67108865 bytes, over the limit of 67108864 bytes (64 MiB) for a "
          "stream");
}

TEST_CASE("the value limit holds in every reader", "[doc][limits]") {
    Limits small;
    small.max_nodes = 10;
    std::string block;
    std::string flow = "a: [";
    std::string json = "[";
    for (int i = 0; i < 10; ++i) {
        block += "- " + std::to_string(i) + "\n";
        flow += std::string(i ? "," : "") + std::to_string(i);
        json += std::string(i ? "," : "") + "\"v" + std::to_string(i) + "\"";
    }
    flow += "]\n";
    json += "]";
    // Ten items and their list: eleven values.
    CHECK_FALSE(read_block_yaml(block, small));
    CHECK(refusal(block, small).message == "input: the input has more than 10 values");
    CHECK(refusal(flow, small).message == "input: the input has more than 10 values");
    CHECK(refusal(json, small).message == "input: the input has more than 10 values");
    small.max_nodes = 11;
    CHECK(read_block_yaml(block, small));
    CHECK(parse_documents(block, "input", small));
    CHECK(parse_documents(json, "input", small));
    CHECK(parse_documents(flow, "input", Limits{.max_nodes = 12})); // the mapping too
    // Keys are not values of their own.
    CHECK(parse_documents(R"({"a": 1, "b": 2})", "input", Limits{.max_nodes = 3}));
}

TEST_CASE("the alias rule follows go-yaml's ratio", "[doc][limits]") {
    CHECK(allowed_alias_ratio(1000) == Approx(0.99));
    CHECK(allowed_alias_ratio(400'000) == Approx(0.99));
    CHECK(allowed_alias_ratio(2'200'000) == Approx(0.545));
    CHECK(allowed_alias_ratio(4'000'000) == Approx(0.10));
    CHECK(allowed_alias_ratio(9'000'000) == Approx(0.10));
}

TEST_CASE("a large legitimate stream of Talos configurations is read", "[doc][limits]") {
    std::string config = read_data("talos-config-commented.yaml");
    REQUIRE(config.size() > 1000);
    // As many copies as fit in a stream: a few hundred machines' configurations.
    std::string stream;
    size_t copies = 0;
    while (stream.size() + config.size() + 4 < 8u << 20) {
        stream += "---\n" + config;
        ++copies;
    }
    auto r = parse_documents(stream, "stream");
    REQUIRE(r);
    auto one = parse_documents(config, "config");
    REQUIRE(one);
    CHECK(r->size() == copies * one->size());
    // And through yaml-cpp, as an input the fast reader gives up on (a tag) would go.
    auto slow = parse_documents_yaml_cpp(stream, "stream");
    REQUIRE(slow);
    CHECK(slow->size() == r->size());
}

TEST_CASE("a JSON stream of many small values is read in linear time", "[doc][limits]") {
    // Found by tests/fuzz/fuzz_stream (out of memory): each value copied the rest of the text.
    std::string many = repeat("[] ", 200000);
    auto r = parse_documents(many, "input");
    REQUIRE(r);
    CHECK(r->size() == 200000);
    CHECK(refusal("[1] [2 x").message.starts_with("input:1:8: malformed JSON"));
}
