// The wall clock (common/util/clock.h): RFC 3339 in UTC, to the second.
#include "common/util/clock.h"

#include <catch2/catch.hpp>

#include <ctime>
#include <regex>
#include <string>

using namespace ichor;

TEST_CASE("now is RFC 3339 in UTC with seconds, and it is now", "[util]") {
    std::time_t before = std::time(nullptr);
    std::string now = util::now_rfc3339();
    std::time_t after = std::time(nullptr);

    CHECK(std::regex_match(now, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
    std::tm tm{};
    REQUIRE(strptime(now.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
    std::time_t read_back = timegm(&tm); // the text is UTC: a local-time reading would be off
    CHECK(read_back >= before);
    CHECK(read_back <= after);
}
