// The completion listers that read the Kubernetes API and the kubeconfig. Apart from complete.cpp
// so that only a tool with the kube flags links the client (docs/design.md, "Linking").
#include "common/cli/complete.h"
#include "common/cli/flags.h"
#include "common/kube/client.h"
#include "common/kube/config.h"

namespace ichor::cli {

namespace {
kube::LoadOptions load_options(const KubeOptions& k) {
    kube::LoadOptions lo;
    lo.kubeconfig = k.kubeconfig;
    lo.context = k.context;
    lo.ns = k.offline_ns(); // as KubeOptions::connect: -n, else ichor-system
    lo.warn = [](std::string_view) {};
    return lo;
}
} // namespace

std::vector<Candidate> list_clusters(const KubeOptions& k, const Environment& env,
                                     std::int64_t bound_ms) {
    auto rc = kube::load_config(load_options(k), env);
    if (!rc) {
        return {};
    }
    // One try, bounded, nothing on the terminal: a shell waits for this answer.
    kube::ClientOptions co;
    co.timeout_ms = bound_ms;
    co.max_attempts = 1;
    co.on_warning = [](std::string_view) {};
    co.exec_io.stdin_is_terminal = false;
    co.exec_io.stderr_fd = -1;
    co.exec_io.timeout_ms = bound_ms;
    kube::Client client(std::move(*rc), env, std::move(co));
    auto list = client.list(kube::ichor_path("talosclusters", client.ns()), {.limit = 0});
    if (!list) {
        return {};
    }
    std::vector<Candidate> out;
    for (const auto& c : (*list)["items"]) {
        std::string name = doc::get_string(c, "metadata.name");
        if (!name.empty()) {
            out.push_back({name, "TalosCluster in " + client.ns()});
        }
    }
    return out;
}

std::vector<Candidate> list_kube_contexts(const KubeOptions& k, const Environment& env) {
    auto merged = kube::merge_kubeconfigs(kube::kubeconfig_files(load_options(k), env), true);
    if (!merged) {
        return {};
    }
    std::vector<Candidate> out;
    for (const auto& [name, entry] : merged->contexts) {
        out.push_back({name, name == merged->current_context ? "current context" : ""});
    }
    return out;
}

} // namespace ichor::cli
