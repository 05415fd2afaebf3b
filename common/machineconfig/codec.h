// How a value of the layout table (layout.h) is written in each layout: the conversions between
// a v1alpha1 field and the typed document's field that holds it. Pure.
#pragma once

#include "common/doc/value.h"

namespace ichor::machineconfig::layout {

// How a value is written in each layout. Read back (documents to v1alpha1), a value keeps the
// form drift compares: PEM stays PEM text (pem_from_field reads either), a secret stays as the
// document has it (a node's digest stays a digest).
enum class Codec {
    Same,      // the same value in both
    Pem,       // v1alpha1: base64 of PEM; document: the PEM text without its final newline
    PemKey,    // as Pem; an empty v1alpha1 value (a worker's CA has no key) is not written
    PemList,   // v1alpha1: [{crt: base64 of PEM}]; document: [PEM text] ({cert: PEM} read too)
    Url,       // the URL; a document's {url: ...} is read too
    DevPath,   // v1alpha1: a device path; document: the CEL match `disk.dev_path == "<path>"`
    Cel,       // read only: a CEL match other than a device path (v1alpha1 has no such field)
    Secretbox, // v1alpha1: the secret; document: an EncryptionConfiguration with it for secretbox;
               // read back, a value that is no such configuration (a node's digest) is the secret
    Aescbc,    // as Secretbox, for the aescbc provider
    Negated,   // a boolean, inverted (disabled / enabled)
    Mirror,    // v1alpha1 {endpoints: [url], overridePath, skipFallback}; document
               // {endpoints: [{url, overridePath}], skipFallback}
};

// One value converted by a codec: v1alpha1 -> document, document -> v1alpha1. Null when the
// codec writes nothing for it.
doc::Value encode(Codec codec, const doc::Value& v1alpha1_value);
doc::Value decode(Codec codec, const doc::Value& document_value);
// True when the codec wraps a secret in a free-form value, which is then a secret as a whole.
bool wraps_secret(Codec codec);
// Whether an EncryptionConfiguration (KubeEtcdEncryptionConfig.config, a mapping) has a form that
// Ichor's render or Talos's own generator writes: one resource, `secrets`, with one or two
// secretbox or aescbc providers of one key each, named key1 or key2. Any other form (an identity
// provider after the key, another resource, a key of another name) is its owner's: drift keeps it
// as a fact of its own, which a capture carries whole (its secrets as credentials).
bool generated_encryption(const doc::Value& config);

} // namespace ichor::machineconfig::layout
