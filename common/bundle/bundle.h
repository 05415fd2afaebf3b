// The cluster's secrets bundle, as talosctl gen secrets writes it (secrets.yaml): read, write,
// recover from a control plane's configuration, and read from the cluster's bundle Secret.
// PEM material is kept as Talos keeps it in the bundle: base64 of the PEM text.
#pragma once

#include "common/doc/value.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/result.h"

#include <string>
#include <vector>

namespace ichor::bundle {

struct CertAndKey {
    std::string crt; // base64 of PEM; empty when absent
    std::string key; // base64 of PEM; empty when absent
};

struct Bundle {
    std::string cluster_id;
    std::string cluster_secret;
    std::string bootstrap_token;
    std::string secretbox_encryption_secret;
    std::string aescbc_encryption_secret;
    std::string trustd_token;
    CertAndKey etcd;
    CertAndKey k8s;
    CertAndKey k8s_aggregator;
    CertAndKey k8s_service_account; // key only
    CertAndKey os;                  // the Talos API CA

    // The Talos API CA certificate as PEM text (decoded), or empty.
    [[nodiscard]] std::string os_ca_pem() const;
    // Every secret value of the bundle (for leak checks and digests).
    [[nodiscard]] std::vector<std::string> secret_values() const;
};

// Parses secrets.yaml. Missing required fields (cluster.id, certs.os) are Config errors naming
// `source` and the field.
Result<Bundle> parse(std::string_view text, std::string_view source);

// secrets.yaml text, in talosctl's layout.
std::string to_yaml(const Bundle& b);

// Rebuilds the bundle from a control plane's configuration, as talosctl gen secrets
// --from-controlplane-config does, from the v1alpha1 fields or the v1.14 documents. A worker's
// configuration (no CA keys) is a Config error saying a control plane is needed.
Result<Bundle> recover_from_config(const machineconfig::Config& config, std::string_view source);

// The bundle held in a Kubernetes Secret (the TalosCluster's spec.secretsBundleRef): data[key]
// base64-decoded and parsed. A Secret that also holds rotation.yaml means a CA rotation is under
// way: a Findings error (refusal) naming the Secret.
Result<Bundle> from_secret(const doc::Value& secret, const std::string& key);

// The same refusal alone, for a bundle that comes from elsewhere (a file, recovered): ok when the
// Secret holds no rotation.yaml.
Status refuse_rotation(const doc::Value& secret);

} // namespace ichor::bundle
