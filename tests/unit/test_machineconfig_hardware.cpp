// The disks and links a configuration names against the node's own (common/machineconfig/
// hardware.h): install disks and selectors that match no disk, links that are neither the
// node's nor created by the configuration.
#include "common/doc/value.h"
#include "common/machineconfig/hardware.h"

#include <catch2/catch.hpp>

using namespace ichor;
using machineconfig::Disk;
using machineconfig::HardwareFinding;

namespace {

std::vector<doc::Value> docs(const std::string& yaml) {
    auto parsed = doc::parse_documents(yaml, "test");
    REQUIRE(parsed);
    return *parsed;
}

std::vector<Disk> node_disks() {
    Disk sda;
    sda.dev_path = "/dev/sda";
    sda.size = 100ULL << 30;
    sda.model = "QEMU HARDDISK";
    sda.serial = "QM0001";
    sda.transport = "virtio";
    sda.rotational = true;
    sda.bus_path = "/pci0000:00/0000:00:05.0/virtio2";
    Disk nvme;
    nvme.dev_path = "/dev/nvme0n1";
    nvme.size = 500ULL * 1000 * 1000 * 1000;
    nvme.model = "QEMU NVMe Ctrl";
    nvme.serial = "NV0001";
    nvme.transport = "nvme";
    Disk cd;
    cd.dev_path = "/dev/sr0";
    cd.model = "QEMU DVD-ROM";
    cd.transport = "sata";
    cd.cdrom = true;
    return {sda, nvme, cd};
}

const std::vector<std::string> k_links{"lo", "eth0", "eth1", "eth2", "eth3"};

std::vector<HardwareFinding> check(const std::string& yaml) {
    return machineconfig::check_hardware(docs(yaml), node_disks(), k_links);
}

std::vector<std::string> names(const std::vector<HardwareFinding>& f) {
    std::vector<std::string> out;
    for (const auto& x : f) {
        out.push_back(x.name);
    }
    return out;
}

} // namespace

TEST_CASE("an install disk the node has passes, one it has not is named with the node's disks",
          "[machineconfig][hardware]") {
    CHECK(check("version: v1alpha1\nmachine: {install: {disk: /dev/sda}}\n").empty());
    CHECK(check("version: v1alpha1\nmachine: {install: {disk: /dev/nvme0n1}}\n").empty());
    auto f = check("version: v1alpha1\nmachine: {install: {disk: /dev/vda}}\n");
    REQUIRE(f.size() == 1);
    CHECK(f[0].kind == HardwareFinding::Kind::InstallDisk);
    CHECK(f[0].path == "machine.install.disk");
    CHECK(f[0].message ==
          "machine.install.disk /dev/vda is not a disk of the node (its disks: /dev/sda, "
          "/dev/nvme0n1, /dev/sr0)");
    SECTION("a symlink under /dev/disk is not judged") {
        CHECK(check("version: v1alpha1\nmachine: {install: {disk: /dev/disk/by-id/x}}\n").empty());
    }
    SECTION("no disks read: not judged") {
        CHECK(machineconfig::check_hardware(
                  docs("version: v1alpha1\nmachine: {install: {disk: /dev/vda}}\n"), {}, k_links)
                  .empty());
    }
}

TEST_CASE("a v1alpha1 disk selector matches as Talos's CEL of it does",
          "[machineconfig][hardware]") {
    auto sel = [](const std::string& s) {
        return check("version: v1alpha1\nmachine: {install: {diskSelector: " + s + "}}\n");
    };
    CHECK(sel("{type: nvme}").empty());
    CHECK(sel("{model: 'QEMU*'}").empty());
    CHECK(sel("{model: 'QEMU NVMe*', size: '>= 400GB'}").empty());
    CHECK(sel("{size: 100GiB}").empty());
    CHECK(sel("{serial: QM0001, type: hdd}").empty());
    CHECK(sel("{busPath: '/pci0000:00/*/virtio2'}").empty());
    CHECK(sel("{model: 'Samsung*'}").size() == 1);
    CHECK(sel("{type: sd}").size() == 1);
    CHECK(sel("{size: '>= 1TB'}").size() == 1);
    CHECK(sel("{model: 'QEMU NVMe*', type: hdd}").size() == 1);
    CHECK(sel("{model: 'QEMU DVD*'}").size() == 1);       // a CD-ROM is never selected
    CHECK(sel("{busPath: '/pci0000:00/*'}").size() == 1); // '*' stops at '/', as path.Match
    auto f = sel("{model: 'Samsung*'}");
    REQUIRE(f.size() == 1);
    CHECK(f[0].path == "machine.install.diskSelector");
    CHECK(f[0].message.find("matches no disk of the node (its disks: /dev/sda") !=
          std::string::npos);
    SECTION("what cannot be judged is not") {
        CHECK(sel("{name: sda}").empty());
        CHECK(sel("{size: 'about 4'}").empty());
    }
}

TEST_CASE("a v1.14 CEL match: simple conjunctions judged, the rest not",
          "[machineconfig][hardware]") {
    auto cel = [](const std::string& m) {
        return check("apiVersion: v1alpha1\nkind: UnattendedInstallConfig\nprovisioning:\n  "
                     "diskSelector:\n    match: '" +
                     m + "'\n");
    };
    CHECK(cel(R"(disk.dev_path == "/dev/sda")").empty());
    CHECK(cel(R"(disk.transport == "nvme" && !disk.rotational)").empty());
    CHECK(cel(R"(disk.dev_path == "/dev/vdb")").size() == 1);
    CHECK(cel(R"(disk.transport == "nvme" && disk.rotational)").size() == 1);
    CHECK(cel(R"(disk.size >= 10u * GB)").empty());
    CHECK(cel(R"(glob("QEMU*", disk.model))").empty());
}

TEST_CASE("the parser of Talos's size conditions", "[machineconfig][hardware]") {
    std::string op;
    std::uint64_t b = 0;
    REQUIRE(machineconfig::parse_size_condition("<= 1TB", op, b));
    CHECK(op == "<=");
    CHECK(b == 1000000000000ULL);
    REQUIRE(machineconfig::parse_size_condition(">=100GiB", op, b));
    CHECK(op == ">=");
    CHECK(b == 100ULL << 30);
    REQUIRE(machineconfig::parse_size_condition("4GB", op, b));
    CHECK(op == "==");
    CHECK(b == 4000000000ULL);
    CHECK_FALSE(machineconfig::parse_size_condition("big", op, b));
    CHECK_FALSE(machineconfig::parse_size_condition("4 parsecs", op, b));
}

TEST_CASE("links: the node's and the configuration's own pass, others are named",
          "[machineconfig][hardware]") {
    SECTION("v1alpha1: a bond over links the node has, a VLAN on it, a VIP") {
        CHECK(check(R"(version: v1alpha1
machine:
  network:
    interfaces:
      - interface: bond0
        bond: {mode: active-backup, interfaces: [eth0, eth1]}
        vlans: [{vlanId: 10, vip: {ip: 10.0.0.9}}]
      - interface: eth2
        vip: {ip: 10.0.1.9}
)")
                  .empty());
    }
    SECTION("v1alpha1: a bond member and an interface the node lacks") {
        auto f = check(R"(version: v1alpha1
machine:
  network:
    interfaces:
      - interface: bond0
        bond: {interfaces: [eth0, eth9]}
      - interface: enp7s0
        dhcp: true
      - deviceSelector: {hardwareAddr: "02:*"}
)");
        CHECK(names(f) == std::vector<std::string>{"eth9", "enp7s0"});
        REQUIRE(f.size() == 2);
        CHECK(f[0].kind == HardwareFinding::Kind::Link);
        CHECK(f[0].message ==
              "machine.network.interfaces[0].bond.interfaces names link \"eth9\", which is "
              "neither a link of the node (its links: lo, eth0, eth1, eth2, eth3) nor one the "
              "configuration creates");
        CHECK(f[1].path == "machine.network.interfaces[1].interface");
    }
    SECTION("documents: bonds, VLANs, bridges and aliases the configuration creates count") {
        CHECK(check(R"(apiVersion: v1alpha1
kind: LinkAliasConfig
name: uplink
selector: {match: 'link.permanent_addr == "02:00:00:00:00:01"'}
---
apiVersion: v1alpha1
kind: BondConfig
name: bond0
links: [uplink, eth1]
---
apiVersion: v1alpha1
kind: VLANConfig
name: bond0.10
vlanID: 10
parent: bond0
---
apiVersion: v1alpha1
kind: Layer2VIPConfig
name: 10.0.0.9
link: bond0.10
---
apiVersion: v1alpha1
kind: BridgeConfig
name: br0
links: [eth2]
---
apiVersion: v1alpha1
kind: LinkConfig
name: br0
---
apiVersion: v1alpha1
kind: DHCPv4Config
name: eth3
---
apiVersion: v1alpha1
kind: EthernetConfig
name: eth0
)")
                  .empty());
    }
    SECTION("documents: each kind that names a missing link") {
        auto f = check(R"(apiVersion: v1alpha1
kind: BondConfig
name: bond0
links: [eth0, eth7]
---
apiVersion: v1alpha1
kind: VLANConfig
name: eth8.10
parent: eth8
---
apiVersion: v1alpha1
kind: Layer2VIPConfig
name: 10.0.0.9
link: eth6
---
apiVersion: v1alpha1
kind: LinkConfig
name: eth5
---
apiVersion: v1alpha1
kind: DHCPv6Config
name: eth4
---
apiVersion: v1alpha1
kind: EthernetConfig
name: enp9s0
---
apiVersion: v1alpha1
kind: BridgeConfig
name: br0
links: [eth11]
)");
        CHECK(names(f) ==
              std::vector<std::string>{"eth7", "eth8", "eth6", "eth5", "eth4", "enp9s0", "eth11"});
        REQUIRE(f.size() == 7);
        CHECK(f[0].path == "BondConfig bond0 links");
        CHECK(f[1].path == "VLANConfig eth8.10 parent");
        CHECK(f[2].path == "Layer2VIPConfig 10.0.0.9 link");
    }
    SECTION("no links read: not judged") {
        CHECK(machineconfig::check_hardware(
                  docs("apiVersion: v1alpha1\nkind: LinkConfig\nname: eth9\n"), node_disks(), {})
                  .empty());
    }
}
