// A Talos machine configuration as the suite reads it: the documents (the legacy v1alpha1
// document plus typed documents), secret values replaced by digests, and the facts adoption
// needs, read from the v1alpha1 fields or from the v1.14 documents, whichever the node has.
// Pure: no network, no clock.
#pragma once

#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::machineconfig {

struct Config {
    // Every document in input order. The legacy one has `version: v1alpha1`; typed ones have
    // `apiVersion` and `kind`.
    std::vector<doc::Value> documents;

    // The v1alpha1 document, or nullptr.
    [[nodiscard]] const doc::Value* v1alpha1() const;
    // The first typed document of a kind (and name, when given), or nullptr.
    [[nodiscard]] const doc::Value* typed(std::string_view kind, std::string_view name = {}) const;
};

// Parses the configuration bytes as stored on the node (MachineConfigs v1alpha1). An empty or
// malformed text is a Usage error naming `source`.
Result<Config> parse(std::string_view text, std::string_view source);

// True for a map key whose value is a secret wherever it appears (key, token, secret, password,
// privateKey, passphrase, ...). Documented in docs/design.md, "Secrets".
bool is_secret_key(std::string_view key);

// Replaces every secret value with "sha256:<hex>" of the value (a scalar's text; a structure's
// compact JSON). Values that already are digests are left as they are, so digesting is
// idempotent. Besides the secret keys: an inline manifest's text (`contents`, `manifest`) that
// holds a Kubernetes Secret and no DaemonSet, digested whole; one that holds a Secret and a
// DaemonSet (a CNI's manifest carries its own certificates, and is read to detect the CNI) keeps
// its text with the values of its Secrets digested (digest_manifest_secrets); and an
// `environment` entry NAME=VALUE whose NAME says it is a secret (KEY, TOKEN, SECRET, PASSWORD,
// PASSWD, AUTH, CREDENTIAL in it), digested whole.
doc::Value digest_secrets(const doc::Value& document);
std::vector<doc::Value> digest_secrets(const std::vector<doc::Value>& documents);
// The same, in the documents given, for a caller that no longer needs them as they were.
std::vector<doc::Value> digest_secrets(std::vector<doc::Value>&& documents);

// A manifest's text that holds a Kubernetes Secret and a DaemonSet (`kind:` lines at the start of
// a line): the form whose Secrets digest_manifest_secrets digests.
bool partly_secret_manifest(std::string_view text);
// The text with each value of every Secret document's `data` and `stringData` replaced by
// "sha256:<hex>" of it (an entry's value as written, a block scalar with its lines; a flow
// mapping on the `data:` line as one value), every other line as it was; idempotent (a digest
// stays). Drift compares such a manifest by the digest of this text (docs/stream.md,
// "Credentials").
std::string digest_manifest_secrets(std::string_view text);

struct Install {
    std::string disk;
    std::string image;
    bool wipe = false;
    std::string disk_selector; // a v1.14 CEL match or a v1alpha1 diskSelector, as text
};

struct Facts {
    std::string layout;             // "v1alpha1", "multi-document" or "v1.14"
    std::vector<std::string> kinds; // the typed documents' kinds, in order
    std::string version_contract;   // "1.14" when the v1.14 documents are used, else inferred
    std::string cluster_id;
    std::string cluster_name;
    std::string endpoint;
    std::string role;         // controlplane, worker, init
    std::string talos_ca_pem; // machine.ca.crt decoded to PEM
    std::vector<std::string> accepted_ca_pems;
    Install install;
};

// Reads the facts. Missing facts stay empty; never fails.
Facts extract_facts(const Config& config);

// Decodes a v1alpha1 PEM field (base64 of PEM) or passes a raw PEM through (v1.14 documents).
std::string pem_from_field(std::string_view field);

} // namespace ichor::machineconfig
