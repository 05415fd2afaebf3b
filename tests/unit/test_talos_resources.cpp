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

TEST_CASE("IP bytes print as Talos prints them", "[talos]") {
    CHECK(format_ip(std::string("\x7f\x00\x00\x35", 4)) == "127.0.0.53");
    CHECK(format_ip(std::string("\xfd\x00\x00\x00\x00\x00\x00\x00"
                                "\x00\x00\x00\x00\x00\x00\x00\x01",
                                16)) == "fd00::1");
    CHECK(format_ip("").empty());
    CHECK(format_ip(std::string("\x7f\x00\x00", 3)).empty());
}

TEST_CASE("discovery members decode in the order listed", "[talos]") {
    spec::DiscoveryMember m;
    m.set_node_id("n1");
    m.set_hostname("home-cp-2");
    m.set_machine_type(::talos::resource::definitions::enums::TYPE_INIT);
    m.add_addresses()->set_ip(std::string("\x7f\x00\x00\x34", 4));
    Resource r;
    r.metadata.set_type(std::string(kind::k_discovery_members.type));
    r.metadata.set_id("home-cp-2");
    r.proto_spec = m.SerializeAsString();
    Resource empty;
    empty.metadata.set_id("other");
    auto got = decode_discovery_members({r, empty});
    REQUIRE(got.ok());
    REQUIRE(got->size() == 2);
    CHECK((*got)[0].id == "home-cp-2");
    CHECK((*got)[0].node_id == "n1");
    CHECK((*got)[0].machine_type == "init");
    CHECK((*got)[0].addresses == std::vector<std::string>{"127.0.0.52"});
    CHECK((*got)[1].id == "other");
    CHECK((*got)[1].machine_type == "unknown");
    CHECK((*got)[1].addresses.empty());

    m.add_addresses()->set_ip("bad");
    r.proto_spec = m.SerializeAsString();
    auto bad = decode_discovery_members({r});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "BadSpec");
    CHECK(bad.error().message == "discovery member home-cp-2 has an address of 3 bytes");
}
