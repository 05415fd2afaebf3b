// A typed, read-only view of one Inspection item (docs/stream.md), over the fields of fields.h.
// The stages read Inspections only through it, so what they read is named once.
//
// Contract, the same for every accessor:
//   - a text field returns its string, or "" when it is missing or not a string (text() takes
//     another fallback);
//   - a list returns a pointer to it, or nullptr when it is missing or not a list;
//   - a flag is true only when the field is the boolean true;
//   - has_*() says whether the object is there at all, whatever it holds.
// Nothing throws and nothing is copied but the strings returned. The view holds a reference: the
// item must outlive it. It works on any document, not only an Inspection (is_inspection says).
#pragma once

#include "common/doc/value.h"
#include "common/inspection/fields.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ichor::inspection {

class View {
  public:
    explicit View(const doc::Value& item) : m_item(item) {}
    explicit View(doc::Value&&) = delete; // the view would outlive the item

    // kind Inspection of apiVersion doc::k_adopt_api.
    [[nodiscard]] bool is_inspection() const;

    [[nodiscard]] std::string kind() const { return text(field::k_kind); }
    [[nodiscard]] std::string name() const { return text(field::k_name); }
    [[nodiscard]] std::string address() const { return text(field::k_address); }
    // The address, or the name when the item has no address: how messages name the node.
    [[nodiscard]] std::string node() const;
    // spec.port when it is an integer.
    [[nodiscard]] std::optional<std::int64_t> port() const;
    [[nodiscard]] std::string talosconfig_path() const { return text(field::k_talosconfig_path); }
    // The endpoint the node was reached through; empty when it was dialled directly.
    [[nodiscard]] std::string via_endpoint() const { return text(field::k_via_endpoint); }
    [[nodiscard]] std::string talosconfig_ca_fingerprint() const {
        return text(field::k_talosconfig_ca_fingerprint);
    }

    [[nodiscard]] std::string mode() const { return text(field::k_mode); }
    [[nodiscard]] std::string access() const { return text(field::k_access); }
    [[nodiscard]] std::string tls_outcome() const { return text(field::k_tls_outcome); }
    [[nodiscard]] std::string tls_fingerprint() const { return text(field::k_tls_fingerprint); }
    [[nodiscard]] std::string talos_version() const { return text(field::k_talos_version); }
    [[nodiscard]] std::string machine_stage() const { return text(field::k_machine_stage); }

    // Identity.
    [[nodiscard]] std::string uuid() const { return text(field::k_uuid); }
    [[nodiscard]] std::string serial() const { return text(field::k_serial); }
    [[nodiscard]] const doc::Value* macs() const { return list(field::k_macs); }
    [[nodiscard]] std::string hostname() const { return text(field::k_hostname); }
    [[nodiscard]] std::string node_id() const { return text(field::k_node_id); }

    // Facts (from the configuration; the cluster ID and name also from Infos).
    [[nodiscard]] std::string cluster_id() const { return text(field::k_cluster_id); }
    [[nodiscard]] std::string cluster_name() const { return text(field::k_cluster_name); }
    [[nodiscard]] std::string endpoint() const { return text(field::k_endpoint); }
    [[nodiscard]] std::string role() const { return text(field::k_role); }
    [[nodiscard]] std::string talos_ca() const { return text(field::k_talos_ca); }
    [[nodiscard]] std::string install_disk() const { return text(field::k_install_disk); }
    [[nodiscard]] std::string install_image() const { return text(field::k_install_image); }
    [[nodiscard]] bool install_wipe() const { return flag(field::k_install_wipe); }
    [[nodiscard]] std::string install_disk_selector() const {
        return text(field::k_install_disk_selector);
    }
    [[nodiscard]] std::string layout() const { return text(field::k_layout); }
    [[nodiscard]] std::string version_contract() const { return text(field::k_version_contract); }

    // The configuration's documents, secrets digested (an os:admin read only).
    [[nodiscard]] const doc::Value* config() const { return list(field::k_config); }
    // The digest of the configuration's bytes as read; empty when not read.
    [[nodiscard]] std::string config_digest() const { return text(field::k_config_digest); }
    // The persistent configuration's documents when they differ from the running ones' bytes.
    [[nodiscard]] const doc::Value* persistent_config() const {
        return list(field::k_persistent_config);
    }

    // What the node reported of its storage and links.
    [[nodiscard]] const doc::Value* disks() const { return list(field::k_disks); }
    [[nodiscard]] const doc::Value* links() const { return list(field::k_links); }
    [[nodiscard]] const doc::Value* link_names() const { return list(field::k_link_names); }

    // etcd (control planes): members (records keyed by field::member), this member's ID, or the
    // problem that kept them from being read.
    [[nodiscard]] bool has_etcd() const { return find(m_item, field::k_etcd) != nullptr; }
    [[nodiscard]] const doc::Value* etcd_members() const { return list(field::k_etcd_members); }
    [[nodiscard]] std::string etcd_member_id() const { return text(field::k_etcd_member_id); }
    [[nodiscard]] std::string etcd_problem() const { return text(field::k_etcd_problem); }

    // trustcheck's verdict and the cluster it checked against.
    [[nodiscard]] bool has_trust() const { return find(m_item, field::k_trust) != nullptr; }
    [[nodiscard]] std::string trust_verdict() const { return text(field::k_trust_verdict); }
    [[nodiscard]] std::string trust_cluster() const { return text(field::k_trust_cluster); }

    // Any field of fields.h, by the rules above.
    [[nodiscard]] std::string text(Path path, std::string fallback = {}) const;
    [[nodiscard]] const doc::Value* list(Path path) const;
    [[nodiscard]] bool flag(Path path) const;

    [[nodiscard]] const doc::Value& item() const { return m_item; }

  private:
    const doc::Value& m_item;
};

} // namespace ichor::inspection
