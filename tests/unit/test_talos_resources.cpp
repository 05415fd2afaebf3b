#include "common/talos/fanout.h"
#include "common/talos/resources.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace ichor;
using namespace ichor::talos;

TEST_CASE("MAC bytes print as talosctl prints them", "[talos]") {
    CHECK(format_mac(std::string("\x52\x54\x00\xab\xcd\x0f", 6)) == "52:54:00:ab:cd:0f");
    CHECK(format_mac("").empty());
}

TEST_CASE("specs decode from proto_spec bytes", "[talos]") {
    spec::LinkStatus link;
    link.set_type(::talos::resource::definitions::enums::LINK_ETHER);
    link.set_hardware_addr(std::string("\x02\x00\x00\x00\x00\x01", 6));
    link.set_permanent_addr(std::string("\x52\x54\x00\x00\x00\x01", 6));
    Resource r;
    r.metadata.set_type(std::string(kind::k_link_statuses.type));
    r.metadata.set_id("eth0");
    r.proto_spec = link.SerializeAsString();
    auto back = decode_spec<spec::LinkStatus>(r);
    REQUIRE(back.ok());
    CHECK(format_mac(back->permanent_addr()) == "52:54:00:00:00:01");
    CHECK(is_physical(*back));
    back->set_kind("bond");
    CHECK_FALSE(is_physical(*back));

    r.proto_spec = "\xff\xff";
    auto bad = decode_spec<spec::SystemInformation>(r);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == "cannot decode the spec of LinkStatuses.net.talos.dev/eth0");
}

TEST_CASE("enum names follow Talos's YAML", "[talos]") {
    CHECK(machine_stage_name(3) == "maintenance");
    CHECK(machine_stage_name(6) == "shutting down");
    CHECK(machine_stage_name(99) == "unknown");
    CHECK(machine_type_name(2) == "controlplane");
    CHECK(volume_phase_name(6) == "ready");
}

TEST_CASE("fan-out keeps input order and bounds concurrency", "[talos]") {
    std::vector<int> inputs(20);
    for (int i = 0; i < 20; ++i) {
        inputs[i] = i;
    }
    std::atomic<int> running{0};
    std::atomic<int> peak{0};
    auto out = fan_out(inputs, 4, [&](int v) {
        int now = ++running;
        int p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(v % 3 == 0 ? 20 : 1));
        --running;
        return v * 10;
    });
    REQUIRE(out.size() == 20);
    for (int i = 0; i < 20; ++i) {
        CHECK(out[i] == i * 10);
    }
    CHECK(peak.load() <= 4);
    CHECK(fan_out(std::vector<int>{}, 4, [](int v) { return v; }).empty());
}

TEST_CASE("one slow input does not hold back the others", "[talos]") {
    std::vector<int> inputs = {0, 1, 2, 3};
    auto start = std::chrono::steady_clock::now();
    std::vector<std::int64_t> finished(4);
    fan_out(inputs, 4, [&](int v) {
        std::this_thread::sleep_for(std::chrono::milliseconds(v == 0 ? 300 : 10));
        finished[v] = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
        return v;
    });
    CHECK(finished[1] < 200);
    CHECK(finished[3] < 200);
    CHECK(finished[0] >= 300);
}
