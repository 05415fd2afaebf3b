// The string helpers (common/util/strings.h): splitting, trimming, base64, digests, durations and
// the kubectl-style table.
#include "common/util/strings.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ichor;
using Strings = std::vector<std::string>;

TEST_CASE("split keeps empty fields, join is its inverse", "[util]") {
    CHECK(util::split("a,,b", ',') == Strings{"a", "", "b"});
    CHECK(util::split("", ',') == Strings{""});
    CHECK(util::split("a,", ',') == Strings{"a", ""});
    CHECK(util::split("abc", ',') == Strings{"abc"});
    CHECK(util::join({"a", "", "b"}, ", ") == "a, , b");
    CHECK(util::join({}, ",").empty());
    CHECK(util::join(util::split("x:y:z", ':'), ":") == "x:y:z");
}

TEST_CASE("trim, prefixes, suffixes and lower case", "[util]") {
    CHECK(util::trim(" \t a b \n") == "a b");
    CHECK(util::trim("   ").empty());
    CHECK(util::starts_with("sha256:ab", "sha256:"));
    CHECK_FALSE(util::starts_with("sha", "sha256:"));
    CHECK(util::ends_with("secrets.yaml", ".yaml"));
    CHECK_FALSE(util::ends_with("yaml", ".yaml"));
    CHECK(util::to_lower("Failed To CONNECT-1") == "failed to connect-1");
}

TEST_CASE("base64 is RFC 4648's standard alphabet, padded", "[util]") {
    // The test vectors of RFC 4648, section 10.
    CHECK(util::base64_encode("").empty());
    CHECK(util::base64_encode("f") == "Zg==");
    CHECK(util::base64_encode("fo") == "Zm8=");
    CHECK(util::base64_encode("foo") == "Zm9v");
    CHECK(util::base64_encode("foob") == "Zm9vYg==");
    CHECK(util::base64_encode("fooba") == "Zm9vYmE=");
    CHECK(util::base64_encode("foobar") == "Zm9vYmFy");
    CHECK(util::base64_encode("\xff\xfe") == "//4=");
    for (const char* s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
        CHECK(util::base64_decode(util::base64_encode(s)) == std::string(s));
    }
}

TEST_CASE("base64 decoding skips white space and refuses anything malformed", "[util]") {
    CHECK(util::base64_decode("Zm9v\nYmFy\n") == std::string("foobar"));
    CHECK(util::base64_decode(" Zm8 = ") == std::string("fo"));
    CHECK(util::base64_decode("Zm9v!") == std::nullopt);  // not in the alphabet
    CHECK(util::base64_decode("Zg==Zg") == std::nullopt); // data after the padding
    CHECK(util::base64_decode("Zg===") == std::nullopt);  // three pad characters
    CHECK(util::base64_decode("Z") == std::nullopt);      // six bits are not a byte
    CHECK(util::base64_decode("Zm9v-_") == std::nullopt); // the URL alphabet is not this one
}

TEST_CASE("hex and SHA-256 digests", "[util]") {
    CHECK(util::hex(std::string("\x00\x0f\xa0\xff", 4)) == "000fa0ff");
    CHECK(util::hex("").empty());
    // FIPS 180-2's test vectors.
    CHECK(util::sha256_digest("") ==
          "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(util::sha256_digest("abc") ==
          "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("Go-style durations parse to milliseconds", "[util]") {
    CHECK(util::parse_duration_ms("20s") == 20000);
    CHECK(util::parse_duration_ms("1m30s") == 90000);
    CHECK(util::parse_duration_ms("500ms") == 500);
    CHECK(util::parse_duration_ms("15m") == 900000);
    CHECK(util::parse_duration_ms("2h") == 7200000);
    CHECK(util::parse_duration_ms("1.5s") == 1500);
    CHECK(util::parse_duration_ms("1h1m1s") == 3661000);
}

TEST_CASE("a malformed duration is nullopt, never an exception", "[util]") {
    for (const char* bad : {"", "10", "s", "5x", "-1s", "1 s", "1.2.3s", ".s", "..s", "1sm"}) {
        INFO(bad);
        CHECK(util::parse_duration_ms(bad) == std::nullopt);
    }
}

TEST_CASE("durations print the way the messages write them", "[util]") {
    CHECK(util::format_duration_ms(0) == "0ms");
    CHECK(util::format_duration_ms(250) == "250ms");
    CHECK(util::format_duration_ms(1500) == "1s");
    CHECK(util::format_duration_ms(20000) == "20s");
    CHECK(util::format_duration_ms(60000) == "1m");
    CHECK(util::format_duration_ms(90000) == "1m30s");
    CHECK(util::format_duration_ms(3661000) == "1h1m1s");
    for (const char* d : {"20s", "1m30s", "250ms", "15m", "1h1m1s"}) {
        CHECK(util::format_duration_ms(*util::parse_duration_ms(d)) == d);
    }
}

TEST_CASE("a table aligns its columns three spaces apart, like kubectl get", "[util]") {
    CHECK(util::format_table({{"NAME", "AGE"}, {"a", "1"}, {"longer-name", "22"}}) ==
          "NAME          AGE\n"
          "a             1\n"
          "longer-name   22\n");
    // No trailing blanks when a last cell is empty or a row is short.
    CHECK(util::format_table({{"A", "B", "C"}, {"x", ""}, {"y", "z", ""}}) == "A   B   C\n"
                                                                              "x\n"
                                                                              "y   z\n");
    CHECK(util::format_table({}).empty());
}
