// Where a stage's inputs come from: the Kubernetes client, the TalosCluster, the secrets bundle
// (a file, a control plane's configuration, or the cluster's own Secret) and the talosconfig.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/value.h"
#include "common/kube/client.h"
#include "common/talos/address.h"
#include "common/talos/talosconfig.h"
#include "common/util/env.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ichor::stages {

using Warn = std::function<void(std::string_view)>;

// A client for the kubeconfig, context and namespace given (kube::load_config rules).
Result<std::unique_ptr<kube::Client>> connect_kube(const kube::LoadOptions& options,
                                                   const Environment& env, bool stdin_is_terminal,
                                                   const Warn& warn);

// The TalosCluster NAME in NS. NotFound is a Config error naming the cluster and the namespace
// searched, with the command that lists the clusters there are.
Result<doc::Value> get_cluster(kube::Client& kube, const std::string& name, const std::string& ns);

struct BundleSource {
    std::string file;         // --secrets-bundle
    std::string recover_from; // --recover-secrets --recover-from ADDRESS
    std::string recover_to;   // where the recovered bundle is written (0600, never replaced)
    std::int64_t call_timeout_ms = 20000;
    // When set, the control plane is read through this endpoint with `node` metadata, as inspect
    // reads nodes (cli::TalosOptions::endpoint_for); else dialled directly.
    std::optional<talos::Address> endpoint;
};

// The bundle, from the first source given: the file (a warning when group or others can read it),
// a control plane's configuration read with `context` (written to recover_to; through
// source.endpoint when set), else the cluster's bundle Secret through `kube`. A CA rotation under
// way (rotation.yaml in the cluster's bundle Secret) refuses it whatever the source, whenever
// `kube` and `cluster` are given (before a recovered bundle is written); a Secret that cannot be
// read then is a warning.
Result<bundle::Bundle> load_bundle(const BundleSource& source, const talos::TalosContext* context,
                                   kube::Client* kube, const doc::Value* cluster, const Warn& warn);

} // namespace ichor::stages
