// Cilium Helm values as the suite handles them: a values file read and validated as
// spec.cni.cilium.values is (a map, Ichor-owned keys refused), Helm's merge of values, and the
// values the render uses. Pure.
#pragma once

#include "common/cni/pinned.h"
#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cni {

// Reads a values file (--cilium-values): one YAML or JSON document within the suite's reader
// limits (common/doc/limits.h); an empty file is an empty map. Then validate_values. Errors are
// Usage errors naming `source`.
Result<doc::Value> read_values(std::string_view text, std::string_view source,
                               const Pinned& p = pinned());

// Checks a values map: not a map is an error; a leaf that sets an owned path, or a key above one
// (a scalar or list in place of the map that holds it) or below one, is an error of code
// "OwnedValue" that names the owned path and its reason. Null is taken as an empty map.
Status validate_values(const doc::Value& values, std::string_view source,
                       const Pinned& p = pinned());

// The dotted path of every leaf of a values map: a scalar, a list, or an empty map. Object keys
// only; a key that contains a dot is joined as it is.
std::vector<std::string> leaf_paths(const doc::Value& values);

// Helm's coalescing of values: `overlay` over `base`, maps merged key by key, anything else
// replaced; a null in `overlay` removes the key.
doc::Value merge_values(const doc::Value& base, const doc::Value& overlay);

// The values the pinned chart renders with: each compared path's chart default, then Ichor's
// defaults, then `user`, then the owned values (which validate_values keeps out of `user`).
doc::Value render_values(const doc::Value& user, const Pinned& p = pinned());

// A release record's values split for storage as spec.cni.cilium.values: the record may set owned
// keys (the Talos guide's install sets ipam.mode, kubeProxyReplacement, ...), which the stored
// values may not. `values` keeps the rest; `owned` lists each owned path removed.
struct SplitValues {
    doc::Value values = doc::Value::object();
    std::vector<std::string> owned;
};
SplitValues split_owned(const doc::Value& values, const Pinned& p = pinned());

// The value at a dotted path (object keys only), or nullptr.
const doc::Value* value_at(const doc::Value& values, std::string_view dotted);

} // namespace ichor::cni
