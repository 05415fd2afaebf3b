// Credentials outside the secrets bundle that a capture carries (registry auth, OIDC client
// secrets, WireGuard keys, ...): never in a patch's text and never printed. A TalosConfigPatch
// names each in spec.secretValues (render::SecretValue), its value in a Secret of the namespace,
// `<patch>-credentials`. The plan holds that Secret without data: each key's digest and the nodes
// whose configuration holds the values are its annotations; hold apply fills the data from the
// node's configuration read before the first write (the backup's bytes), after checking each
// value against its digest. docs/stream.md, "Credentials".
#pragma once

#include "common/doc/value.h"
#include "common/drift/drift.h"
#include "common/render/render.h"
#include "common/util/result.h"

#include <string>
#include <utility>
#include <vector>

namespace ichor::stages {

// The name of the Secret that carries patch `patch_name`'s credentials.
std::string credentials_secret_name(const std::string& patch_name);

// Sets spec.secretValues of `patch` (a planned TalosConfigPatch) from `secrets` and returns the
// planned Secret (metadata only; `nodes` are the addresses whose configuration holds the
// values). Null, and `patch` unchanged, when `secrets` is empty.
doc::Value attach_credentials(doc::Value& patch, const std::vector<drift::CapturedSecret>& secrets,
                              const std::vector<std::string>& nodes);

// Is `item` a planned credentials Secret?
bool is_credentials_secret(const doc::Value& item);

// The Secret to create from the planned one: `data` filled from the configurations (address,
// the node's configuration as it returned it), each value the one whose sha256 digest the plan
// recorded. A digest no listed node's configuration holds is a Findings error (code
// CredentialChanged): the node changed since the plan, and nothing may be written.
Result<doc::Value>
fill_credentials(const doc::Value& planned,
                 const std::vector<std::pair<std::string, std::string>>& configs);

// A lookup of the patches' spec.secretValues (render::SecretLookup, by Secret and key) that
// finds each value in `config` (a node's configuration as it returned it) by the digest the
// patch records; a value not there is not found.
render::SecretLookup lookup_in_config(const std::vector<doc::Value>& patches,
                                      const std::string& config);

// Whether any of the patches carries spec.secretValues.
bool carries_credentials(const std::vector<doc::Value>& patches);

} // namespace ichor::stages
