#include "tools/adopt/adopt.h"

#include "common/cli/consent.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/stages/adopt.h"
#include "common/stages/plan.h"
#include "common/util/strings.h"

#include <ostream>
#include <variant>

namespace ichor::tools::adopt {

namespace {

const cli::ToolInfo k_info{
    "adopt",
    "Adopt a running Talos cluster that Ichor did not make, or add machines that already run a "
    "configuration signed by an Ichor cluster's CAs, without a reset.",
    cli::text_block(R"(
kubectl ichor adopt --talosconfig FILE [--nodes ADDR,...] [--cluster NAME] [-n ichor-system]
      [--secrets-bundle FILE | --recover-secrets [--recover-from CONTROL-PLANE]
      [--recover-to FILE]] [--cni-unmanaged | --cilium-values FILE] [--accept-cilium-diff]
      [--plan] [--yes] [--parallel N]
      [--keep-stages DIR] [--explain]
  kubectl ichor adopt --cluster NAME --add-machine ADDRESS [--add-machine ADDRESS...]
      --talosconfig FILE [--plan] [--yes] [--secrets-bundle FILE | --recover-secrets
      --recover-from ADDRESS] [-n NS] [--keep-stages DIR] [--explain] [--timeout 15m]
      [--no-node-check])"),
    cli::text_block(R"(
Without --add-machine: the whole cluster of the nodes given (--nodes, else the talosconfig
context's). Every node is read, the cluster is checked (one cluster ID, one Talos version,
etcd healthy with quorum, a Ready Node per node, the Ichor API served), the bundle is
recovered read-only from the first control plane (or --secrets-bundle), and the plan writes
the bundle Secret, a TalosCluster built from the live cluster, the class A drift as
cluster, role and machine TalosConfigPatches, and a held TalosMachine per node; the holds
are released after a live zero-drift check, control planes one at a time, then the
workers in waves of --parallel. The CNI is detected: Cilium (ipam.mode kubernetes) is
taken over after a preflight that compares it with Ichor's render (its values from the
Helm release record, else --cilium-values FILE; a difference is refused unless
--accept-cilium-diff); a cluster without a CNI gets Ichor's Cilium; any other CNI is refused
unless --cni-unmanaged (spec.cni.preset: unmanaged, immutable): Ichor does not migrate a
CNI. A rerun resumes and exits 0 when done.
With --add-machine: runs inspect, trustcheck and drift over the listed addresses, then
(without --plan) hold apply
and hold release, in one process over the same documents: each TalosMachine is created
approved and held, its class A drift captured as a TalosConfigPatch, and the hold released
only after a live zero-drift check, control planes first, each waiting for Ready. The CLI
applies nothing to a node. The bundle defaults to the cluster's own Secret; a talosconfig for
a cluster Ichor made is written by kubectl ichor credentials NAME.
Before consent (with --plan too) each node dry-runs its machine's configuration, every
patch applied (ApplyConfiguration, nothing applied): a configuration the node rejects
blocks the machine with the node's words; --no-node-check skips it.
A machine of this cluster's PKI is added here; a machine another cluster configured is reset
and added with kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME.
A machine already adopted (an approved TalosMachine of its UUID) is reported and skipped, and
one an interrupted run left held is released after its zero-drift check: a rerun exits 0.
A refused or blocked machine stops alone: the others are written and released (exit 5).
)"),
    cli::text_block(R"(
  kubectl ichor adopt --talosconfig ./talosconfig --cni-unmanaged --plan
  kubectl ichor adopt --talosconfig ./talosconfig --nodes 10.0.0.2,10.0.0.3,10.0.0.4 --cni-unmanaged --yes --parallel 2
  kubectl ichor credentials prod
  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod --plan
  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod --yes
  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig tc --keep-stages ./stages --plan
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    cli::add_output_flags(opts);
    opts.add_options("Adopt")("add-machine", "a node to add (repeatable)",
                              cxxopts::value<std::vector<std::string>>(), "ADDRESS")(
        "plan", "stop after drift and print the plan")("yes", "consent without a prompt")(
        "explain", "print the equivalent pipeline of single tools")(
        "no-node-check", "do not dry-run each machine's configuration on its node")(
        "keep-stages", "write each stage's document into DIR", cxxopts::value<std::string>(),
        "DIR");
    cli::add_bundle_flags(opts, true, "default: its Secret; a whole cluster: recovered", "Adopt");
    opts.add_options("Whole cluster")("nodes", "the cluster's nodes (default: the context's)",
                                      cxxopts::value<std::vector<std::string>>(), "ADDR,...")(
        "cni-unmanaged", "leave the CNI as the nodes have it (spec.cni.preset: unmanaged)")(
        "cilium-values", "Cilium Helm values for a takeover or install (spec.cni.cilium.values)",
        cxxopts::value<std::string>(), "FILE")(
        "accept-cilium-diff", "consent to the preflight's differences from the live Cilium")(
        "parallel", "workers released at once, each wave waiting for Ready",
        cxxopts::value<int>()->default_value("1"), "N");
    opts.add_options("Adopt")("backup-dir", "where live configurations are saved",
                              cxxopts::value<std::string>()->default_value("ichor-backups"), "DIR")(
        "timeout", "how long to wait for each machine to be Ready",
        cxxopts::value<std::string>()->default_value("15m"), "DURATION");
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            o.kube = cli::to_kube_options(r, true);
            auto talos = cli::to_talos_options(r, false);
            auto out = cli::to_output_options(r);
            if (!talos || !out) {
                return !talos ? talos.error() : out.error();
            }
            o.talos = *talos;
            o.output = *out;
            auto timeout = util::parse_duration_ms(r["timeout"].as<std::string>());
            o.timeout_ms = timeout.value_or(0);
            o.add_machines = cli::strings_flag(r, "add-machine");
            o.plan_only = r.count("plan") != 0;
            o.yes = r.count("yes") != 0;
            o.explain = r.count("explain") != 0;
            o.node_check = r.count("no-node-check") == 0;
            o.keep_stages = cli::string_flag(r, "keep-stages");
            o.backup_dir = r["backup-dir"].as<std::string>();
            o.nodes = cli::strings_flag(r, "nodes");
            o.cni_unmanaged = r.count("cni-unmanaged") != 0;
            o.cilium_values = cli::string_flag(r, "cilium-values");
            o.accept_cilium_diff = r.count("accept-cilium-diff") != 0;
            const std::string cilium =
                cli::first_set({{!o.cilium_values.empty(), "--cilium-values"},
                                {o.accept_cilium_diff, "--accept-cilium-diff"}});
            o.parallel = r["parallel"].as<int>();
            o.bundle = cli::bundle_flags(r, true);
            const auto& b = o.bundle;
            const bool whole = o.add_machines.empty();
            const std::string only_whole = cli::first_set({{!o.nodes.empty(), "--nodes"},
                                                           {o.cni_unmanaged, "--cni-unmanaged"},
                                                           {!cilium.empty(), cilium}});
            const std::string add = "kubectl ichor adopt --cluster NAME --add-machine ADDRESS";
            // A whole cluster recovers from its first control plane without --recover-from.
            if (auto e = cli::first_refusal(
                    {{!timeout, "--timeout is not a duration"},
                     {o.cni_unmanaged && !cilium.empty(),
                      cilium + " cannot be used with --cni-unmanaged: Ichor renders no Cilium for "
                               "an unmanaged CNI",
                      "drop " + cilium},
                     {o.parallel < 1, "--parallel must be 1 or more"},
                     {whole && !b.file.empty() && (b.recover || !b.recover_from.empty()),
                      "give --secrets-bundle or --recover-secrets, not both"},
                     {whole && !b.recover_from.empty() && !b.recover,
                      "--recover-from goes with --recover-secrets",
                      "kubectl ichor adopt --talosconfig FILE --recover-secrets --recover-from "
                      "CONTROL-PLANE"},
                     {!whole && !only_whole.empty(),
                      only_whole + " is for a whole cluster; with --add-machine the addresses are "
                                   "the machines to add",
                      add + " --talosconfig FILE"},
                     {!whole && o.kube.cluster.empty(),
                      "--cluster NAME is required with --add-machine",
                      add + " --talosconfig FILE"}})) {
                return *e;
            }
            if (whole) {
                return o;
            }
            auto bundle = cli::to_bundle_options(
                r, true, add + " --recover-secrets --recover-from CONTROL-PLANE");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            return o;
        });
}

std::string explain(const Options& o) {
    return stages::explain_adoption({o.kube.ns, o.talos.talosconfig, o.kube.cluster, o.bundle.file,
                                     o.bundle.recover, o.bundle.recover_from, o.add_machines,
                                     o.nodes, o.plan_only, o.yes, o.node_check, o.cni_unmanaged,
                                     o.cilium_values, o.accept_cilium_diff, o.parallel});
}

namespace {

// Connects, loads the talosconfig and reads the inputs in the order the refusals are owed (a bad
// values file before anything is read, a missing TalosCluster before the talosconfig), then runs
// the flow over the real seams and prints what it leaves.
stages::Outcome execute(const Options& o, cli::Streams& s) {
    const bool whole = o.add_machines.empty();
    if (o.explain) {
        s.out << explain(o);
        return {};
    }
    auto flags = stages::cni_flags(o.cni_unmanaged, o.cilium_values); // none with --add-machine
    if (!flags) {
        return stages::failed(flags.error());
    }
    auto k = o.kube.connect(s, "adopt");
    if (!k) {
        return stages::failed(k.error());
    }
    auto objects = stages::objects_over(**k);
    std::variant<stages::ClusterToAdopt, stages::MachinesToAdd> input;
    if (!whole) {
        auto cluster = stages::get_cluster(*objects, o.kube.cluster);
        if (!cluster) {
            return stages::failed(cluster.error());
        }
        const stages::BundleSource bundle{o.bundle.file, o.bundle.recover_from,
                                          o.bundle.recover_to};
        input = stages::MachinesToAdd{o.kube.cluster, *cluster, o.add_machines, bundle};
    }
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    if (whole) {
        auto nodes = stages::cluster_nodes(o.nodes, ctx->context.nodes);
        if (!nodes) {
            return stages::failed(nodes.error());
        }
        input = stages::ClusterToAdopt{
            o.kube.cluster,      *nodes, o.bundle.file,        o.bundle.recover_from,
            o.bundle.recover_to, *flags, o.accept_cilium_diff, o.parallel};
    }
    auto ep = o.talos.endpoint_for(ctx->context);
    if (!ep) {
        return stages::failed(ep.error());
    }
    cli::StreamReporter report(s, "adopt");
    const stages::RealWorld real = stages::world_over(
        **k, *objects, {ctx->context, ctx->path, *ep, o.talos.call_timeout_ms, o.talos.concurrency},
        report, [&s, &o](const std::string& what, const std::vector<std::string>& lines) {
            return cli::obtain_consent(s, what, lines, o.yes);
        });
    stages::Adopted out;
    const stages::AdoptOptions flow{o.plan_only,  o.yes,        o.node_check,       o.keep_stages,
                                    o.backup_dir, o.timeout_ms, o.talos.concurrency};
    stages::Outcome outcome = stages::adopt(input, flow, real.world, out);
    auto table = out.plan ? stages::plan_table : nullptr;
    auto st = out.write ? cli::write_list(s, o.output, std::move(out.list), table) : Status(Ok{});
    return st ? outcome : stages::failed(st.error());
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::adopt
