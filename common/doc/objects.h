// Typed, read-only views of Ichor's objects (TalosCluster, TalosMachine, TalosConfigPatch, ADR
// 0128), as inspection::View is of an Inspection: each field the suite reads is named once here,
// so that a misspelt path is a compile error instead of a silent "".
//
// Contract, the same for every accessor:
//   - a text field returns its string, or "" when it is missing or not a string (text() takes
//     another fallback);
//   - a list returns a pointer to it, or nullptr when it is missing or not a list;
//   - a flag is true only when the field is the boolean true;
//   - an integer is the field when it is an integer, else 0 (or nullopt where said);
//   - has_*() and raw() say what is there at all, whatever it holds.
// Nothing throws and nothing is copied but the strings returned. A view holds a reference: the
// object must outlive it. It works on any document: is() says whether it is of the view's kind.
#pragma once

#include "common/doc/value.h"
#include "common/doc/vocabulary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ichor::objects {

// The fields, as dotted paths from the object's root (doc::find_path).
namespace field {
inline constexpr std::string_view k_kind = "kind";
inline constexpr std::string_view k_api_version = "apiVersion";
inline constexpr std::string_view k_name = "metadata.name";
inline constexpr std::string_view k_namespace = "metadata.namespace";
inline constexpr std::string_view k_annotations = "metadata.annotations";

// TalosCluster.
inline constexpr std::string_view k_cluster_name = "spec.clusterName";
inline constexpr std::string_view k_talos_version = "spec.talosVersion";
inline constexpr std::string_view k_kubernetes_version = "spec.kubernetesVersion";
inline constexpr std::string_view k_endpoint = "spec.endpoint";
inline constexpr std::string_view k_bundle_name = "spec.secretsBundleRef.name";
inline constexpr std::string_view k_bundle_key = "spec.secretsBundleRef.key";
inline constexpr std::string_view k_discovery_addresses = "spec.discovery.addresses";

// TalosMachine (spec.cluster and spec.role also of a TalosConfigPatch).
inline constexpr std::string_view k_cluster = "spec.cluster";
inline constexpr std::string_view k_role = "spec.role";
inline constexpr std::string_view k_address = "spec.address";
inline constexpr std::string_view k_approval = "spec.approval";
inline constexpr std::string_view k_uuid = "spec.identity.uuid";
inline constexpr std::string_view k_serial = "spec.identity.serial";
inline constexpr std::string_view k_macs = "spec.identity.macs";
inline constexpr std::string_view k_install_disk = "spec.install.disk";
inline constexpr std::string_view k_install_image = "spec.install.image";
inline constexpr std::string_view k_install_wipe = "spec.install.wipe";

// TalosConfigPatch.
inline constexpr std::string_view k_layer = "spec.layer";
inline constexpr std::string_view k_machine = "spec.machine";
inline constexpr std::string_view k_order = "spec.order";
inline constexpr std::string_view k_patch = "spec.patch";
inline constexpr std::string_view k_secret_values = "spec.secretValues";
} // namespace field

// The values of spec.role, spec.approval and spec.layer that readers compare.
inline constexpr std::string_view k_role_control_plane = "controlplane";
inline constexpr std::string_view k_approval_approved = "Approved";
inline constexpr std::string_view k_approval_pending = "Pending";
inline constexpr std::string_view k_approval_rejected = "Rejected";
inline constexpr std::string_view k_layer_cluster = "cluster";
inline constexpr std::string_view k_layer_role = "role";
inline constexpr std::string_view k_layer_machine = "machine";

// What every view reads: the object's kind, name and annotations, and any field by the rules above.
class ObjectView {
  public:
    explicit ObjectView(const doc::Value& obj) : m_obj(obj) {}
    explicit ObjectView(doc::Value&&) = delete; // the view would outlive the object

    [[nodiscard]] std::string kind() const { return text(field::k_kind); }
    [[nodiscard]] std::string name() const { return text(field::k_name); }
    [[nodiscard]] std::string ns() const { return text(field::k_namespace); }
    // Whether metadata.annotations has `key`, whatever its value.
    [[nodiscard]] bool has_annotation(std::string_view key) const;

    [[nodiscard]] std::string text(std::string_view path, std::string fallback = {}) const;
    [[nodiscard]] const doc::Value* list(std::string_view path) const;
    [[nodiscard]] bool flag(std::string_view path) const;
    [[nodiscard]] std::optional<std::int64_t> integer(std::string_view path) const;
    // The field as it is, of any type; nullptr only when it is missing.
    [[nodiscard]] const doc::Value* raw(std::string_view path) const;

    [[nodiscard]] const doc::Value& object() const { return m_obj; }

  protected:
    // kind `kind` of apiVersion vocab::k_ichor_api.
    [[nodiscard]] bool is_kind(std::string_view kind) const;

  private:
    const doc::Value& m_obj;
};

class ClusterView : public ObjectView {
  public:
    using ObjectView::ObjectView;
    [[nodiscard]] bool is() const { return is_kind("TalosCluster"); }

    [[nodiscard]] std::string cluster_name() const { return text(field::k_cluster_name); }
    [[nodiscard]] std::string talos_version() const { return text(field::k_talos_version); }
    [[nodiscard]] std::string kubernetes_version() const {
        return text(field::k_kubernetes_version);
    }
    [[nodiscard]] std::string endpoint() const { return text(field::k_endpoint); }
    // The Secret that holds the cluster's secrets bundle, and its key (default bundle.yaml).
    [[nodiscard]] std::string bundle_secret() const { return text(field::k_bundle_name); }
    [[nodiscard]] std::string bundle_key() const {
        return text(field::k_bundle_key, "bundle.yaml");
    }
    [[nodiscard]] const doc::Value* discovery_addresses() const {
        return list(field::k_discovery_addresses);
    }
};

class MachineView : public ObjectView {
  public:
    using ObjectView::ObjectView;
    [[nodiscard]] bool is() const { return is_kind("TalosMachine"); }

    [[nodiscard]] std::string cluster() const { return text(field::k_cluster); }
    [[nodiscard]] std::string role() const { return text(field::k_role); }
    [[nodiscard]] bool is_control_plane() const { return role() == k_role_control_plane; }
    [[nodiscard]] std::string address() const { return text(field::k_address); }
    // spec.approval as written; `fallback` when there is none (the operator's default: Pending).
    [[nodiscard]] std::string approval(std::string fallback = {}) const {
        return text(field::k_approval, std::move(fallback));
    }
    [[nodiscard]] bool is_approved() const { return approval() == k_approval_approved; }
    // The identity as recorded: the UUID as written (compare it lowered), the serial, the MACs.
    [[nodiscard]] std::string uuid() const { return text(field::k_uuid); }
    [[nodiscard]] std::string serial() const { return text(field::k_serial); }
    [[nodiscard]] const doc::Value* macs() const { return list(field::k_macs); }
    [[nodiscard]] std::string install_disk() const { return text(field::k_install_disk); }
    [[nodiscard]] std::string install_image() const { return text(field::k_install_image); }
    [[nodiscard]] bool install_wipe() const { return flag(field::k_install_wipe); }
    // The operator applies nothing to it while held (vocab::k_annotation_hold_apply).
    [[nodiscard]] bool held() const { return has_annotation(vocab::k_annotation_hold_apply); }
};

class PatchView : public ObjectView {
  public:
    using ObjectView::ObjectView;
    [[nodiscard]] bool is() const { return is_kind("TalosConfigPatch"); }

    [[nodiscard]] std::string cluster() const { return text(field::k_cluster); }
    // "cluster", "role" or "machine"; the role or the machine it selects by its layer.
    [[nodiscard]] std::string layer() const { return text(field::k_layer); }
    [[nodiscard]] std::string role() const { return text(field::k_role); }
    [[nodiscard]] std::string machine() const { return text(field::k_machine); }
    // Whether its layer selects the machine of `role` named `machine` (of any cluster: compare
    // cluster() too); a machine layer never selects an unnamed machine.
    [[nodiscard]] bool selects(std::string_view role, std::string_view machine) const;
    // Whether it is of the cluster `cluster` and selects the machine of `role` named `machine`:
    // cluster() == cluster && selects(role, machine), spec looked up once.
    [[nodiscard]] bool selects(std::string_view cluster, std::string_view role,
                               std::string_view machine) const;
    // spec.order when it is an integer, else 0.
    [[nodiscard]] std::int64_t order() const { return integer(field::k_order).value_or(0); }
    [[nodiscard]] std::string patch() const { return text(field::k_patch); }
    // spec.secretValues when it is a list (secret_values_field() is what is there, of any type).
    [[nodiscard]] const doc::Value* secret_values() const { return list(field::k_secret_values); }
    [[nodiscard]] const doc::Value* secret_values_field() const {
        return raw(field::k_secret_values);
    }
};

} // namespace ichor::objects
