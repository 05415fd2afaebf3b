// The flag groups that yield objects which need the Kubernetes client. Apart from flags.cpp so
// that a tool that never calls Kubernetes (inspect) does not link libcurl (docs/design.md,
// "Linking").
#include "common/cli/errors.h"
#include "common/cli/flags.h"
#include "common/stages/sources.h"

namespace ichor::cli {

Result<std::unique_ptr<kube::Client>> KubeOptions::connect(Streams& s,
                                                           std::string_view verb) const {
    auto warn = [&s, verb](std::string_view m) { report_warning(s, verb, m); };
    return stages::connect_kube({kubeconfig, context, ns}, s.env, s.in_tty, warn);
}

std::string KubeOptions::offline_ns() const {
    return ns.empty() ? "ichor-system" : ns;
}

Result<bundle::Bundle> BundleOptions::load(Streams& s, std::string_view verb,
                                           const Sources& from) const {
    auto warn = [&s, verb](std::string_view m) { report_warning(s, verb, m); };
    stages::BundleSource src{file, recover_from,
                             recover_to.empty() ? from.cluster_name + "-secrets.yaml" : recover_to,
                             from.call_timeout_ms, from.endpoint};
    return stages::load_bundle(src, from.talos, from.kube, from.cluster, warn);
}

} // namespace ichor::cli
