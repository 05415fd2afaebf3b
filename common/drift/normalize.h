// One layout-independent tree of the facts of a machine configuration, so that the same fact in
// a v1alpha1 field and in a v1.14 document compares equal (docs/drift-rules.md, "Normalization").
// Pure.
#pragma once

#include "common/doc/value.h"

#include <vector>

namespace ichor::drift {

// The facts of the documents, at the v1alpha1 paths:
// - the v1alpha1 document's machine, cluster, debug and persist;
// - each typed document of the layout table (machineconfig/layout.h: the v1.14 documents that
//   replace v1alpha1 fields and the Registry*Config documents), merged into its paths;
// - any other typed document under documents.<Kind>[.<name>];
// - canonical forms: certificates as PEM text (v1alpha1 holds base64 of PEM), the discovery
//   service with its default endpoint, the Kubernetes discovery registry left out (v1.14 removed
//   it), a missing CNI as Talos's default flannel, no nulls, no empty mappings or lists, no empty
//   secrets.
// Secret values are kept as they are (a sha256 digest on a node's side, the value on a render's).
doc::Value normalize(const std::vector<doc::Value>& documents);

} // namespace ichor::drift
