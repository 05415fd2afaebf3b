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
    // Ichor's objects are in ichor-system unless -n says otherwise: the context's namespace is
    // where the user's workloads are, not Ichor's (ADR 0128, amendment finding 3).
    return stages::connect_kube({kubeconfig, context, offline_ns()}, s.env, s.in_tty, warn);
}

std::string KubeOptions::offline_ns() const {
    return ns.empty() ? "ichor-system" : ns;
}

Result<bundle::Bundle> BundleOptions::load(Streams& s, std::string_view verb,
                                           const Sources& from) const {
    auto warn = [&s, verb](std::string_view m) { report_warning(s, verb, m); };
    // No file unless --recover-to names one: the bundle Secret in the cluster is the copy the suite
    // keeps, and a file nobody asked for would make the same command's rerun fail on it.
    stages::BundleSource src{file, recover_from, recover_to, from.call_timeout_ms, from.endpoint};
    return stages::load_bundle(src, from.talos, from.kube, from.cluster, warn);
}

} // namespace ichor::cli
