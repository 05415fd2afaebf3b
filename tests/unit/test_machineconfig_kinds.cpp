// The kinds table: lookups, versions and names. tests/configpatcher/kinds.py holds the table
// against machinery's registries in the Go module cache.
#include "common/machineconfig/kinds.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace ichor;

TEST_CASE("the kinds table is sorted, with no kind twice", "[machineconfig][kinds]") {
    const auto& k = machineconfig::kinds();
    REQUIRE(k.size() > 80);
    CHECK(std::is_sorted(k.begin(), k.end(),
                         [](const auto& a, const auto& b) { return a.kind < b.kind; }));
    CHECK(std::adjacent_find(k.begin(), k.end(), [](const auto& a, const auto& b) {
              return a.kind == b.kind;
          }) == k.end());
}

TEST_CASE("a kind is known from the Talos minor that first loads it", "[machineconfig][kinds]") {
    auto bond = machineconfig::find_kind("BondConfig");
    REQUIRE(bond);
    CHECK(bond->named);
    CHECK(bond->since_minor == 12);
    auto kubelet = machineconfig::find_kind("KubeletConfig");
    REQUIRE(kubelet);
    CHECK_FALSE(kubelet->named);
    CHECK(machineconfig::known_at("KubeletConfig", 14));
    CHECK_FALSE(machineconfig::known_at("KubeletConfig", 13));
    CHECK(machineconfig::known_at("ImageVerificationConfig", 13));
    CHECK_FALSE(machineconfig::known_at("ImageVerificationConfig", 12));
    CHECK(machineconfig::known_at("HostnameConfig", 15));
    CHECK_FALSE(machineconfig::known_at("HostnameConfig", 11));
    CHECK_FALSE(machineconfig::find_kind("FancyConfig"));
    CHECK_FALSE(machineconfig::known_at("FancyConfig", 14));
    CHECK_FALSE(machineconfig::find_kind("v1alpha1"));
}
