// The semantic diff of two fact trees (normalize.h): the node's live configuration against a
// render. Pure.
#pragma once

#include "common/doc/value.h"

#include <string>
#include <vector>

namespace ichor::drift {

struct Change {
    std::vector<std::string> path; // keys from the root; a sysctl name is one key
    std::string dotted;            // the keys joined with '.', as results print it
    doc::Value current;            // the node's value; null when the node does not have it
    doc::Value proposed;           // the render's value; null when the render does not have it
    bool secret = false;           // a secret-bearing path: both values are sha256 digests
    // A layout move (drift::layout_moves), not a difference of values: the render's document
    // ("Kind" or "Kind/name") that holds this subtree, which the node holds, the same, in its
    // v1alpha1 document. `current` and `proposed` then name the two layouts.
    std::string layout;
};

// The facts that differ, in the render's key order (then the node's extra keys). Mappings are
// compared key by key down to their leaves; a list is one fact, compared whole, as Talos merges
// it (a changed list is replaced: delete, then set). Scalars compare by their text, since Talos's
// schema gives every field one type ("65535" and 65535 are the same value). A secret (a key that
// machineconfig::is_secret_key names) compares by digest: the node's sha256 digest against the
// digest of the render's value in any of the encodings Talos uses for it (the text, the PEM it
// is base64 of, or the v1.14 EncryptionConfiguration that carries it). Values of secret changes
// are digests, never the render's secret.
std::vector<Change> diff(const doc::Value& live, const doc::Value& rendered);

// True when two values are the same fact by the rules above (`secret`: compare as a secret).
bool same(const doc::Value& live, const doc::Value& rendered, bool secret);

// The render's value as it may be shown: every secret replaced by its sha256 digest.
doc::Value shown(const doc::Value& value, bool secret);

} // namespace ichor::drift
