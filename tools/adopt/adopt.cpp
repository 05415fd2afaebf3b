#include "tools/adopt/adopt.h"

#include "common/cli/consent.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/doc/vocabulary.h"
#include "common/stages/hold.h"
#include "common/stages/inspect.h"
#include "common/stages/node_check.h"
#include "common/stages/objects.h"
#include "common/stages/plan.h"
#include "common/stages/sources.h"
#include "common/stages/trust.h"
#include "common/util/clock.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

#include <ctime>
#include <ostream>

namespace ichor::tools::adopt {

namespace {

const cli::ToolInfo k_info{
    "adopt",
    "Adopt a running Talos cluster that Ichor did not make, or add machines that already run a "
    "configuration signed by an Ichor cluster's CAs, without a reset.",
    "kubectl ichor adopt --talosconfig FILE [--nodes ADDR,...] [--cluster NAME] [-n ichor-system]\n"
    "      [--secrets-bundle FILE | --recover-secrets [--recover-from CONTROL-PLANE]\n"
    "      [--recover-to FILE]] [--cni-unmanaged | --cilium-values FILE] [--accept-cilium-diff]\n"
    "      [--plan] [--yes] [--parallel N]\n"
    "      [--keep-stages DIR] [--explain]\n"
    "  kubectl ichor adopt --cluster NAME --add-machine ADDRESS [--add-machine ADDRESS...]\n"
    "      --talosconfig FILE [--plan] [--yes] [--secrets-bundle FILE | --recover-secrets\n"
    "      --recover-from ADDRESS] [-n NS] [--keep-stages DIR] [--explain] [--timeout 15m]\n"
    "      [--no-node-check]",
    "Without --add-machine: the whole cluster of the nodes given (--nodes, else the talosconfig\n"
    "context's). Every node is read, the cluster is checked (one cluster ID, one Talos version,\n"
    "etcd healthy with quorum, a Ready Node per node, the Ichor API served), the bundle is\n"
    "recovered read-only from the first control plane (or --secrets-bundle), and the plan writes\n"
    "the bundle Secret, a TalosCluster built from the live cluster, the class A drift as\n"
    "cluster, role and machine TalosConfigPatches, and a held TalosMachine per node; the holds\n"
    "are released after a live zero-drift check, control planes one at a time, then the\n"
    "workers in waves of --parallel. The CNI is detected: Cilium (ipam.mode kubernetes) is\n"
    "taken over after a preflight that compares it with Ichor's render (its values from the\n"
    "Helm release record, else --cilium-values FILE; a difference is refused unless\n"
    "--accept-cilium-diff); a cluster without a CNI gets Ichor's Cilium; any other CNI is refused\n"
    "unless --cni-unmanaged (spec.cni.preset: unmanaged, immutable): Ichor does not migrate a\n"
    "CNI. A rerun resumes and exits 0 when done.\n"
    "With --add-machine: runs inspect, trustcheck and drift over the listed addresses, then\n"
    "(without --plan) hold apply\n"
    "and hold release, in one process over the same documents: each TalosMachine is created\n"
    "approved and held, its class A drift captured as a TalosConfigPatch, and the hold released\n"
    "only after a live zero-drift check, control planes first, each waiting for Ready. The CLI\n"
    "applies nothing to a node. The bundle defaults to the cluster's own Secret; a talosconfig "
    "for\n"
    "a cluster Ichor made is written by kubectl ichor credentials NAME.\n"
    "Before consent (with --plan too) each node dry-runs its machine's configuration, every\n"
    "patch applied (ApplyConfiguration, nothing applied): a configuration the node rejects\n"
    "blocks the machine with the node's words; --no-node-check skips it.\n"
    "A machine of this cluster's PKI is added here; a machine another cluster configured is reset\n"
    "and added with kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME.\n"
    "A machine already adopted (an approved TalosMachine of its UUID) is reported and skipped, "
    "and\n"
    "one an interrupted run left held is released after its zero-drift check: a rerun exits 0.\n"
    "A refused or blocked machine stops alone: the others are written and released (exit 5).\n",
    "  kubectl ichor adopt --talosconfig ./talosconfig --cni-unmanaged --plan\n"
    "  kubectl ichor adopt --talosconfig ./talosconfig --nodes 10.0.0.2,10.0.0.3,10.0.0.4 "
    "--cni-unmanaged --yes --parallel 2\n"
    "  kubectl ichor credentials prod\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod "
    "--plan\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod "
    "--yes\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig tc --keep-stages "
    "./stages --plan\n",
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
            auto timeout = util::parse_duration_ms(r["timeout"].as<std::string>());
            if (!talos || !out || !timeout) {
                return !talos ? talos.error()
                       : !out ? out.error()
                              : cli::usage_error("--timeout is not a duration");
            }
            o.talos = *talos;
            o.output = *out;
            o.timeout_ms = *timeout;
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
            if (o.cni_unmanaged && (!o.cilium_values.empty() || o.accept_cilium_diff)) {
                return cli::usage_error(
                    std::string(!o.cilium_values.empty() ? "--cilium-values"
                                                         : "--accept-cilium-diff") +
                        " cannot be used with --cni-unmanaged: Ichor renders no Cilium for an "
                        "unmanaged CNI",
                    !o.cilium_values.empty() ? "drop --cilium-values"
                                             : "drop --accept-cilium-diff");
            }
            o.parallel = r["parallel"].as<int>();
            if (o.parallel < 1) {
                return cli::usage_error("--parallel must be 1 or more");
            }
            if (o.add_machines.empty()) {
                // A whole cluster: --recover-from is optional (the first control plane).
                o.bundle.file = cli::string_flag(r, "secrets-bundle");
                o.bundle.recover = r.count("recover-secrets") != 0;
                o.bundle.recover_from = cli::string_flag(r, "recover-from");
                o.bundle.recover_to = cli::string_flag(r, "recover-to");
                if (!o.bundle.file.empty() &&
                    (o.bundle.recover || !o.bundle.recover_from.empty())) {
                    return cli::usage_error("give --secrets-bundle or --recover-secrets, not both");
                }
                if (!o.bundle.recover_from.empty() && !o.bundle.recover) {
                    return cli::usage_error("--recover-from goes with --recover-secrets",
                                            "kubectl ichor adopt --talosconfig FILE "
                                            "--recover-secrets --recover-from CONTROL-PLANE");
                }
                return o;
            }
            if (!o.nodes.empty() || o.cni_unmanaged || !o.cilium_values.empty() ||
                o.accept_cilium_diff) {
                return cli::usage_error(
                    std::string(!o.nodes.empty()           ? "--nodes"
                                : o.cni_unmanaged          ? "--cni-unmanaged"
                                : !o.cilium_values.empty() ? "--cilium-values"
                                                           : "--accept-cilium-diff") +
                        " is for a whole cluster; with --add-machine the addresses are the "
                        "machines to add",
                    "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --talosconfig FILE");
            }
            if (o.kube.cluster.empty()) {
                return cli::usage_error(
                    "--cluster NAME is required with --add-machine",
                    "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --talosconfig FILE");
            }
            auto bundle = cli::to_bundle_options(
                r, true,
                "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --recover-secrets "
                "--recover-from CONTROL-PLANE");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            return o;
        });
}

std::string explain(const Options& o) {
    std::string ns = o.kube.ns.empty() ? "" : " -n " + o.kube.ns;
    std::string tc = o.talos.talosconfig.empty() ? "" : " --talosconfig " + o.talos.talosconfig;
    std::string bundle = !o.bundle.file.empty() ? " --secrets-bundle " + o.bundle.file : "";
    if (o.bundle.recover) {
        bundle = " --recover-secrets --recover-from " + o.bundle.recover_from + tc;
    }
    std::string s = "kubectl ichor inspect " + util::join(o.add_machines, " ") + tc + " \\\n" +
                    " | kubectl ichor trustcheck --cluster " + o.kube.cluster + ns + bundle +
                    " \\\n" + " | kubectl ichor drift --cluster " + o.kube.cluster + ns +
                    (o.bundle.file.empty() ? "" : " --secrets-bundle " + o.bundle.file) +
                    " --add-machine" + (o.node_check ? " --node-check" + tc : "") +
                    " > plan.yaml\n";
    if (!o.plan_only) {
        s += "kubectl ichor hold apply -f plan.yaml" + ns + tc + (o.yes ? " --yes" : "") + "\n";
        s += "kubectl ichor hold release --cluster " + o.kube.cluster + ns + tc + "\n";
    }
    return s;
}

namespace {

struct Context {
    std::unique_ptr<kube::Client> kube;
    std::unique_ptr<stages::IchorObjects> objects;
    doc::Value cluster;
    talos::TalosContext talos;
    std::string talosconfig_path;
    // How every node is reached, inspect, recovery and release alike (TalosOptions::endpoint_for).
    std::optional<talos::Address> endpoint;
    bundle::Bundle bundle;
    std::vector<doc::Value> machines; // the namespace's TalosMachines, as the plan read them
};

Result<Context> prepare(const Options& o, cli::Streams& s) {
    Context c;
    auto k = o.kube.connect(s, "adopt");
    if (!k) {
        return k.error();
    }
    c.kube = std::move(*k);
    c.objects = stages::objects_over(*c.kube);
    auto cluster = stages::get_cluster(*c.kube, o.kube.cluster, c.kube->ns());
    if (!cluster) {
        return cluster.error();
    }
    c.cluster = *cluster;
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return ctx.error();
    }
    c.talos = ctx->context;
    c.talosconfig_path = ctx->path;
    auto ep = o.talos.endpoint_for(c.talos);
    if (!ep) {
        return ep.error();
    }
    c.endpoint = *ep;
    auto b = o.bundle.load(
        s, "adopt",
        {&c.talos, c.kube.get(), &c.cluster, o.kube.cluster, o.talos.call_timeout_ms, c.endpoint});
    if (!b) {
        return b.error();
    }
    c.bundle = *b;
    return c;
}

Status keep(const Options& o, const std::string& name, const doc::ResourceList& list) {
    return keep_stage(o.keep_stages, name, list);
}

// inspect, trustcheck, drift: the plan, exactly as the pipe of the three tools writes it. The
// outcome is the plan's; an error stops the run.
stages::Outcome make_plan(const Options& o, Context& c, doc::ResourceList& list) {
    stages::InspectOptions io;
    for (const auto& text : o.add_machines) {
        auto a = talos::parse_address(text);
        if (!a) {
            return stages::failed(a.error());
        }
        io.addresses.push_back(*a);
    }
    io.context = c.talos;
    io.talosconfig_path = c.talosconfig_path;
    io.endpoint = c.endpoint;
    io.call_timeout_ms = o.talos.call_timeout_ms;
    io.concurrency = o.talos.concurrency;
    stages::inspect(list, io);
    Status st = keep(o, "1-inspect.yaml", list);
    stages::check_trust(list, {&c.bundle, o.kube.cluster, c.kube->ns()});
    st = st ? keep(o, "2-trustcheck.yaml", list) : st;
    auto patches = c.objects->list("talosconfigpatches");
    auto machines = patches ? c.objects->list("talosmachines")
                            : Result<std::vector<doc::Value>>(patches.error());
    if (!st || !machines) {
        return stages::failed(!st ? st.error() : machines.error());
    }
    c.machines = *machines;
    stages::Outcome planned = stages::plan(list, {o.kube.cluster, c.kube->ns(), true, &c.cluster,
                                                  &c.bundle, *patches, std::move(*machines)});
    if (planned.error) {
        return planned;
    }
    if (auto kst = keep(o, "3-plan.yaml", list); !kst) {
        return stages::failed(kst.error());
    }
    if (!o.node_check) {
        return planned;
    }
    // Before consent, each node confirms its machine's configuration (a dry run, nothing applied).
    stages::NodeCheckOptions nc{o.kube.cluster,      c.kube->ns(), &c.cluster, &c.bundle,
                                std::move(*patches), io,           {}};
    planned = stages::with_node_check(planned, stages::node_check(list, nc));
    if (auto kst = keep(o, "4-node-check.yaml", list); !kst && !planned.error) {
        return stages::failed(kst.error());
    }
    return planned;
}

// The machines of this cluster that the plan skipped as already adopted and that still carry the
// hold: an earlier run was interrupted between its write and its release. A rerun releases them
// after the same zero-drift check (ADR 0128 decision 1 step 3, "idempotent rerun").
std::vector<std::string> left_held(const Options& o, const Context& c,
                                   const doc::ResourceList& plan) {
    std::vector<std::string> names;
    for (const auto& item : plan.items) {
        const std::string uuid = util::to_lower(doc::get_string(item, "status.identity.uuid"));
        if (item.value("kind", "") != "Inspection" || uuid.empty()) {
            continue;
        }
        for (const auto& m : c.machines) {
            const doc::Value* a = doc::find_path(m, "metadata.annotations");
            if (util::to_lower(doc::get_string(m, "spec.identity.uuid")) == uuid &&
                doc::get_string(m, "spec.cluster") == o.kube.cluster &&
                doc::get_string(m, "spec.approval") == "Approved" && a != nullptr &&
                a->is_object() && a->contains(std::string(vocab::k_annotation_hold_apply))) {
                names.push_back(doc::get_string(m, "metadata.name"));
            }
        }
    }
    return names;
}

// The plan's own findings about the nodes nothing is written for (skipped, refused, blocked),
// carried into the final document so that each is named where the outcome is reported.
void carry_stopped(const doc::ResourceList& plan, doc::ResourceList& out) {
    for (const auto& r : plan.results) {
        const std::string code = r["tags"].value(std::string(vocab::k_tag_code), "");
        if (r.value("severity", "") == "error" || code == "AlreadyAdopted") {
            out.results.push_back(r);
        }
    }
    stages::note_stages_run(out, plan.stages_run);
}

stages::Outcome release_only(const Options& o, Context& c, const doc::ResourceList& plan,
                             const std::vector<std::string>& held, cli::Streams& s) {
    doc::ResourceList out;
    stages::Outcome release;
    if (!held.empty()) {
        cli::StreamReporter report(s, "adopt");
        report.step("Release " + util::join(held, ", ") +
                    ", held by an earlier run, after the zero-drift check");
        auto ro =
            stages::release_options(*c.objects, o.kube.cluster, held, c.talos, c.talosconfig_path,
                                    o.talos.call_timeout_ms, c.bundle, c.cluster, o.timeout_ms);
        ro.report = &report;
        release = stages::hold_release(out, ro);
        report.end_status();
        if (release.error) {
            return release;
        }
    }
    carry_stopped(plan, out);
    if (auto st = cli::write_list(s, o.output, out, nullptr); !st) {
        return stages::failed(st.error());
    }
    return release;
}

stages::Outcome apply_and_release(const Options& o, Context& c, doc::ResourceList plan,
                                  const std::vector<std::string>& held, cli::Streams& s) {
    std::vector<std::string> names;
    for (const auto& i : plan.items) {
        if (i.value("kind", "") == "TalosMachine") {
            names.push_back(doc::get_string(i, "metadata.name"));
        }
    }
    const doc::ResourceList planned = plan;
    std::string what = "create " + std::to_string(names.size()) + " held TalosMachine(s) (" +
                       util::join(names, ", ") + ") and their patches in namespace " + c.kube->ns();
    if (auto st = cli::obtain_consent(s, what, stages::consent_lines(plan), o.yes); !st) {
        return stages::failed(st.error());
    }
    cli::StreamReporter report(s, "adopt");
    stages::ApplyOptions ao{c.objects.get(), o.backup_dir, util::now_rfc3339(), &report};
    auto ep = o.talos.endpoint_for(c.talos);
    if (!ep) {
        report.end_status();
        return stages::failed(ep.error());
    }
    ao.read_config = stages::config_reader(c.talos, *ep, o.talos.call_timeout_ms);
    ao.read_configs = stages::configs_reader(c.talos, *ep, o.talos.call_timeout_ms);
    ao.write_concurrency = o.talos.concurrency;
    ao.writers = stages::writers_over(*c.kube);
    doc::ResourceList applied = std::move(plan);
    stages::Outcome apply = stages::hold_apply(applied, ao);
    if (apply.error) {
        report.end_status();
        return apply;
    }
    names.insert(names.end(), held.begin(), held.end());
    auto ro =
        stages::release_options(*c.objects, o.kube.cluster, names, c.talos, c.talosconfig_path,
                                o.talos.call_timeout_ms, c.bundle, c.cluster, o.timeout_ms);
    ro.inspect.endpoint = c.endpoint;
    ro.report = &report;
    doc::ResourceList out;
    stages::Outcome release = stages::hold_release(out, ro);
    report.end_status();
    if (release.error) {
        return release;
    }
    carry_stopped(planned, out);
    for (auto& r : applied.results) {
        out.results.push_back(r);
    }
    stages::note_stages_run(out, applied.stages_run);
    if (auto st = cli::write_list(s, o.output, out, nullptr); !st) {
        return stages::failed(st.error());
    }
    // The adoption's outcome: the machines released, and every machine that stopped in either
    // step (refused or blocked by the plan, or a conflict at apply; a failed check or wait at
    // release): some released and some stopped is partial (exit 5).
    release.stopped += apply.stopped;
    return release;
}

// The plan already refuses the whole run in a result of its own (NothingWritten, NothingToAdopt):
// a second "nothing was written" line would say the same thing again.
bool refused_whole(const doc::ResourceList& plan) {
    for (const auto& r : plan.results) {
        const std::string code = r["tags"].value(std::string(vocab::k_tag_code), "");
        if (r.value("severity", "") == "error" &&
            (code == "NothingWritten" || code == "NothingToAdopt")) {
            return true;
        }
    }
    return false;
}

stages::Outcome execute(const Options& o, cli::Streams& s) {
    if (o.add_machines.empty()) {
        return adopt_cluster(o, s);
    }
    if (o.explain) {
        s.out << explain(o);
        return {};
    }
    auto c = prepare(o, s);
    if (!c) {
        return stages::failed(c.error());
    }
    doc::ResourceList plan;
    stages::Outcome planned = make_plan(o, *c, plan);
    if (planned.error) {
        return planned;
    }
    if (o.plan_only || refused_whole(plan)) {
        if (auto st = cli::write_list(s, o.output, plan, stages::plan_table); !st) {
            return stages::failed(st.error());
        }
        if (!o.plan_only) {
            planned.done = 0; // nothing was written, as the plan's own refusal says
        }
        return planned;
    }
    // Class C blocks that machine, not the run: the writable machines go on, and each refused or
    // blocked one is named and counted (exit 5). A machine already adopted is skipped, and one an
    // interrupted run left held is released now (a rerun converges and exits 0).
    const std::vector<std::string> held = left_held(o, *c, plan);
    if (planned.done == 0 && held.empty() && planned.stopped > 0) {
        if (auto st = cli::write_list(s, o.output, plan, stages::plan_table); !st) {
            return stages::failed(st.error());
        }
        return stages::failed(make_error(
            ErrorKind::Findings,
            "every machine is refused or blocked (see the results above); " +
                std::string(vocab::k_nothing_written),
            "kubectl ichor adopt ... --plan, then fix what the results name", "NothingWritten"));
    }
    if (planned.done == 0) {
        stages::Outcome rerun = release_only(o, *c, plan, held, s);
        rerun.skipped += planned.skipped;
        rerun.stopped += planned.stopped;
        return rerun;
    }
    return apply_and_release(o, *c, std::move(plan), held, s);
}

} // namespace

Status keep_stage(const std::string& dir, const std::string& name, const doc::ResourceList& list) {
    if (dir.empty()) {
        return ok_status();
    }
    ::mkdir(dir.c_str(), 0700);
    return util::write_file_atomic(dir + "/" + name, doc::to_yaml(list.to_value()), 0600);
}

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::adopt
