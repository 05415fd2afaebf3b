// The adoption (kubectl ichor adopt, ADR 0128 decision 1): one flow over two inputs, a whole
// running cluster that Ichor did not make (ClusterToAdopt) or machines to add to a cluster Ichor
// has (MachinesToAdd). Inspect, trustcheck, plan (and the node check), then, without --plan and
// with consent, hold apply and hold release, in one process over the same documents.
//
// The flow reaches the world only through the seams of AdoptWorld: the nodes (AdoptNodes, the
// Talos API, reached the one way it was made with), the Ichor objects (IchorObjects), the
// cluster's own Kubernetes reads (ClusterReads), the clock (util::Clock) and the reporter
// (Reporter). adopt_world gives the real ones; tests/unit/test_stages_adopt.cpp fakes them all.
#pragma once

#include "common/bundle/bundle.h"
#include "common/cni/decide.h"
#include "common/cni/detect.h"
#include "common/doc/resource_list.h"
#include "common/kube/client.h"
#include "common/stages/hold.h"
#include "common/stages/inspect.h"
#include "common/stages/node_check.h"
#include "common/stages/objects.h"
#include "common/stages/plan_cluster.h"
#include "common/stages/reporter.h"
#include "common/stages/sources.h"
#include "common/stages/stage.h"
#include "common/talos/address.h"
#include "common/talos/talosconfig.h"
#include "common/util/clock.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ichor::stages {

// The Talos API of the nodes, reached one way: through the endpoint the dialler was made with,
// else directly (cli::TalosOptions::endpoint_for chooses it, once).
class AdoptNodes {
  public:
    virtual ~AdoptNodes() = default;
    // What every read of `addresses` takes: the credential, the talosconfig's path, the endpoint,
    // the call timeout and the concurrency.
    [[nodiscard]] virtual InspectOptions reach(std::vector<talos::Address> addresses) const = 0;
    // The stage inspect (inspect.h) over `options`.
    virtual Outcome inspect(doc::ResourceList& list, const InspectOptions& options) = 0;
    // The bundle from `source` (load_bundle; a control plane read the way reach says). With
    // `cluster` (the TalosCluster), from its Secret when `source` names no file and no node, and
    // refused while a CA rotation is under way.
    virtual Result<bundle::Bundle> load_bundle(BundleSource source, const doc::Value* cluster,
                                               const Warn& warn) = 0;
    // Talos discovery's members as the node of `inspection` lists them. An error names the node.
    virtual Result<std::vector<DiscoveryMember>> members(const doc::Value& inspection) = 0;
    // Hold apply's reads of the nodes' configurations (hold.h).
    virtual ReadConfigs configs_reader() = 0;
    // The node check's calls and the release's zero-drift read (over `reach`, what reach({})
    // gives); empty: the stages' own, over reach's options.
    virtual DryRunNode dry_run() { return {}; }
    virtual std::function<Result<std::string>(const NodeTarget&)> node_config() { return {}; }
    virtual ReadNode read_node(const InspectOptions& /*reach*/) { return {}; }
};

// What a whole-cluster adoption reads of the cluster's own Kubernetes API.
class ClusterReads {
  public:
    virtual ~ClusterReads() = default;
    // The objects CNI detection reads (docs/cni.md), all namespaces. An error names the list.
    virtual Result<cni::ClusterObjects> cni_objects() = 0;
    // The Node objects.
    virtual Result<std::vector<doc::Value>> nodes() = 0;
    // Whether the Ichor API (the three kinds of deploy/crds) is served; else what is missing.
    virtual std::pair<bool, std::string> ichor_api() = 0;
};

// The consent to `what` with the changes `lines` (cli::obtain_consent); an error refuses.
using Consent =
    std::function<Status(const std::string& what, const std::vector<std::string>& lines)>;

struct AdoptWorld {
    IchorObjects* objects = nullptr; // required: read, and written by hold apply and release
    ObjectsFactory writers;          // hold apply's concurrent creates; empty: one at a time
    ClusterReads* cluster = nullptr; // required for a whole cluster
    AdoptNodes* nodes = nullptr;     // required
    util::Clock* clock = nullptr;    // required
    Reporter* report = nullptr;      // required
    Consent consent;                 // required unless plan_only
};

// A whole running cluster: every node given, the bundle from a file or recovered read-only from a
// control plane (recover_from, else the first control plane).
struct ClusterToAdopt {
    std::string cluster; // --cluster; empty: the nodes' cluster.clusterName, else "unnamed"
    std::vector<talos::Address> nodes;
    std::string bundle_file;  // --secrets-bundle
    std::string recover_from; // --recover-from
    std::string recover_to;   // --recover-to
    cni::CniFlags cni;        // --cni-unmanaged, --cilium-values (cni_flags)
    bool accept_cilium_diff = false;
    int parallel = 1; // workers released at once
};

// Machines to add to the TalosCluster `talos_cluster` (read by the caller: get_cluster).
struct MachinesToAdd {
    std::string cluster;
    doc::Value talos_cluster;
    std::vector<std::string> addresses; // --add-machine, each checked by talos::parse_address
    BundleSource bundle;                // file, recover_from, recover_to; none: the Secret
};

struct AdoptOptions {
    bool plan_only = false;  // --plan: stop after the plan, write nothing
    bool yes = false;        // consent given on the command line
    bool node_check = true;  // dry-run each machine's configuration on its node before consent
    std::string keep_stages; // write each stage's document into this folder (keep_stage)
    std::string backup_dir;  // hold apply's backups
    std::int64_t timeout_ms = 15 * 60 * 1000; // each wait for Ready
    int concurrency = 16;                     // nodes read and machines written at once
};

// What the flow leaves for the caller to print, when `write` is set: the plan (as a table with -o
// table) or the final document. The outcome may still carry an error (every machine refused:
// the plan is printed, then the refusal).
struct Adopted {
    doc::ResourceList list;
    bool write = false;
    bool plan = false; // `list` is the plan (stages::plan_table), else the final document
};

// The flow. Every refusal comes before the first write: of the plan (its results), of the plan's
// node check, of the consent, and hold apply's own (the backups first, then the writes). A rerun
// resumes: machines already adopted are skipped, machines an interrupted run left held are
// released. The outcome: done = machines released, stopped = machines refused, blocked or failed
// in any step (each named in out.list), skipped = machines already adopted.
Outcome adopt(const std::variant<ClusterToAdopt, MachinesToAdd>& input, const AdoptOptions& options,
              const AdoptWorld& world, Adopted& out);

// The real seams: the Talos API with `context` (os:admin) through `endpoint` when set, the
// cluster's reads and the bundle Secret over `kube` (which must outlive them).
struct TalosReach {
    talos::TalosContext context;
    std::string talosconfig_path;
    std::optional<talos::Address> endpoint;
    std::int64_t call_timeout_ms = 20000;
    int concurrency = 16;
};
std::unique_ptr<AdoptNodes> nodes_over(const TalosReach& reach, kube::Client& kube);
std::unique_ptr<ClusterReads> cluster_reads_over(kube::Client& kube);

// The real world of an adoption: the nodes as `reach` says and the cluster's reads over `kube`
// (owned here), the caller's `objects` and `report`, hold apply's writers over `kube`, the system
// clock and `consent`. `kube`, `objects` and `report` must outlive it.
struct RealWorld {
    std::unique_ptr<ClusterReads> reads;
    std::unique_ptr<AdoptNodes> nodes;
    AdoptWorld world;
};
RealWorld world_over(kube::Client& kube, IchorObjects& objects, const TalosReach& reach,
                     Reporter& report, Consent consent);

// The TalosCluster NAME in the namespace of `objects`: get_cluster's refusal when it is missing.
Result<doc::Value> get_cluster(IchorObjects& objects, const std::string& name);

// --cni-unmanaged and --cilium-values FILE, the file read and validated as spec.cni.cilium.values
// is (an error names the flag).
Result<cni::CniFlags> cni_flags(bool cni_unmanaged, const std::string& cilium_values);

// The nodes of a whole cluster: `given` (--nodes), else the talosconfig context's `nodes`. None is
// a usage error; an address that does not parse names --nodes.
Result<std::vector<talos::Address>> cluster_nodes(const std::vector<std::string>& given,
                                                  const std::vector<std::string>& context_nodes);

// --explain: the commands of single tools that the adoption runs, from the flags as given (an
// empty string: the flag was not given). No add_machines: a whole cluster, whose plan step is
// adopt --plan itself (no single tool plans a whole cluster yet).
struct ExplainFlags {
    std::string ns;          // -n
    std::string talosconfig; // --talosconfig
    std::string cluster;     // --cluster
    std::string bundle_file; // --secrets-bundle
    bool recover = false;    // --recover-secrets
    std::string recover_from;
    std::vector<std::string> add_machines;
    std::vector<std::string> nodes;
    bool plan_only = false;
    bool yes = false;
    bool node_check = true;
    bool cni_unmanaged = false;
    std::string cilium_values;
    bool accept_cilium_diff = false;
    int parallel = 1;
};
std::string explain_adoption(const ExplainFlags& flags);

// --keep-stages: writes the stage's document into DIR (0700) as NAME (0600); nothing without DIR.
Status keep_stage(const std::string& dir, const std::string& name, const doc::ResourceList& list);

} // namespace ichor::stages
