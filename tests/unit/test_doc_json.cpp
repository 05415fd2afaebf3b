// doc::to_json writes exactly what nlohmann's dump(2, ' ', false, replace) writes: every -o json
// output of the suite goes through it.
#include "common/doc/json_stream.h"
#include "common/doc/value.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

using ichor::doc::Value;

namespace {

std::string reference(const Value& v) {
    return v.dump(2, ' ', false, Value::error_handler_t::replace) + "\n";
}

// A random string of bytes drawn from the ones that matter to JSON: plain ASCII, the escaped
// characters, other control characters, DEL, valid UTF-8 of each length and bytes that are not
// UTF-8.
std::string random_string(std::mt19937& rng) {
    static const std::vector<std::string> pieces = {"a",
                                                    "Z",
                                                    "0",
                                                    " ",
                                                    "/",
                                                    "\"",
                                                    "\\",
                                                    "\n",
                                                    "\t",
                                                    "\r",
                                                    "\b",
                                                    "\f",
                                                    "\x01",
                                                    "\x1f",
                                                    "\x7f",
                                                    "\xc3\xa9",
                                                    "\xe2\x82\xac",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xff",
                                                    "\xc3",
                                                    "\xe2\x82",
                                                    "\xed\xa0\x80",
                                                    "key",
                                                    "---",
                                                    "{}",
                                                    "[]"};
    std::uniform_int_distribution<int> len(0, 12);
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::string s;
    for (int n = len(rng); n > 0; --n) {
        s += pieces[pick(rng)];
    }
    return s;
}

Value random_value(std::mt19937& rng, int depth) {
    std::uniform_int_distribution<int> kind(0, depth > 3 ? 5 : 7);
    switch (kind(rng)) {
    case 0:
        return nullptr;
    case 1:
        return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2:
        return std::uniform_int_distribution<std::int64_t>(INT64_MIN, INT64_MAX)(rng);
    case 3:
        return std::uniform_int_distribution<std::uint64_t>(0, UINT64_MAX)(rng);
    case 4:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 5:
        return random_string(rng);
    case 6: {
        Value a = Value::array();
        for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n) {
            a.push_back(random_value(rng, depth + 1));
        }
        return a;
    }
    default: {
        Value o = Value::object();
        for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n) {
            o[random_string(rng)] = random_value(rng, depth + 1);
        }
        return o;
    }
    }
}

} // namespace

TEST_CASE("to_json writes what nlohmann's dump writes, for each kind of value", "[doc][json]") {
    for (const Value& v :
         {Value(nullptr), Value(true), Value(false), Value(0), Value(-7),
          Value(18446744073709551615U), Value(1.5), Value(1e300), Value(""), Value("plain"),
          Value("a \"quoted\" \\ word"), Value("tab\there\nline"), Value("\x01\x1f\x7f"),
          Value("caf\xc3\xa9 \xe2\x82\xac"), Value("bad \xff byte and a cut \xc3"), Value::array(),
          Value::object(),
          Value::parse(R"({"a": [], "b": {}, "c": [1, [2, {"d": null}]], "": "empty key"})")}) {
        CHECK(ichor::doc::to_json(v) == reference(v));
    }
}

TEST_CASE("to_json writes what nlohmann's dump writes, over random documents", "[doc][json]") {
    std::mt19937 rng(20261201);
    for (int i = 0; i < 2000; ++i) {
        Value v = random_value(rng, 0);
        INFO("document " << i);
        REQUIRE(ichor::doc::to_json(v) == reference(v));
    }
}

TEST_CASE("to_json writes what nlohmann's dump writes, for a Talos configuration", "[doc][json]") {
    std::ifstream f(std::string(ICHOR_SOURCE_DIR) + "/tests/unit/data/talos-config-commented.yaml");
    std::stringstream text;
    text << f.rdbuf();
    auto docs = ichor::doc::parse_documents(text.str(), "talos-config-commented.yaml");
    REQUIRE(docs);
    REQUIRE(docs->size() >= 2);
    Value all = Value::array();
    for (auto& d : *docs) {
        all.push_back(d);
    }
    CHECK(ichor::doc::to_json(all) == reference(all));
}

TEST_CASE("to_json finds a character to escape at any place of a long string", "[doc][json]") {
    // The plain-string check reads eight bytes at a time, then the rest one by one: each special
    // byte at each offset of a 40-byte string goes through both.
    for (char special : std::string("\"\\\n\x01\x1f\x7f\x80\xc3\xff", 9)) {
        for (std::size_t at = 0; at < 40; ++at) {
            std::string s(40, 'a');
            s[at] = special;
            Value v(s);
            INFO("byte " << static_cast<int>(static_cast<unsigned char>(special)) << " at " << at);
            REQUIRE(ichor::doc::to_json(v) == reference(v));
        }
    }
    Value plain(std::string(1000, 'x') + " ~!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}");
    CHECK(ichor::doc::to_json(plain) == reference(plain));
}

namespace {

// A stream that keeps what it is sent and counts the writes that reach it.
class CountingBuf final : public std::stringbuf {
  public:
    int writes = 0;

  protected:
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        ++writes;
        return std::stringbuf::xsputn(s, n);
    }
};

} // namespace

TEST_CASE("write_json writes to_json's bytes, a piece at a time", "[doc][json]") {
    std::mt19937 rng(20261203);
    Value big = Value::array();
    for (int i = 0; i < 3000; ++i) {
        big.push_back(random_value(rng, 0));
    }
    Value envelope = {{"apiVersion", "v1"}, {"items", big}, {"results", Value::array()}};
    for (const Value& v : {Value(nullptr), Value("plain"), Value::object(), big, envelope}) {
        CountingBuf buf;
        std::ostream os(&buf);
        ichor::doc::write_json(os, v);
        const std::string want = ichor::doc::to_json(v);
        REQUIRE(buf.str() == want);
        // More than one write once the text passes the piece's size: never all of it at once.
        CHECK((want.size() <= 64 * 1024) == (buf.writes == 1));
    }
}
