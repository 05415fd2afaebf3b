// The real seams of the adoption (adopt.h): the nodes over the Talos API, the cluster's reads over
// its Kubernetes API; and the inputs the tool reads before the flow (the CNI flags, the nodes, the
// TalosCluster), --explain and --keep-stages.
#include "common/cni/values.h"
#include "common/doc/limits.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/status.h"
#include "common/stages/adopt.h"
#include "common/talos/client.h"
#include "common/talos/reach.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

namespace ichor::stages {

namespace {

using doc::Value;

class TalosNodes final : public AdoptNodes {
  public:
    TalosNodes(TalosReach reach, kube::Client& kube) : m_r(std::move(reach)), m_kube(kube) {}

    [[nodiscard]] InspectOptions reach(std::vector<talos::Address> addresses) const override {
        InspectOptions io;
        io.addresses = std::move(addresses);
        io.context = m_r.context;
        io.talosconfig_path = m_r.talosconfig_path;
        io.endpoint = m_r.endpoint;
        io.call_timeout_ms = m_r.call_timeout_ms;
        io.concurrency = m_r.concurrency;
        return io;
    }
    Outcome inspect(doc::ResourceList& list, const InspectOptions& options) override {
        return stages::inspect(list, options);
    }
    Result<bundle::Bundle> load_bundle(BundleSource source, const Value* cluster,
                                       const Warn& warn) override {
        source.call_timeout_ms = m_r.call_timeout_ms;
        source.endpoint = m_r.endpoint;
        return stages::load_bundle(source, &m_r.context, cluster != nullptr ? &m_kube : nullptr,
                                   cluster, warn);
    }
    Result<std::vector<DiscoveryMember>> members(const Value& inspection) override {
        const inspection::View v(inspection);
        auto a = talos::parse_address(v.node());
        if (!a) {
            return a.error();
        }
        auto members = talos::reach_for(&m_r.context, false, m_r.endpoint, m_r.call_timeout_ms)
                           .client(*a)
                           .discovery_members();
        if (!members) {
            return members.error();
        }
        std::vector<DiscoveryMember> out;
        for (const auto& m : *members) {
            out.push_back({m.hostname, m.addresses});
        }
        return out;
    }
    ReadConfigs configs_reader() override {
        return stages::configs_reader(m_r.context, m_r.endpoint, m_r.call_timeout_ms);
    }

  private:
    TalosReach m_r;
    kube::Client& m_kube;
};

// The items of a list of the cluster's Kubernetes API (all namespaces).
Result<std::vector<Value>> list_items(kube::Client& k, const std::string& path,
                                      const kube::ListOptions& lo = {}) {
    auto l = k.list(path, lo);
    if (!l) {
        return l.error().wrap("listing " + path);
    }
    std::vector<Value> out;
    if (l->is_object() && l->contains("items") && (*l)["items"].is_array()) {
        Value& items = (*l)["items"];
        out.assign(std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
    }
    return out;
}

class KubeClusterReads final : public ClusterReads {
  public:
    explicit KubeClusterReads(kube::Client& k) : m_k(k) {}

    Result<cni::ClusterObjects> cni_objects() override {
        cni::ClusterObjects c;
        struct Want {
            const char* path;
            std::vector<Value>* into;
            const char* field_selector;
            std::vector<std::string> omit;
        };
        // Of a Node the plan reads its name, annotations, addresses, conditions and nodeInfo
        // (plan_node_fields, cni::detect): its managedFields and its node's image list, half of
        // a Node or more, are left unread.
        const std::vector<std::string> node_omit = {"metadata.managedFields", "status.images"};
        for (const Want& w : {Want{"/apis/apps/v1/daemonsets", &c.daemonsets, ""},
                              Want{"/apis/apps/v1/deployments", &c.deployments, ""},
                              Want{"/api/v1/configmaps", &c.configmaps, ""},
                              Want{"/api/v1/secrets", &c.secrets, "type=helm.sh/release.v1"},
                              Want{"/api/v1/nodes", &c.nodes, "", node_omit}}) {
            kube::ListOptions lo;
            lo.field_selector = w.field_selector;
            lo.omit = w.omit;
            auto items = list_items(m_k, w.path, lo);
            if (!items) {
                return items.error().wrap("reading the cluster's CNI");
            }
            *w.into = std::move(*items);
        }
        return c;
    }
    Result<std::vector<Value>> nodes() override { return list_items(m_k, "/api/v1/nodes"); }
    std::pair<bool, std::string> ichor_api() override {
        auto g = m_k.get("/apis/" + std::string(vocab::k_ichor_api));
        if (!g) {
            return {false, g.error().code == kube::reason::k_not_found
                               ? std::string("the group version ") +
                                     std::string(vocab::k_ichor_api) + " is not served"
                               : g.error().message};
        }
        std::vector<std::string> missing;
        for (const char* plural : {"talosclusters", "talosmachines", "talosconfigpatches"}) {
            bool found = false;
            if (const Value* r = doc::find_path(*g, "resources"); r != nullptr && r->is_array()) {
                for (const auto& res : *r) {
                    found = found || res.value("name", "") == plural;
                }
            }
            if (!found) {
                missing.push_back(plural);
            }
        }
        return {missing.empty(),
                missing.empty() ? std::string() : "missing: " + util::join(missing, ", ")};
    }

  private:
    kube::Client& m_k;
};

} // namespace

std::unique_ptr<AdoptNodes> nodes_over(const TalosReach& reach, kube::Client& kube) {
    return std::make_unique<TalosNodes>(reach, kube);
}

std::unique_ptr<ClusterReads> cluster_reads_over(kube::Client& kube) {
    return std::make_unique<KubeClusterReads>(kube);
}

RealWorld world_over(kube::Client& kube, IchorObjects& objects, const TalosReach& reach,
                     Reporter& report, Consent consent) {
    RealWorld w{cluster_reads_over(kube), nodes_over(reach, kube), {}};
    w.world = AdoptWorld{&objects,          writers_over(kube),    w.reads.get(),
                         w.nodes.get(),     &util::system_clock(), &report,
                         std::move(consent)};
    return w;
}

Result<Value> get_cluster(IchorObjects& objects, const std::string& name) {
    auto c = objects.get("talosclusters", objects.ns(), name);
    if (!c && c.error().code == kube::reason::k_not_found) {
        return make_error(ErrorKind::Config,
                          "TalosCluster \"" + name + "\" not found in namespace \"" + objects.ns() +
                              "\"",
                          "kubectl get talosclusters -A", vocab::code::k_cluster_not_found);
    }
    return c;
}

Result<cni::CniFlags> cni_flags(bool cni_unmanaged, const std::string& cilium_values) {
    cni::CniFlags f;
    f.cni_unmanaged = cni_unmanaged;
    if (!cilium_values.empty()) {
        auto text = util::read_file(cilium_values, doc::k_limits.max_document_bytes);
        if (!text) {
            return text.error().wrap("--cilium-values");
        }
        auto v = cni::read_values(*text, cilium_values);
        if (!v) {
            return v.error();
        }
        f.cilium_values = true;
        f.values = *v;
    }
    return f;
}

Result<std::vector<talos::Address>> cluster_nodes(const std::vector<std::string>& given,
                                                  const std::vector<std::string>& context_nodes) {
    const std::vector<std::string>& nodes = given.empty() ? context_nodes : given;
    if (nodes.empty()) {
        return make_error(ErrorKind::Usage,
                          "no nodes: the talosconfig context names none and --nodes is not given",
                          "kubectl ichor adopt --talosconfig FILE --nodes CP1,CP2,W1,...",
                          vocab::code::k_usage);
    }
    std::vector<talos::Address> out;
    for (const auto& text : nodes) {
        auto a = talos::parse_address(text);
        if (!a) {
            return a.error().wrap("--nodes");
        }
        out.push_back(*a);
    }
    return out;
}

std::string explain_adoption(const ExplainFlags& o) {
    const std::string ns = o.ns.empty() ? "" : " -n " + o.ns;
    const std::string tc = o.talosconfig.empty() ? "" : " --talosconfig " + o.talosconfig;
    std::string s;
    if (o.add_machines.empty()) {
        s = "# the cluster plan has no single-tool step yet: adopt --plan makes it\n";
        s += "kubectl ichor adopt" + tc +
             (o.nodes.empty() ? "" : " --nodes " + util::join(o.nodes, ",")) +
             (o.cluster.empty() ? "" : " --cluster " + o.cluster) + ns +
             (o.bundle_file.empty() ? "" : " --secrets-bundle " + o.bundle_file) +
             (o.cni_unmanaged ? " --cni-unmanaged" : "") +
             (o.cilium_values.empty() ? "" : " --cilium-values " + o.cilium_values) +
             (o.accept_cilium_diff ? " --accept-cilium-diff" : "") +
             " --plan -o yaml > plan.yaml\n";
        if (!o.plan_only) {
            s += "kubectl ichor hold apply -f plan.yaml" + ns + tc + " --secrets-bundle BUNDLE" +
                 (o.yes ? " --yes" : "") + "\n";
            s += "kubectl ichor hold release --cluster " +
                 (o.cluster.empty() ? "NAME" : o.cluster) + ns + tc + "\n";
            if (o.parallel > 1) {
                s += "# (hold release releases the workers one at a time; --parallel is adopt's)\n";
            }
        }
        return s;
    }
    std::string bundle = !o.bundle_file.empty() ? " --secrets-bundle " + o.bundle_file : "";
    if (o.recover) {
        bundle = " --recover-secrets --recover-from " + o.recover_from + tc;
    }
    s = "kubectl ichor inspect " + util::join(o.add_machines, " ") + tc + " \\\n" +
        " | kubectl ichor trustcheck --cluster " + o.cluster + ns + bundle + " \\\n" +
        " | kubectl ichor drift --cluster " + o.cluster + ns +
        (o.bundle_file.empty() ? "" : " --secrets-bundle " + o.bundle_file) + " --add-machine" +
        (o.node_check ? " --node-check" + tc : "") + " > plan.yaml\n";
    if (!o.plan_only) {
        s += "kubectl ichor hold apply -f plan.yaml" + ns + tc + (o.yes ? " --yes" : "") + "\n";
        s += "kubectl ichor hold release --cluster " + o.cluster + ns + tc + "\n";
    }
    return s;
}

Status keep_stage(const std::string& dir, const std::string& name, const doc::ResourceList& list) {
    if (dir.empty()) {
        return ok_status();
    }
    ::mkdir(dir.c_str(), 0700);
    return util::write_file_atomic(dir + "/" + name, doc::to_yaml(list.to_value()), 0600);
}

} // namespace ichor::stages
