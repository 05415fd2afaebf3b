#include "common/talos/address.h"

#include <catch2/catch.hpp>

using namespace ichor;
using namespace ichor::talos;

TEST_CASE("addresses take talosctl's forms with 50000 as the default port", "[talos]") {
    auto a = parse_address("10.0.0.21");
    REQUIRE(a.ok());
    CHECK(a->host == "10.0.0.21");
    CHECK(a->port == 50000);
    CHECK(a->target() == "10.0.0.21:50000");
    CHECK(a->text == "10.0.0.21");

    auto b = parse_address("node-1.example.com:50001");
    REQUIRE(b.ok());
    CHECK(b->host == "node-1.example.com");
    CHECK(b->port == 50001);

    auto c = parse_address("[fd00::21]:50000");
    REQUIRE(c.ok());
    CHECK(c->host == "fd00::21");
    CHECK(c->target() == "[fd00::21]:50000");

    auto d = parse_address("[fd00::21]");
    REQUIRE(d.ok());
    CHECK(d->port == 50000);

    auto e = parse_address("fd00::21");
    REQUIRE(e.ok());
    CHECK(e->target() == "[fd00::21]:50000");
}

TEST_CASE("bad addresses are usage errors naming the text", "[talos]") {
    auto check = [](const char* text, const char* message) {
        auto r = parse_address(text);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().kind == ErrorKind::Usage);
        CHECK(r.error().message == message);
    };
    check("", "bad address \"\": empty");
    check(":50000", "bad address \":50000\": missing host");
    check("host:", "bad address \"host:\": port \"\" is not a number");
    check("host:abc", "bad address \"host:abc\": port \"abc\" is not a number");
    check("host:70000", "bad address \"host:70000\": port 70000 is out of range");
    check("host:0", "bad address \"host:0\": port 0 is out of range");
    check("[fd00::1", "bad address \"[fd00::1\": missing \"]\"");
    check("[fd00::1]x", "bad address \"[fd00::1]x\": unexpected text after \"]\"");
    check("[host]:1", "bad address \"[host]:1\": brackets must hold an IPv6 address");
    check("https://10.0.0.1:50000",
          "bad address \"https://10.0.0.1:50000\": give a host or host:port, not a URL");
    check("a b", "bad address \"a b\": host \"a b\" has characters a host name cannot have");
    check("fd00::zz", "bad address \"fd00::zz\": not an IPv6 address (write [v6]:port)");
}
