#include "tools/adopt/adopt.h"

#include "common/cli/consent.h"
#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/stages/hold.h"
#include "common/stages/inspect.h"
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
    "Add machines that already run a configuration signed by an Ichor cluster's CAs, without a "
    "reset.",
    "kubectl ichor adopt --cluster NAME --add-machine ADDRESS [--add-machine ADDRESS...]\n"
    "      --talosconfig FILE [--plan] [--yes] [--secrets-bundle FILE | --recover-secrets\n"
    "      --recover-from ADDRESS] [-n NS] [--keep-stages DIR] [--explain] [--timeout 15m]",
    "Runs inspect, trustcheck and drift over the listed addresses, then (without --plan) hold "
    "apply\n"
    "and hold release, in one process over the same documents: each TalosMachine is created\n"
    "approved and held, its class A drift captured as a TalosConfigPatch, and the hold released\n"
    "only after a live zero-drift check, control planes first, each waiting for Ready. The CLI\n"
    "applies nothing to a node. The bundle defaults to the cluster's own Secret; a talosconfig "
    "for\n"
    "a cluster Ichor made is written by kubectl ichor credentials NAME.\n"
    "A machine of this cluster's PKI is added here; a machine another cluster configured is reset\n"
    "and added with kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME.\n",
    "  kubectl ichor credentials prod\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod "
    "--plan\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod "
    "--yes\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig tc --keep-stages "
    "./stages --plan\n",
};

std::string str(const cxxopts::ParseResult& r, const char* name) {
    return r.count(name) != 0 ? r[name].as<std::string>() : std::string();
}

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
        "keep-stages", "write each stage's document into DIR", cxxopts::value<std::string>(),
        "DIR")("secrets-bundle", "the cluster's secrets bundle (default: its Secret)",
               cxxopts::value<std::string>(), "FILE")(
        "recover-secrets", "rebuild the bundle from a control plane's configuration")(
        "recover-from", "with --recover-secrets: the control plane", cxxopts::value<std::string>(),
        "ADDRESS")("recover-to", "where the recovered bundle is written (0600)",
                   cxxopts::value<std::string>(),
                   "FILE")("backup-dir", "where live configurations are saved",
                           cxxopts::value<std::string>()->default_value("ichor-backups"),
                           "DIR")("timeout", "how long to wait for each machine to be Ready",
                                  cxxopts::value<std::string>()->default_value("15m"), "DURATION");
    auto r = cli::parse_args(opts, args);
    if (!r) {
        return r.error();
    }
    cli::Parsed<Options> p;
    if (r->count("help") != 0 || r->count("version") != 0) {
        p.text = r->count("help") != 0 ? cli::help_text(k_info, opts) : cli::version_text(k_info);
        return p;
    }
    Options o;
    o.kube = cli::to_kube_options(*r, true);
    auto talos = cli::to_talos_options(*r, false);
    auto out = cli::to_output_options(*r);
    auto timeout = util::parse_duration_ms((*r)["timeout"].as<std::string>());
    if (!talos || !out || !timeout) {
        return !talos ? talos.error()
               : !out ? out.error()
                      : make_error(ErrorKind::Usage, "--timeout is not a duration", "", "Usage");
    }
    o.talos = *talos;
    o.output = *out;
    o.timeout_ms = *timeout;
    if (r->count("add-machine") != 0) {
        o.add_machines = (*r)["add-machine"].as<std::vector<std::string>>();
    }
    o.plan_only = r->count("plan") != 0;
    o.yes = r->count("yes") != 0;
    o.explain = r->count("explain") != 0;
    o.keep_stages = str(*r, "keep-stages");
    o.secrets_bundle = str(*r, "secrets-bundle");
    o.recover_secrets = r->count("recover-secrets") != 0;
    o.recover_from = str(*r, "recover-from");
    o.recover_to = str(*r, "recover-to");
    o.backup_dir = (*r)["backup-dir"].as<std::string>();
    if (o.kube.cluster.empty() || o.add_machines.empty()) {
        return make_error(
            ErrorKind::Usage, "--cluster NAME and at least one --add-machine ADDRESS are required",
            "kubectl ichor adopt --cluster NAME --add-machine ADDRESS --talosconfig FILE", "Usage");
    }
    if (o.recover_secrets != !o.recover_from.empty()) {
        return make_error(ErrorKind::Usage,
                          "--recover-secrets and --recover-from ADDRESS go together", "", "Usage");
    }
    if (o.recover_secrets && !o.secrets_bundle.empty()) {
        return make_error(ErrorKind::Usage, "give --secrets-bundle or --recover-secrets, not both",
                          "", "Usage");
    }
    p.options = std::move(o);
    return p;
}

std::string explain(const Options& o) {
    std::string ns = o.kube.ns.empty() ? "" : " -n " + o.kube.ns;
    std::string tc = o.talos.talosconfig.empty() ? "" : " --talosconfig " + o.talos.talosconfig;
    std::string bundle = !o.secrets_bundle.empty() ? " --secrets-bundle " + o.secrets_bundle : "";
    if (o.recover_secrets) {
        bundle = " --recover-secrets --recover-from " + o.recover_from + tc;
    }
    std::string s = "kubectl ichor inspect " + util::join(o.add_machines, " ") + tc + " \\\n" +
                    " | kubectl ichor trustcheck --cluster " + o.kube.cluster + ns + bundle +
                    " \\\n" + " | kubectl ichor drift --cluster " + o.kube.cluster + ns +
                    (o.secrets_bundle.empty() ? "" : " --secrets-bundle " + o.secrets_bundle) +
                    " --add-machine > plan.yaml\n";
    if (!o.plan_only) {
        s += "kubectl ichor hold apply -f plan.yaml" + ns + (o.yes ? " --yes" : "") + "\n";
        s += "kubectl ichor hold release --cluster " + o.kube.cluster + ns + tc + "\n";
    }
    return s;
}

namespace {

struct Context {
    std::unique_ptr<kube::Client> kube;
    doc::Value cluster;
    talos::TalosContext talos;
    std::string talosconfig_path;
    bundle::Bundle bundle;
};

Result<Context> prepare(const Options& o, cli::Streams& s) {
    auto warn = [&s](std::string_view m) { cli::report_warning(s, "adopt", m); };
    Context c;
    auto k =
        stages::connect_kube({o.kube.kubeconfig, o.kube.context, o.kube.ns}, s.env, s.in_tty, warn);
    if (!k) {
        return k.error();
    }
    c.kube = std::move(*k);
    auto cluster = stages::get_cluster(*c.kube, o.kube.cluster, c.kube->ns());
    if (!cluster) {
        return cluster.error();
    }
    c.cluster = *cluster;
    auto ctx = talos::load_context(o.talos.talosconfig, o.talos.context, s.env);
    if (!ctx) {
        return ctx.error();
    }
    c.talos = ctx->context;
    c.talosconfig_path = ctx->path;
    stages::BundleSource bs{o.secrets_bundle, o.recover_from,
                            o.recover_to.empty() ? o.kube.cluster + "-secrets.yaml" : o.recover_to,
                            o.talos.call_timeout_ms};
    auto b = stages::load_bundle(bs, &c.talos, c.kube.get(), &c.cluster, warn);
    if (!b) {
        return b.error();
    }
    c.bundle = *b;
    return c;
}

Result<std::vector<doc::Value>> items_of(kube::Client& k, const std::string& plural) {
    auto l = k.list(kube::ichor_path(plural, k.ns()));
    if (!l) {
        return l.error();
    }
    return std::vector<doc::Value>(l->at("items").begin(), l->at("items").end());
}

Status keep(const Options& o, const std::string& name, const doc::ResourceList& list) {
    if (o.keep_stages.empty()) {
        return ok_status();
    }
    ::mkdir(o.keep_stages.c_str(), 0700);
    return util::write_file_atomic(o.keep_stages + "/" + name, doc::to_yaml(list.to_value()), 0600);
}

// inspect, trustcheck, drift: the plan, exactly as the pipe of the three tools writes it.
Result<std::pair<doc::ResourceList, stages::PlanSummary>> make_plan(const Options& o, Context& c) {
    stages::InspectOptions io;
    for (const auto& text : o.add_machines) {
        auto a = talos::parse_address(text);
        if (!a) {
            return a.error();
        }
        io.addresses.push_back(*a);
    }
    io.context = c.talos;
    io.talosconfig_path = c.talosconfig_path;
    io.call_timeout_ms = o.talos.call_timeout_ms;
    io.concurrency = o.talos.concurrency;
    doc::ResourceList list = stages::inspect_nodes(io).list;
    Status st = keep(o, "1-inspect.yaml", list);
    stages::check_trust(list, c.bundle, {o.kube.cluster, c.kube->ns()});
    st = st ? keep(o, "2-trustcheck.yaml", list) : st;
    auto patches = items_of(*c.kube, "talosconfigpatches");
    auto machines = patches ? items_of(*c.kube, "talosmachines")
                            : Result<std::vector<doc::Value>>(patches.error());
    if (!machines || !st) {
        return !st ? st.error() : machines.error();
    }
    stages::PlanInputs in{&c.cluster, &c.bundle, std::move(*patches), std::move(*machines)};
    auto summary = stages::plan(list, in, {o.kube.cluster, c.kube->ns(), true});
    if (!summary) {
        return summary.error();
    }
    if (auto kst = keep(o, "3-plan.yaml", list); !kst) {
        return kst.error();
    }
    return std::make_pair(std::move(list), *summary);
}

int apply_and_release(const Options& o, Context& c, const doc::ResourceList& plan,
                      cli::Streams& s) {
    std::vector<std::string> names;
    for (const auto& i : plan.items) {
        if (i.value("kind", "") == "TalosMachine") {
            names.push_back(doc::get_string(i, "metadata.name"));
        }
    }
    std::string what = "create " + std::to_string(names.size()) + " held TalosMachine(s) (" +
                       util::join(names, ", ") + ") and their patches in namespace " + c.kube->ns();
    if (auto st = cli::obtain_consent(s, what, stages::consent_lines(plan), o.yes); !st) {
        return cli::fail(s, "adopt", st.error());
    }
    cli::Progress progress(s);
    stages::ApplyOptions ao{o.backup_dir, util::now_rfc3339(), nullptr,
                            [&progress](std::string_view m) { progress.announce(m); }};
    auto applied = stages::hold_apply(*c.kube, plan, ao);
    if (!applied) {
        return cli::fail(s, "adopt", applied.error());
    }
    auto ro = stages::release_options(o.kube.cluster, names, c.talos, c.talosconfig_path,
                                      o.talos.call_timeout_ms, c.bundle, c.cluster, o.timeout_ms);
    ro.progress = [&progress](std::string_view m) { progress.update(m); };
    ro.say = [&progress](std::string_view m) { progress.announce(m); };
    auto released = stages::hold_release(*c.kube, ro);
    progress.done();
    if (!released) {
        return cli::fail(s, "adopt", released.error());
    }
    doc::ResourceList out = released->list;
    for (auto& r : applied->list.results) {
        out.results.push_back(r);
    }
    if (auto st = cli::write_list(s, o.output, out, nullptr); !st) {
        return cli::fail(s, "adopt", st.error());
    }
    if (released->failed == 0 && applied->conflicts == 0) {
        return 0;
    }
    return cli::exit_code(released->released > 0 ? ErrorKind::Partial : ErrorKind::Findings);
}

} // namespace

int run(const std::vector<std::string>& args, cli::Streams& s) {
    auto parsed = parse_options(args);
    if (!parsed) {
        return cli::fail(s, "adopt", parsed.error());
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return 0;
    }
    const Options& o = *parsed->options;
    if (o.explain) {
        s.out << explain(o);
        return 0;
    }
    auto c = prepare(o, s);
    if (!c) {
        return cli::fail(s, "adopt", c.error());
    }
    auto planned = make_plan(o, *c);
    if (!planned) {
        return cli::fail(s, "adopt", planned.error());
    }
    auto& [plan, summary] = *planned;
    if (o.plan_only || plan.has_errors()) {
        if (auto st = cli::write_list(s, o.output, plan, stages::plan_table); !st) {
            return cli::fail(s, "adopt", st.error());
        }
        if (!o.plan_only) {
            cli::report_error(
                s, "adopt",
                make_error(ErrorKind::Findings,
                           "the plan has refused or blocked machines (see the results above); "
                           "nothing was written",
                           "kubectl ichor adopt ... --plan, then fix what the results name"));
            return cli::exit_code(ErrorKind::Findings);
        }
        return stages::plan_exit_code(summary);
    }
    return apply_and_release(o, *c, plan, s);
}

} // namespace ichor::tools::adopt
