// COSI resources of the Talos API (reference/talos-api.md §4.3): where each lives, and decoding of
// their typed specs from `proto_spec` with the project's generated messages.
#pragma once

#include "common/doc/vocabulary.h"
#include "common/util/result.h"
#include "resource/config/config.pb.h"
#include "resource/definitions/block/block.pb.h"
#include "resource/definitions/cluster/cluster.pb.h"
#include "resource/definitions/etcd/etcd.pb.h"
#include "resource/definitions/hardware/hardware.pb.h"
#include "resource/definitions/network/network.pb.h"
#include "resource/definitions/runtime/runtime.pb.h"
#include "v1alpha1/resource.pb.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::talos {

// A resource as read: COSI metadata and both encodings of its spec.
struct Resource {
    cosi::resource::Metadata metadata;
    std::string proto_spec; // protoenc bytes: decode with decode_spec
    std::string yaml_spec;  // the spec only, as `talosctl get -o yaml` shows it
};

// Namespace, full type and (for singletons) ID of a resource. Types are sent exactly as written.
struct ResourceRef {
    std::string_view ns;
    std::string_view type;
    std::string_view id; // empty for kinds listed rather than got
};

namespace kind {
inline constexpr ResourceRef k_machine_config{"config", "MachineConfigs.config.talos.dev",
                                              "v1alpha1"};
// The on-disk copy: differs from the running one after an apply in STAGED mode (until the reboot)
// or in TRY mode (until its window ends).
inline constexpr ResourceRef k_persistent_config{"config", "MachineConfigs.config.talos.dev",
                                                 "persistent"};
inline constexpr ResourceRef k_machine_type{"config", "MachineTypes.config.talos.dev",
                                            "machine-type"};
inline constexpr ResourceRef k_cluster_info{"cluster", "Infos.cluster.talos.dev", "current"};
inline constexpr ResourceRef k_identity{"cluster", "Identities.cluster.talos.dev", "local"};
inline constexpr ResourceRef k_system_information{
    "hardware", "SystemInformations.hardware.talos.dev", "systeminformation"};
inline constexpr ResourceRef k_link_statuses{"network", "LinkStatuses.net.talos.dev", ""};
inline constexpr ResourceRef k_disks{"runtime", "Disks.block.talos.dev", ""};
inline constexpr ResourceRef k_system_disk{"runtime", "SystemDisks.block.talos.dev", "system-disk"};
inline constexpr ResourceRef k_discovered_volumes{"runtime", "DiscoveredVolumes.block.talos.dev",
                                                  ""};
inline constexpr ResourceRef k_volume_statuses{"runtime", "VolumeStatuses.block.talos.dev", ""};
inline constexpr ResourceRef k_machine_status{"runtime", "MachineStatuses.runtime.talos.dev",
                                              "machine"};
inline constexpr ResourceRef k_version{"runtime", "Versions.runtime.talos.dev", "version"};
inline constexpr ResourceRef k_etcd_member{"etcd", "EtcdMembers.etcd.talos.dev", "local"};
// Talos discovery: one per member of the node's cluster, ID = the member's Kubernetes node name;
// empty when discovery is off (reference/cni.md §5.1).
inline constexpr ResourceRef k_discovery_members{"cluster", "Members.cluster.talos.dev", ""};
} // namespace kind

// The spec messages, by the name of their resource.
namespace spec {
using MachineConfig = ::resource::config::MachineConfigSpec; // yaml_marshalled: the config bytes
using MachineType = ::resource::config::MachineTypeSpec;
using ClusterInfo = ::talos::resource::definitions::cluster::InfoSpec;
using Identity = ::talos::resource::definitions::cluster::IdentitySpec;
using SystemInformation = ::talos::resource::definitions::hardware::SystemInformationSpec;
using LinkStatus = ::talos::resource::definitions::network::LinkStatusSpec;
using Disk = ::talos::resource::definitions::block::DiskSpec;
using SystemDisk = ::talos::resource::definitions::block::SystemDiskSpec;
using DiscoveredVolume = ::talos::resource::definitions::block::DiscoveredVolumeSpec;
using VolumeStatus = ::talos::resource::definitions::block::VolumeStatusSpec;
using MachineStatus = ::talos::resource::definitions::runtime::MachineStatusSpec;
using Version = ::talos::resource::definitions::runtime::VersionSpec;
using EtcdMember = ::talos::resource::definitions::etcd::MemberSpec;
using DiscoveryMember = ::talos::resource::definitions::cluster::MemberSpec;
} // namespace spec

// Decodes `proto_spec` as Spec. Error (Internal, code "BadSpec") naming type/ID when the bytes do
// not parse; an empty proto_spec decodes to the default message.
template <class Spec> Result<Spec> decode_spec(const Resource& r) {
    Spec s;
    if (!s.ParseFromString(r.proto_spec)) {
        return make_error(ErrorKind::Internal,
                          "cannot decode the spec of " + r.metadata.type() + "/" + r.metadata.id(),
                          {}, vocab::code::k_bad_spec);
    }
    return s;
}

// One discovery member as a node lists it (Members.cluster.talos.dev).
struct DiscoveryMember {
    std::string id;                     // the member's Kubernetes node name
    std::string node_id;                // its node identity, not the cluster ID
    std::string hostname;               // as the member reports it (may be an FQDN)
    std::string machine_type;           // machine_type_name: "controlplane", "worker", ...
    std::vector<std::string> addresses; // format_ip of each, in the member's order
    std::string operating_system;       // "Talos (v1.13.9)"
};

// Decodes listed Members resources, in the order given. Error BadSpec (decode_spec) on the first
// that does not parse; an address of neither 4 nor 16 bytes is an error too (BadSpec).
Result<std::vector<DiscoveryMember>> decode_discovery_members(const std::vector<Resource>& list);

// Raw IP bytes (common.NetIP) as text: dotted IPv4 for 4 bytes, RFC 5952 IPv6 for 16; "" else.
std::string format_ip(std::string_view bytes);

// Raw MAC bytes as "aa:bb:cc:dd:ee:ff" (lower-case hex, any length); "" for none.
std::string format_mac(std::string_view bytes);

// Talos computes "physical" this way: an Ethernet link that is not a virtual kind.
bool is_physical(const spec::LinkStatus& link);

// The YAML names Talos gives the stages ("running", "maintenance", "shutting down", ...).
std::string_view machine_stage_name(int stage);
// "controlplane", "worker", "init" or "unknown".
std::string_view machine_type_name(int machine_type);
// "ready", "waiting", ... as in VolumeStatus YAML.
std::string_view volume_phase_name(int phase);

} // namespace ichor::talos
