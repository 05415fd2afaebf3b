#include "common/inspection/fields.h"

#include <array>

namespace ichor::inspection {

using doc::Value;

std::span<const Path> all_paths() {
    using namespace field;
    static constexpr std::array k_paths{
        k_api_version,
        k_kind,
        k_name,
        k_address,
        k_port,
        k_via_endpoint,
        k_talosconfig_path,
        k_talosconfig_context,
        k_talosconfig_ca_fingerprint,
        k_status,
        k_mode,
        k_access,
        k_tls_outcome,
        k_tls_fingerprint,
        k_talos_version,
        k_identity,
        k_uuid,
        k_serial,
        k_macs,
        k_hostname,
        k_node_id,
        k_machine_stage,
        k_machine_ready,
        k_facts,
        k_cluster_id,
        k_cluster_name,
        k_endpoint,
        k_role,
        k_talos_ca,
        k_accepted_cas,
        k_install_disk,
        k_install_image,
        k_install_wipe,
        k_install_disk_selector,
        k_layout,
        k_documents,
        k_version_contract,
        k_config,
        k_config_digest,
        k_persistent_config,
        k_etcd,
        k_etcd_members,
        k_etcd_member_id,
        k_etcd_leader,
        k_etcd_db_size,
        k_etcd_raft_index,
        k_etcd_problem,
        k_volumes,
        k_disks,
        k_links,
        k_link_names,
        k_timings,
        k_trust,
        k_trust_verdict,
        k_trust_cluster,
        k_trust_cluster_id,
        k_trust_talos_ca,
    };
    return k_paths;
}

const Value* find(const Value& item, Path path) {
    return doc::find_path(item, path.dotted);
}

Value& put(Value& item, Path path) {
    Value* cur = &item;
    std::string_view rest = path.dotted;
    while (true) {
        auto dot = rest.find('.');
        cur = &(*cur)[std::string(rest.substr(0, dot))];
        if (dot == std::string_view::npos) {
            return *cur;
        }
        rest.remove_prefix(dot + 1);
    }
}

void put_facts(Value& item, const machineconfig::Facts& f) {
    using namespace field;
    // The object first: facts read again replace the ones before, in place.
    put(item, k_facts) = Value::object();
    put(item, k_cluster_id) = f.cluster_id;
    put(item, k_cluster_name) = f.cluster_name;
    put(item, k_endpoint) = f.endpoint;
    put(item, k_role) = f.role;
    put(item, k_talos_ca) = f.talos_ca_pem;
    if (!f.accepted_ca_pems.empty()) {
        put(item, k_accepted_cas) = f.accepted_ca_pems;
    }
    put(item, k_install_disk) = f.install.disk;
    put(item, k_install_image) = f.install.image;
    put(item, k_install_wipe) = f.install.wipe;
    if (!f.install.disk_selector.empty()) {
        put(item, k_install_disk_selector) = f.install.disk_selector;
    }
    put(item, k_layout) = f.layout;
    put(item, k_documents) = f.kinds;
    put(item, k_version_contract) = f.version_contract;
}

} // namespace ichor::inspection
