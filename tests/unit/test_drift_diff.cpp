#include "common/drift/diff.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {
Value parse(const std::string& yaml) {
    auto v = doc::parse_one(yaml, "facts");
    REQUIRE(v.ok());
    return *v;
}
} // namespace

TEST_CASE("a changed list is one change, compared whole", "[drift][diff]") {
    auto changes =
        drift::diff(parse("machine: {certSANs: [a, b]}"), parse("machine: {certSANs: [a]}"));
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].dotted == "machine.certSANs");
    CHECK(changes[0].current == Value::array({"a", "b"}));
    CHECK(changes[0].proposed == Value::array({"a"}));
    CHECK(drift::diff(parse("l: [a, b]"), parse("l: [b, a]")).size() == 1); // order is a fact
}

TEST_CASE("mappings compare key by key, a sysctl name is one key", "[drift][diff]") {
    auto changes = drift::diff(parse("machine: {sysctls: {net.core.somaxconn: '65535', a: '1'}}"),
                               parse("machine: {sysctls: {net.core.somaxconn: 65535, b: '2'}}"));
    REQUIRE(changes.size() == 2);
    CHECK(changes[0].path == std::vector<std::string>{"machine", "sysctls", "b"});
    CHECK(changes[0].current.is_null());
    CHECK(changes[1].dotted == "machine.sysctls.a");
    CHECK(changes[1].proposed.is_null());
    CHECK(drift::diff(parse("x: {y: 1}"), parse("x: 1")).size() == 1);
}

TEST_CASE("secrets compare by digest, in the encodings Talos uses", "[drift][diff]") {
    const std::string pem = "-----BEGIN EC PRIVATE KEY-----\nQUJD\n-----END EC PRIVATE KEY-----\n";
    const std::string b64 = util::base64_encode(pem);
    Value rendered = Value{{"cluster", Value{{"ca", Value{{"key", b64}}}, {"secret", "s3cret"}}}};
    Value live_v1 = Value{{"cluster", Value{{"ca", Value{{"key", util::sha256_digest(b64)}}},
                                            {"secret", util::sha256_digest("s3cret")}}}};
    CHECK(drift::diff(live_v1, rendered).empty());
    // v1.14 holds the raw PEM, without its last newline
    Value live_14 = live_v1;
    live_14["cluster"]["ca"]["key"] = util::sha256_digest(pem.substr(0, pem.size() - 1));
    CHECK(drift::diff(live_14, rendered).empty());
    Value other = live_v1;
    other["cluster"]["secret"] = util::sha256_digest("other");
    auto changes = drift::diff(other, rendered);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].secret);
    CHECK(changes[0].proposed == util::sha256_digest("s3cret")); // never the secret itself
}

TEST_CASE("shown values carry no secret", "[drift][diff]") {
    Value v = Value{{"auth", Value{{"username", "u"}, {"password", "p"}}}};
    auto s = drift::shown(v, false);
    // "auth" is a secret key over a structure: every value in it digested
    CHECK(s["auth"]["username"] == util::sha256_digest("u"));
    CHECK(s["auth"]["password"] == util::sha256_digest("p"));
    CHECK(s.dump().find("\"p\"") == std::string::npos);
}
