#include "common/stages/sources.h"

#include "common/doc/limits.h"
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/kube/status.h"
#include "common/machineconfig/machineconfig.h"
#include "common/talos/client.h"
#include "common/talos/reach.h"
#include "common/util/files.h"

namespace ichor::stages {

using objects::ClusterView;

Result<std::unique_ptr<kube::Client>> connect_kube(const kube::LoadOptions& options,
                                                   const Environment& env, bool stdin_is_terminal,
                                                   const Warn& warn) {
    kube::LoadOptions lo = options;
    lo.warn = warn;
    auto rc = kube::load_config(lo, env);
    if (!rc) {
        return rc.error();
    }
    kube::ClientOptions co;
    co.on_warning = [warn](std::string_view text) { warn("Warning: " + std::string(text)); };
    co.exec_io.stdin_is_terminal = stdin_is_terminal;
    return std::make_unique<kube::Client>(std::move(*rc), env, std::move(co));
}

Result<doc::Value> get_cluster(kube::Client& kube, const std::string& name, const std::string& ns) {
    auto c = kube.get(kube::ichor_path("talosclusters", ns, name));
    if (!c) {
        if (c.error().code == kube::reason::k_not_found) {
            return make_error(ErrorKind::Config,
                              "TalosCluster \"" + name + "\" not found in namespace \"" + ns + "\"",
                              "kubectl get talosclusters -A", vocab::code::k_cluster_not_found);
        }
        return c.error();
    }
    return c;
}

namespace {

Result<bundle::Bundle> from_file(const std::string& path, const Warn& warn) {
    auto text = util::read_file(path, doc::k_limits.max_document_bytes);
    if (!text) {
        return text.error().wrap("--secrets-bundle");
    }
    if (util::readable_by_others(path)) {
        warn(path + " can be read by group or others; a secrets bundle should be 0600 (chmod 600 " +
             path + ")");
    }
    return bundle::parse(*text, path);
}

Result<bundle::Bundle> recover(const BundleSource& s, const talos::TalosContext* ctx,
                               const Warn& warn) {
    if (ctx == nullptr) {
        return make_error(ErrorKind::Config, "--recover-secrets needs a talosconfig with os:admin",
                          "add --talosconfig FILE", vocab::code::k_no_talosconfig);
    }
    auto addr = talos::parse_address(s.recover_from);
    if (!addr) {
        return addr.error().wrap("--recover-from");
    }
    // Through an endpoint the endpoint's handshake is the one verified and its apid checks the
    // control plane's certificate on the forwarded hop (talos-api.md §1.2), as for inspect.
    talos::NodeClient c = talos::reach_for(ctx, false, s.endpoint, s.call_timeout_ms).client(*addr);
    auto res = c.cosi_get(talos::kind::k_machine_config);
    if (!res) {
        return res.error().wrap("--recover-from");
    }
    auto spec = talos::decode_spec<talos::spec::MachineConfig>(*res);
    if (!spec) {
        return spec.error();
    }
    auto cfg = machineconfig::parse(spec->yaml_marshalled(), s.recover_from);
    if (!cfg) {
        return cfg.error();
    }
    auto b = bundle::recover_from_config(*cfg, s.recover_from);
    if (!b) {
        return b.error();
    }
    if (!s.recover_to.empty()) {
        if (auto st = util::write_private_file(s.recover_to, bundle::to_yaml(*b)); !st) {
            return st.error();
        }
        warn("the secrets bundle recovered from " + s.recover_from + " is in " + s.recover_to +
             " (0600); keep it safe");
    }
    return b;
}

// A CA rotation under way changes the CAs the nodes trust, whichever copy of the bundle the
// operator holds (ADR 0128 Risks): the cluster's bundle Secret says so (rotation.yaml), so it is
// read for a file or a recovered bundle too. A cluster with no Secret, or none yet, has no
// rotation; a Secret that cannot be read is a warning, since the bundle itself came from elsewhere.
Status refuse_rotation(kube::Client& kube, const doc::Value& cluster, const Warn& warn) {
    std::string ns = doc::get_string(cluster, "metadata.namespace");
    std::string name = ClusterView(cluster).bundle_secret();
    if (name.empty()) {
        return ok_status();
    }
    auto secret = kube.get(kube::secret_path(ns, name));
    if (!secret) {
        if (secret.error().code != kube::reason::k_not_found) {
            warn("could not read the bundle Secret " + ns + "/" + name +
                 " to check for a CA rotation under way: " + secret.error().message);
        }
        return ok_status();
    }
    return bundle::refuse_rotation(*secret);
}

} // namespace

Result<bundle::Bundle> load_bundle(const BundleSource& s, const talos::TalosContext* ctx,
                                   kube::Client* kube, const doc::Value* cluster,
                                   const Warn& warn) {
    if ((!s.file.empty() || !s.recover_from.empty()) && kube != nullptr && cluster != nullptr) {
        if (auto st = refuse_rotation(*kube, *cluster, warn); !st) {
            return st.error();
        }
    }
    if (!s.file.empty()) {
        return from_file(s.file, warn);
    }
    if (!s.recover_from.empty()) {
        return recover(s, ctx, warn);
    }
    if (kube == nullptr || cluster == nullptr) {
        return make_error(ErrorKind::Config, "no secrets bundle: no cluster to read it from",
                          "give --secrets-bundle FILE", vocab::code::k_no_bundle);
    }
    std::string ns = doc::get_string(*cluster, "metadata.namespace");
    std::string name = ClusterView(*cluster).bundle_secret();
    std::string key = ClusterView(*cluster).bundle_key();
    if (name.empty()) {
        return make_error(ErrorKind::Config,
                          "TalosCluster " + doc::get_string(*cluster, "metadata.name") +
                              " has no spec.secretsBundleRef",
                          "give --secrets-bundle FILE or --recover-secrets --recover-from ADDRESS",
                          vocab::code::k_no_bundle);
    }
    auto secret = kube->get(kube::secret_path(ns, name));
    if (!secret) {
        Error e = secret.error();
        e.kind = ErrorKind::Config;
        e.message = "reading the bundle Secret " + ns + "/" + name + ": " + e.message;
        if (e.code == kube::reason::k_forbidden) {
            e.hint = "kubectl auth can-i get secrets -n " + ns + "; or give --secrets-bundle FILE";
        }
        return e;
    }
    return bundle::from_secret(*secret, key);
}

} // namespace ichor::stages
