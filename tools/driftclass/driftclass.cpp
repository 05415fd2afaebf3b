#include "tools/driftclass/driftclass.h"

#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/doc/vocabulary.h"
#include "common/stages/node_check.h"
#include "common/stages/objects.h"
#include "common/stages/plan.h"
#include "common/stages/sources.h"
#include "common/util/files.h"

#include <memory>
#include <ostream>
#include <utility>

namespace ichor::tools::driftclass {

namespace {

const cli::ToolInfo k_info{
    "drift",
    "Plan the adoption of trusted nodes: the objects to create, and each node's drift by class.",
    cli::text_block(R"(
kubectl ichor drift --cluster NAME [-n NS] [-f FILE|-] [--secrets-bundle FILE]
      [--cluster-file FILE --patches-file FILE] [--add-machine] [-o yaml|json|table|objects]
      [--node-check --talosconfig FILE])"),
    cli::text_block(R"(
Reads Inspections checked by kubectl ichor trustcheck and renders each node's configuration
from the TalosCluster, its TalosConfigPatches and the secrets bundle, at the cluster's version
contract. The node's live configuration is compared with the render, whatever its layout:
class A drift (sysctls, kernel modules, install extras, registries the cluster does not set,
certificate SANs, subnets) is captured into one TalosConfigPatch <machine>-adopted; class B
(what Ichor owns) is listed, and adopting it needs consent; class C blocks the machine, with a
hint (docs/drift-rules.md). Role, install disk, image and wipe come from the node.

The plan keeps the Inspections and adds, for each machine that is not blocked, the
TalosMachine (approved, held) and its TalosConfigPatch exactly as they would be created;
nothing is written. A node that is already a TalosMachine is skipped. The cluster, patches
and machines are read from the Kubernetes API, or offline from --cluster-file and
--patches-file (TalosConfigPatch and TalosMachine objects) with --secrets-bundle.
--add-machine words the outcome as kubectl ichor adopt --add-machine does: a run with no
writable machine is refused. -o objects prints the planned objects alone, as a v1 List for
kubectl diff and kubectl apply; the refusals are then printed on stderr.
--node-check then sends each planned machine's configuration, every patch applied, to its
node with ApplyConfiguration in dry-run mode (as talosctl apply-config --dry-run): the node
validates it with Talos's own code and answers with the changes it would make; nothing is
applied. A configuration the node rejects blocks the machine with the node's words; changes
that disagree with the class B list are a warning (docs/stream.md, "Node check").
)"),
    cli::text_block(R"(
  kubectl ichor inspect 10.0.0.21 --talosconfig tc | kubectl ichor trustcheck --cluster prod \
      | kubectl ichor drift --cluster prod > plan.yaml
  kubectl ichor drift --cluster prod -f trusted.yaml -o table
  kubectl ichor drift --cluster prod -f trusted.yaml -o objects | kubectl diff -f -
  kubectl ichor drift --cluster prod -f trusted.yaml --cluster-file prod.yaml \
      --patches-file patches.yaml --secrets-bundle prod-secrets.yaml
)"),
};

struct Sources {
    doc::Value cluster;
    std::vector<doc::Value> patches;
    std::vector<doc::Value> machines;
    bundle::Bundle bundle;
    std::string ns;
};

Result<std::vector<doc::Value>> read_objects(const std::string& path, const std::string& flag) {
    auto text = util::read_file(path);
    if (!text) {
        Error e = text.error().wrap(flag);
        e.kind = ErrorKind::Config;
        return e;
    }
    auto list = doc::read_resource_list(*text, path);
    if (!list) {
        return list.error();
    }
    return std::vector<doc::Value>(list->items.begin(), list->items.end());
}

Result<Sources> offline(const Options& o, cli::Streams& s) {
    Sources src;
    src.ns = o.kube.offline_ns();
    auto clusters = read_objects(o.cluster_file, "--cluster-file");
    if (!clusters) {
        return clusters.error();
    }
    for (auto& c : *clusters) {
        if (c.value("kind", "") == "TalosCluster" &&
            doc::get_string(c, "metadata.name") == o.kube.cluster &&
            doc::get_string(c, "metadata.namespace", src.ns) == src.ns) {
            src.cluster = std::move(c);
        }
    }
    if (src.cluster.is_null()) {
        return make_error(ErrorKind::Config,
                          "TalosCluster \"" + o.kube.cluster + "\" not found in namespace \"" +
                              src.ns + "\" of " + o.cluster_file,
                          "give the file that holds it, or -n NAMESPACE",
                          vocab::code::k_cluster_not_found);
    }
    auto objects = read_objects(o.patches_file, "--patches-file");
    if (!objects) {
        return objects.error();
    }
    for (auto& obj : *objects) {
        const std::string kind = obj.value("kind", "");
        if (kind == "TalosConfigPatch") {
            src.patches.push_back(std::move(obj));
        } else if (kind == "TalosMachine") {
            src.machines.push_back(std::move(obj));
        }
    }
    auto b = o.bundle.load(s, "drift", {});
    if (!b) {
        return b.error();
    }
    src.bundle = *b;
    return src;
}

Result<Sources> online(const Options& o, cli::Streams& s) {
    auto k = o.kube.connect(s, "drift");
    if (!k) {
        return k.error();
    }
    auto objects = stages::objects_over(**k);
    Sources src;
    src.ns = (*k)->ns();
    auto cluster = stages::get_cluster(**k, o.kube.cluster, src.ns);
    if (!cluster) {
        return cluster.error();
    }
    src.cluster = *cluster;
    auto patches = objects->list("talosconfigpatches");
    auto machines =
        patches ? objects->list("talosmachines") : Result<std::vector<doc::Value>>(patches.error());
    if (!machines) {
        return machines.error();
    }
    src.patches = std::move(*patches);
    src.machines = std::move(*machines);
    auto b = o.bundle.load(s, "drift", {nullptr, k->get(), &src.cluster, o.kube.cluster});
    if (!b) {
        return b.error();
    }
    src.bundle = *b;
    return src;
}

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_bundle_flags(opts, false, "default: its bundle Secret", "Plan");
    opts.add_options("Plan")("cluster-file", "offline: a file holding the TalosCluster",
                             cxxopts::value<std::string>(), "FILE")(
        "patches-file", "offline: its TalosConfigPatches and TalosMachines",
        cxxopts::value<std::string>(),
        "FILE")("add-machine",
                "the nodes are machines added to the cluster: refuse a run with none writable")(
        "node-check", "dry-run each planned machine's configuration on its node (--talosconfig)");
    cli::add_talos_flags(opts, false);
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            o.kube = cli::to_kube_options(r, true);
            auto out = cli::to_output_options(r);
            if (!out) {
                return out.error();
            }
            o.output = *out;
            o.input = cli::to_input_options(r);
            auto bundle = cli::to_bundle_options(r, false, "");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            o.cluster_file = cli::string_flag(r, "cluster-file");
            o.patches_file = cli::string_flag(r, "patches-file");
            o.add_machine = r.count("add-machine") != 0;
            o.node_check = r.count("node-check") != 0;
            auto talos = cli::to_talos_options(r, false);
            if (!talos) {
                return talos.error();
            }
            o.talos = *talos;
            const std::string offline =
                "kubectl ichor drift --cluster NAME --cluster-file FILE --patches-file FILE "
                "--secrets-bundle FILE";
            if (o.kube.cluster.empty()) {
                return cli::usage_error("--cluster is required",
                                        "kubectl ichor drift --cluster NAME");
            }
            if (o.cluster_file.empty() != o.patches_file.empty()) {
                return cli::usage_error("--cluster-file and --patches-file go together", offline);
            }
            if (!o.cluster_file.empty() && o.bundle.file.empty()) {
                return cli::usage_error("--cluster-file needs --secrets-bundle FILE (offline, the "
                                        "bundle Secret is not read)",
                                        offline);
            }
            return o;
        });
}

namespace {

stages::Outcome check_nodes(const Options& o, cli::Streams& s, const Sources& src,
                            doc::ResourceList& plan) {
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    stages::NodeCheckOptions nc{
        o.kube.cluster, src.ns, &src.cluster, &src.bundle, src.patches, {}, {}};
    nc.inspect.context = ctx->context;
    nc.inspect.call_timeout_ms = o.talos.call_timeout_ms;
    nc.inspect.concurrency = o.talos.concurrency;
    return stages::node_check(plan, nc);
}

stages::Outcome execute(const Options& o, cli::Streams& s) {
    auto list = cli::read_input(s, o.input, "drift", "the output of kubectl ichor trustcheck");
    if (!list) {
        return stages::failed(list.error());
    }
    auto src = o.cluster_file.empty() ? online(o, s) : offline(o, s);
    if (!src) {
        return stages::failed(src.error());
    }
    stages::PlanOptions po{o.kube.cluster, src->ns,      o.add_machine,           &src->cluster,
                           &src->bundle,   src->patches, std::move(src->machines)};
    stages::Outcome out = stages::plan(*list, po);
    if (out.error) {
        return out;
    }
    if (o.node_check) {
        out = stages::with_node_check(out, check_nodes(o, s, *src, *list));
        if (out.error) {
            return out;
        }
    }
    if (auto st = cli::write_list(s, o.output, std::move(*list), stages::plan_table); !st) {
        return stages::failed(st.error());
    }
    return out;
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::driftclass
