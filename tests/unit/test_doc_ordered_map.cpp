// The document model's mapping (common/doc/ordered_map.h): nlohmann's ordered_map, grown by
// moving its values. Each case holds for nlohmann's own but the first, which it fails.
#include "common/doc/value.h"

#include <catch2/catch.hpp>

#include <string>

using ichor::doc::Value;

namespace {

const Value::array_t* storage_of(const Value& v) {
    return &v.get_ref<const Value::array_t&>();
}

} // namespace

TEST_CASE("a mapping that grows moves the values it holds, never copies them", "[doc]") {
    Value m = Value::object();
    m["first"] = Value::array({1, 2, 3});
    const Value::array_t* before = storage_of(m["first"]);
    for (int i = 0; i < 100; ++i) { // many growths of the mapping's storage
        m["key-" + std::to_string(i)] = Value::array({i});
    }
    // moved: the same array, not a copy of it (nlohmann::ordered_json gives another address)
    CHECK(storage_of(m["first"]) == before);
    CHECK(m["first"] == Value::array({1, 2, 3}));
    CHECK(m.size() == 101);
}

TEST_CASE("a mapping keeps its keys in insertion order through every way of inserting", "[doc]") {
    Value m = Value::object();
    m["b"] = 1;
    m.emplace("a", 2);
    m[std::string("c")] = 3;
    m.get_ref<Value::object_t&>().insert(Value::object_t::value_type{"d", 4});
    const Value::object_t::value_type e{"e", 5};
    m.get_ref<Value::object_t&>().insert(e);
    Value more = Value::object();
    for (int i = 0; i < 20; ++i) {
        more["m" + std::to_string(i)] = i;
    }
    m.update(more);
    std::string order;
    for (auto it = m.begin(); it != m.end(); ++it) {
        order += it.key() + ",";
    }
    std::string want = "b,a,c,d,e,";
    for (int i = 0; i < 20; ++i) {
        want += "m" + std::to_string(i) + ",";
    }
    CHECK(order == want);
    CHECK(m.dump().substr(0, 26) == R"({"b":1,"a":2,"c":3,"d":4,")");
}

TEST_CASE("a key already in a mapping is found, not replaced, by emplace and insert", "[doc]") {
    Value m = Value::object();
    m["k"] = "first";
    auto [it, fresh] = m.emplace("k", "second");
    CHECK_FALSE(fresh);
    CHECK(it.value() == "first");
    auto& obj = m.get_ref<Value::object_t&>();
    CHECK_FALSE(obj.insert(Value::object_t::value_type{"k", "third"}).second);
    const Value::object_t::value_type kept{"k", "fourth"};
    CHECK_FALSE(obj.insert(kept).second);
    CHECK(m.size() == 1);
    CHECK(m["k"] == "first");
    m["k"] = "assigned"; // operator[] finds it
    CHECK(m.size() == 1);
    CHECK(m["k"] == "assigned");
}

TEST_CASE("a mapping erases, copies and compares as before", "[doc]") {
    Value m = Value::object();
    for (int i = 0; i < 10; ++i) {
        m["k" + std::to_string(i)] = Value{{"n", i}};
    }
    m.erase("k3");
    Value c = m;
    CHECK(c == m);
    CHECK(c.size() == 9);
    CHECK_FALSE(c.contains("k3"));
    CHECK(c.dump() == Value::parse(c.dump()).dump());
    c["k4"]["n"] = 40;
    CHECK(c != m);
    CHECK(m["k4"]["n"] == 4);
}
