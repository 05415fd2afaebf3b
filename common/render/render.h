// Render of a Talos machine configuration for an Ichor cluster: what Talos's own generator
// (pkg/machinery config/generate) writes for the cluster, the role, the node's install fields and
// the cluster's version contract, plus the settings Ichor owns, then the cluster's
// TalosConfigPatches in the controller's order. docs/render.md is the contract; the golden data
// of tests/golden/render/ (from Talos's generator) holds it to it. Pure: no network, no clock;
// the same inputs give the same documents.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/value.h"
#include "common/render/patch.h"
#include "common/util/result.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ichor::render {

// The versions of the version contract this render knows.
inline constexpr std::string_view k_contracts[] = {"1.12", "1.13", "1.14"};

// The parts of a TalosCluster the render reads.
struct ClusterSpec {
    std::string name;               // metadata.name
    std::string ns;                 // metadata.namespace
    std::string cluster_name;       // spec.clusterName, else metadata.name
    std::string talos_version;      // spec.talosVersion, "v1.13.9"
    std::string kubernetes_version; // spec.kubernetesVersion without a leading "v"
    std::string endpoint;
    std::string version_contract; // spec.versionContract, else the minor of talosVersion
    int control_plane_count = 1;
    std::string cni_preset = "cilium"; // cilium, unmanaged, none
    // spec.cni.cilium.inlineManifests: the Talos inline manifests that delivered the Cilium a
    // takeover replaced. The render leaves them out (as every inline manifest), and drift
    // classes their removal B (docs/drift-rules.md).
    std::vector<std::string> cilium_manifests;
    doc::Value registry_mirrors; // spec.registries.mirrors, or null when the cluster sets none
    // spec.network.podSubnets and serviceSubnets; empty: Talos's defaults (10.244.0.0/16 and
    // 10.96.0.0/12), as the generator writes them.
    std::vector<std::string> pod_subnets;
    std::vector<std::string> service_subnets;
};

// Reads a TalosCluster object. A missing name, endpoint, talosVersion or kubernetesVersion is a
// Config error naming the field.
Result<ClusterSpec> parse_cluster(const doc::Value& talos_cluster);

struct Install {
    std::string disk;
    std::string image;
    bool wipe = false;
};

// A credential a TalosConfigPatch carries in a Secret (spec.secretValues): the Secret's name and
// key, the patch document it goes into (`kind` empty for v1alpha1, `name` for a named kind), the
// keys from that document's root (a list index as its decimal text), and the sha256 digest of
// the value as the plan saw it.
struct SecretValue {
    std::string secret;
    std::string key;
    std::string kind;
    std::string name;
    std::vector<std::string> path;
    std::string digest;
};

// spec.secretValues of a TalosConfigPatch; a malformed entry is a Findings error (code
// PatchDoesNotApply) naming the entry.
Result<std::vector<SecretValue>> secret_values(const doc::Value& talos_config_patch);

// The value of key `key` of Secret `secret` (in the patch's namespace), or nullopt.
using SecretLookup =
    std::function<std::optional<std::string>(const std::string& secret, const std::string& key)>;

// Sets each value into the patch's last document of its identity that is not a delete. With an
// empty `lookup` each value is its digest: what the node's configuration carries as an
// Inspection reads it, so that a plan and a zero-drift check compare digests with digests. A
// value the lookup does not find, or a document the patch does not have, is a Findings error
// (code SecretValueMissing).
Status resolve_secret_values(Patch& patch, const std::vector<SecretValue>& values,
                             const SecretLookup& lookup);

struct Input {
    const ClusterSpec* cluster = nullptr;
    const bundle::Bundle* bundle = nullptr;
    std::string role;     // controlplane or worker
    std::string machine;  // the TalosMachine's name, for machine-layer patches
    Install install;      // from the node, never from the cluster
    std::string contract; // empty: the cluster's
    // TalosConfigPatch objects; render selects and orders those of the cluster, role and machine.
    std::vector<doc::Value> patches;
    // Where the patches' spec.secretValues come from; empty: their digests (resolve_secret_values).
    SecretLookup secrets;
};

// The TalosConfigPatches of `cluster` that apply to the role and machine, in the order the
// controller applies them: layer cluster, role, machine; within a layer by spec.order, then by
// metadata.name.
std::vector<const doc::Value*> select_patches(const std::vector<doc::Value>& patches,
                                              const std::string& cluster, const std::string& role,
                                              const std::string& machine);
// Copies of the patches select_patches gives, in its order: the patches of one machine's Input
// without copies of every other machine's (a cluster with a machine patch per machine would
// otherwise copy every patch for every machine). Rendering with them renders as with all.
std::vector<doc::Value> patches_for(const std::vector<doc::Value>& patches,
                                    const std::string& cluster, const std::string& role,
                                    const std::string& machine);

// One list of patches indexed by what selects them, for the selection of many machines from the
// same list (the layering's verify, the node check): select_patches's answer, the same patches in
// the same order, without asking every patch of the list for every machine. The list must outlive
// the index and stay unchanged.
class PatchIndex {
  public:
    explicit PatchIndex(const std::vector<doc::Value>& patches);
    std::vector<const doc::Value*> select(const std::string& cluster, const std::string& role,
                                          const std::string& machine) const;
    // Copies, as patches_for gives them.
    std::vector<doc::Value> patches_for(const std::string& cluster, const std::string& role,
                                        const std::string& machine) const;

  private:
    const std::vector<doc::Value>* m_patches;
    // The patches of a role layer by their spec.role, of a machine layer by their spec.machine;
    // every other patch (the cluster layer, and any a key does not name) is asked every time.
    std::unordered_map<std::string, std::vector<std::size_t>> m_by_role;
    std::unordered_map<std::string, std::vector<std::size_t>> m_by_machine;
    std::vector<std::size_t> m_others;
};

// The generator's documents for the input, with Ichor's settings and without patches; at
// contract 1.14 the documents of Talos's own 1.14 generator (machinery v1.14.1). An unsupported
// version contract is a Config error (code UnsupportedContract).
Result<std::vector<doc::Value>> generate(const Input& input);

// generate, then the selected patches, applied to the generated documents as Talos's
// configpatcher does (at contract 1.14 too: a v1alpha1 patch lands in the v1alpha1 document, a
// typed one merges into its document). A caller that needs one more patch applies it to the
// result (apply_patch_text): the same as rendering with it last. A patch that does not apply is a
// Findings error (code PatchDoesNotApply) whose message starts "TalosConfigPatch NAME: " and
// names the path.
Result<std::vector<doc::Value>> render(const Input& input);

// The contract render uses for the input.
std::string contract_of(const Input& input);

} // namespace ichor::render
