#include "tools/hold/hold.h"

#include "common/cli/consent.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/stages/hold.h"
#include "common/stages/sources.h"
#include "common/util/clock.h"
#include "common/util/strings.h"

#include <ctime>
#include <ostream>

namespace ichor::tools::hold {

namespace {

const cli::ToolInfo k_info{
    "hold",
    "Write a plan as held machines, release them after a live zero-drift check, or abort.",
    cli::text_block(R"(
kubectl ichor hold apply [-f PLAN|-] --talosconfig FILE [--yes] [--backup-dir DIR]
  kubectl ichor hold release --cluster NAME --talosconfig FILE [--machine NAME...] [--timeout 15m]
  kubectl ichor hold abort --cluster NAME [--machine NAME...])"),
    cli::text_block(R"(
apply: a machine the plan refused or blocked is named and not written, the others are (exit
5); a plan whose own refusal stops it is refused. Lists the class B changes and asks for consent
(typed on the terminal, or --yes); reads each machine's configuration again and refuses a
stale plan (a node, the TalosCluster or a patch changed since the plan), naming what changed;
saves each configuration as the node returned it, secrets included, to --backup-dir (0700,
files 0600); then creates each TalosMachine approved and held
(ichor.maesh.dev/hold-apply) and its patches. A rerun of the same plan converges.
release: for held machines, control planes first, one at a time: inspect the node again, check
its trust, plan it with every patch (only consented class B may remain), remove the hold,
wait until Ready without AdoptionHeld. A machine that fails is named; the others go on.
abort: removes held machines and their patches that this suite created (allow-delete first);
touches no node.
)"),
    cli::text_block(R"(
  kubectl ichor drift --cluster prod -f trusted.yaml > plan.yaml
  kubectl ichor hold apply -f plan.yaml --talosconfig talosconfig-prod
  kubectl ichor hold release --cluster prod --talosconfig talosconfig-prod
  kubectl ichor hold abort --cluster prod --machine prod-w-2
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
    opts.add_options("Hold")("yes", "apply: consent without a prompt")(
        "backup-dir", "apply: where live configurations are saved",
        cxxopts::value<std::string>()->default_value("ichor-backups"), "DIR");
    cli::add_bundle_flags(opts, false, "default: the cluster's Secret", "Hold");
    opts.add_options("Hold")("machine", "release, abort: only this machine (repeatable)",
                             cxxopts::value<std::vector<std::string>>(), "NAME")(
        "timeout", "release: how long to wait for each machine to be Ready",
        cxxopts::value<std::string>()->default_value("15m"), "DURATION")(
        "action", "", cxxopts::value<std::vector<std::string>>(), "apply|release|abort");
    opts.parse_positional({"action"});
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            auto actions = cli::strings_flag(r, "action");
            if (actions.size() != 1 ||
                (actions[0] != "apply" && actions[0] != "release" && actions[0] != "abort")) {
                return cli::usage_error("give one action: apply, release or abort",
                                        "kubectl ichor hold --help");
            }
            o.action = actions[0];
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
            o.input = cli::to_input_options(r);
            o.yes = r.count("yes") != 0;
            o.backup_dir = r["backup-dir"].as<std::string>();
            auto bundle = cli::to_bundle_options(r, false, "");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            o.machines = cli::strings_flag(r, "machine");
            if (o.action != "apply" && o.kube.cluster.empty()) {
                return cli::usage_error("--cluster is required for hold " + o.action,
                                        "kubectl ichor hold " + o.action + " --cluster NAME");
            }
            return o;
        });
}

namespace {

stages::Outcome do_apply(const Options& o, stages::IchorObjects& objects,
                         stages::ObjectsFactory writers, cli::Streams& s) {
    auto plan = cli::read_input(s, o.input, "hold", "a plan from kubectl ichor drift");
    if (!plan) {
        return stages::failed(plan.error());
    }
    if (auto st = stages::check_plan_writable(*plan); !st) {
        return stages::failed(st.error());
    }
    int count = 0;
    for (const auto& i : plan->items) {
        count += i.value("apiVersion", "") == doc::k_ichor_api ? 1 : 0;
    }
    std::string what =
        "create " + std::to_string(count) + " held object(s) in namespace " + objects.ns();
    if (auto st = cli::obtain_consent(s, what, stages::consent_lines(*plan), o.yes); !st) {
        return stages::failed(st.error());
    }
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    auto ep = o.talos.endpoint_for(ctx->context);
    if (!ep) {
        return stages::failed(ep.error());
    }
    stages::ApplyOptions ao;
    ao.objects = &objects;
    ao.read_configs = stages::configs_reader(ctx->context, *ep, o.talos.call_timeout_ms);
    ao.read_concurrency = o.talos.concurrency;
    ao.write_concurrency = o.talos.concurrency;
    ao.writers = std::move(writers);
    ao.backup_dir = o.backup_dir;
    ao.now_rfc3339 = util::now_rfc3339();
    cli::StreamReporter report(s, "hold");
    ao.report = &report;
    // A whole-cluster plan's bundle Secret carries no data: it is written from --secrets-bundle.
    bundle::Bundle given;
    if (!o.bundle.file.empty()) {
        auto b = o.bundle.load(s, "hold", {});
        if (!b) {
            return stages::failed(b.error());
        }
        given = *b;
        ao.bundle = &given;
    }
    doc::ResourceList list = std::move(*plan);
    stages::Outcome out = stages::hold_apply(list, ao);
    if (out.error) {
        return out;
    }
    if (auto st = cli::write_list(s, o.output, list, nullptr); !st) {
        return stages::failed(st.error());
    }
    return out;
}

stages::Outcome do_release(const Options& o, kube::Client& kube, stages::IchorObjects& objects,
                           cli::Streams& s) {
    auto cluster = stages::get_cluster(kube, o.kube.cluster, kube.ns());
    if (!cluster) {
        return stages::failed(cluster.error());
    }
    auto b = o.bundle.load(s, "hold",
                           {nullptr, &kube, &*cluster, o.kube.cluster, o.talos.call_timeout_ms});
    if (!b) {
        return stages::failed(b.error());
    }
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    cli::StreamReporter report(s, "hold");
    auto ro = stages::release_options(objects, o.kube.cluster, o.machines, ctx->context, ctx->path,
                                      o.talos.call_timeout_ms, *b, *cluster, o.timeout_ms);
    // The live check reads each node as inspect does: through --endpoints, or the context's
    // endpoint when it names nodes.
    auto ep = o.talos.endpoint_for(ctx->context);
    if (!ep) {
        return stages::failed(ep.error());
    }
    ro.inspect.endpoint = *ep;
    ro.report = &report;
    doc::ResourceList list;
    stages::Outcome out = stages::hold_release(list, ro);
    report.end_status();
    if (out.error) {
        return out;
    }
    if (auto st = cli::write_list(s, o.output, list, nullptr); !st) {
        return stages::failed(st.error());
    }
    return out;
}

stages::Outcome do_abort(const Options& o, stages::IchorObjects& objects, cli::Streams& s) {
    doc::ResourceList list;
    stages::Outcome out = stages::hold_abort(list, {&objects, o.kube.cluster, o.machines});
    if (out.error) {
        return out;
    }
    if (auto st = cli::write_list(s, o.output, list, nullptr); !st) {
        return stages::failed(st.error());
    }
    return out;
}

stages::Outcome execute(const Options& o, cli::Streams& s) {
    auto k = o.kube.connect(s, "hold");
    if (!k) {
        return stages::failed(k.error());
    }
    auto objects = stages::objects_over(**k);
    if (o.action == "apply") {
        return do_apply(o, *objects, stages::writers_over(**k), s);
    }
    if (o.action == "release") {
        return do_release(o, **k, *objects, s);
    }
    return do_abort(o, *objects, s);
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::hold
