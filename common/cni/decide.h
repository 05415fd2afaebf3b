// What adoption does with the detected CNI (ADR 0128 decisions 3 and 4, ADR 0104), and the refusal
// texts, word for word as the ADR gives them. Pure.
//
//   Cilium              takeover: preset cilium; values from the release record if it carries
//                       any (then --cilium-values is refused), else from --cilium-values, else
//                       none; ipam.mode must be kubernetes (check_ipam).
//   no CNI              install: preset cilium, Ichor installs its Cilium (with --cilium-values
//                       if given); the health gate accepts Nodes NotReady for the network only.
//   anything else       refused, unless --cni-unmanaged: preset unmanaged, the CNI left alone.
//   --cni-unmanaged     preset unmanaged for any cluster; --cilium-values with it is refused.
#pragma once

#include "common/cni/detect.h"
#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>

namespace ichor::cni {

// The sentence decision 4 adds to the non-Cilium refusal.
inline constexpr std::string_view k_no_migration =
    "Ichor does not migrate a CNI. To have Ichor manage Cilium you need a cluster whose CNI is "
    "Cilium with ipam.mode: kubernetes, or none; see the adopt guide, 'Moving from flannel'.";

// Decision 3's refusal of --cilium-values for a release that carries values.
inline constexpr std::string_view k_release_has_values =
    "the existing release already carries values; drop --cilium-values or remove them from the "
    "plan";

struct CniFlags {
    bool cni_unmanaged = false; // --cni-unmanaged
    bool cilium_values = false; // --cilium-values FILE given
    doc::Value values;          // its values, read with read_values (null when not given)
};

enum class CniAction {
    Takeover,  // Cilium: Ichor's Cilium replaces it after the preflight gate
    Install,   // no CNI: Ichor installs its Cilium
    Unmanaged, // the CNI is left as the nodes have it
};

enum class ValuesSource { None, Flag, Record };

struct CniPlan {
    CniAction action = CniAction::Unmanaged;
    std::string preset; // spec.cni.preset: cilium or unmanaged
    ValuesSource source = ValuesSource::None;
    // The operator's values for the render and the preflight (the record's, or the flag's, as
    // given); store split_owned(values).values as spec.cni.cilium.values.
    doc::Value values = doc::Value::object();
    // What the plan says to the user: the agents restart, an inline manifest goes (class B).
    std::vector<std::string> notes;
    // A takeover of a Cilium from Talos inline manifests: their names, for
    // spec.cni.cilium.inlineManifests (the render leaves them out; their removal is class B).
    std::vector<std::string> inline_manifests;
};

std::string_view action_name(CniAction a);
std::string_view source_name(ValuesSource s);

// Decides, or refuses with the ADR's texts. Refusals: Findings for the cluster's state (a
// non-Cilium CNI, a cluster-pool Cilium), Usage for flags that cannot go together.
Result<CniPlan> decide(const Detection& detection, const CniFlags& flags);

} // namespace ichor::cni
