#include "tools/hold/hold.h"

#include "common/cli/consent.h"
#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/run.h"
#include "common/stages/hold.h"
#include "common/stages/sources.h"
#include "common/util/clock.h"
#include "common/util/strings.h"

#include <csignal>
#include <ctime>
#include <ostream>

namespace ichor::tools::hold {

namespace {

const cli::ToolInfo k_info{
    "hold",
    "Write a plan as held machines, release them after a live zero-drift check, or abort.",
    "kubectl ichor hold apply [-f PLAN|-] [--yes] [--backup-dir DIR]\n"
    "  kubectl ichor hold release --cluster NAME --talosconfig FILE [--machine NAME...] [--timeout "
    "15m]\n"
    "  kubectl ichor hold abort --cluster NAME [--machine NAME...]",
    "apply: refuses a plan with any error result; lists the class B changes and asks for consent\n"
    "(typed on the terminal, or --yes); saves each machine's live configuration (secrets "
    "digested)\n"
    "to --backup-dir first; then creates each TalosMachine approved and held\n"
    "(ichor.maesh.dev/hold-apply) and its patches. A rerun of the same plan converges.\n"
    "release: for held machines, control planes first, one at a time: inspect the node again, "
    "check\n"
    "its trust, plan it with every patch (only consented class B may remain), remove the hold,\n"
    "wait until Ready without AdoptionHeld. A machine that fails is named; the others go on.\n"
    "abort: removes held machines and their patches that this suite created (allow-delete first);\n"
    "touches no node.\n",
    "  kubectl ichor drift --cluster prod -f trusted.yaml > plan.yaml\n"
    "  kubectl ichor hold apply -f plan.yaml\n"
    "  kubectl ichor hold release --cluster prod --talosconfig talosconfig-prod\n"
    "  kubectl ichor hold abort --cluster prod --machine prod-w-2\n",
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
        cxxopts::value<std::string>()->default_value("ichor-backups"),
        "DIR")("secrets-bundle", "release: the bundle (default: the cluster's Secret)",
               cxxopts::value<std::string>(),
               "FILE")("machine", "release, abort: only this machine (repeatable)",
                       cxxopts::value<std::vector<std::string>>(),
                       "NAME")("timeout", "release: how long to wait for each machine to be Ready",
                               cxxopts::value<std::string>()->default_value("15m"), "DURATION")(
        "action", "", cxxopts::value<std::vector<std::string>>());
    opts.parse_positional({"action"});
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
    auto actions = r->count("action") != 0 ? (*r)["action"].as<std::vector<std::string>>()
                                           : std::vector<std::string>{};
    if (actions.size() != 1 ||
        (actions[0] != "apply" && actions[0] != "release" && actions[0] != "abort")) {
        return make_error(ErrorKind::Usage, "give one action: apply, release or abort",
                          "kubectl ichor hold --help", "Usage");
    }
    o.action = actions[0];
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
    o.input = cli::to_input_options(*r);
    o.yes = r->count("yes") != 0;
    o.backup_dir = (*r)["backup-dir"].as<std::string>();
    o.secrets_bundle =
        r->count("secrets-bundle") != 0 ? (*r)["secrets-bundle"].as<std::string>() : "";
    if (r->count("machine") != 0) {
        o.machines = (*r)["machine"].as<std::vector<std::string>>();
    }
    if (o.action != "apply" && o.kube.cluster.empty()) {
        return make_error(ErrorKind::Usage, "--cluster is required for hold " + o.action,
                          "kubectl ichor hold " + o.action + " --cluster NAME", "Usage");
    }
    p.options = std::move(o);
    return p;
}

namespace {

int do_apply(const Options& o, kube::Client& kube, cli::Streams& s) {
    auto plan = cli::read_input(s, o.input, "hold", "a plan from kubectl ichor drift");
    if (!plan) {
        return cli::fail(s, "hold", plan.error());
    }
    if (auto st = stages::check_plan_writable(*plan); !st) {
        return cli::fail(s, "hold", st.error());
    }
    int objects = 0;
    for (const auto& i : plan->items) {
        objects += i.value("apiVersion", "") == doc::k_ichor_api ? 1 : 0;
    }
    std::string what =
        "create " + std::to_string(objects) + " held object(s) in namespace " + kube.ns();
    if (auto st = cli::obtain_consent(s, what, stages::consent_lines(*plan), o.yes); !st) {
        return cli::fail(s, "hold", st.error());
    }
    stages::ApplyOptions ao;
    ao.backup_dir = o.backup_dir;
    ao.now_rfc3339 = util::now_rfc3339();
    ao.say = [&s](std::string_view m) { s.err << m << "\n"; };
    if (auto n = s.env.get("ICHOR_TEST_KILL_AFTER_WRITES")) { // the e2e test's injected crash
        int left = std::stoi(*n);
        ao.after_write = [left]() mutable {
            if (--left <= 0) {
                std::raise(SIGKILL);
            }
        };
    }
    auto out = stages::hold_apply(kube, *plan, ao);
    if (!out) {
        return cli::fail(s, "hold", out.error());
    }
    if (auto st = cli::write_list(s, o.output, out->list, nullptr); !st) {
        return cli::fail(s, "hold", st.error());
    }
    return out->conflicts > 0
               ? cli::exit_code(out->created + out->existing > 0 ? ErrorKind::Partial
                                                                 : ErrorKind::Findings)
               : 0;
}

int do_release(const Options& o, kube::Client& kube, cli::Streams& s) {
    auto warn = [&s](std::string_view m) { cli::report_warning(s, "hold", m); };
    auto cluster = stages::get_cluster(kube, o.kube.cluster, kube.ns());
    if (!cluster) {
        return cli::fail(s, "hold", cluster.error());
    }
    auto b = stages::load_bundle({o.secrets_bundle, "", "", o.talos.call_timeout_ms}, nullptr,
                                 &kube, &*cluster, warn);
    if (!b) {
        return cli::fail(s, "hold", b.error());
    }
    auto ctx = talos::load_context(o.talos.talosconfig, o.talos.context, s.env);
    if (!ctx) {
        return cli::fail(s, "hold", ctx.error());
    }
    cli::Progress progress(s);
    auto ro = stages::release_options(o.kube.cluster, o.machines, ctx->context, ctx->path,
                                      o.talos.call_timeout_ms, *b, *cluster, o.timeout_ms);
    ro.progress = [&progress](std::string_view m) { progress.update(m); };
    ro.say = [&progress](std::string_view m) { progress.announce(m); };
    auto out = stages::hold_release(kube, ro);
    progress.done();
    if (!out) {
        return cli::fail(s, "hold", out.error());
    }
    if (auto st = cli::write_list(s, o.output, out->list, nullptr); !st) {
        return cli::fail(s, "hold", st.error());
    }
    if (out->failed == 0) {
        return 0;
    }
    return cli::exit_code(out->released > 0 ? ErrorKind::Partial : ErrorKind::Findings);
}

} // namespace

int run(const std::vector<std::string>& args, cli::Streams& s) {
    auto parsed = parse_options(args);
    if (!parsed) {
        return cli::fail(s, "hold", parsed.error());
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return 0;
    }
    const Options& o = *parsed->options;
    auto warn = [&s](std::string_view m) { cli::report_warning(s, "hold", m); };
    auto k =
        stages::connect_kube({o.kube.kubeconfig, o.kube.context, o.kube.ns}, s.env, s.in_tty, warn);
    if (!k) {
        return cli::fail(s, "hold", k.error());
    }
    if (o.action == "apply") {
        return do_apply(o, **k, s);
    }
    if (o.action == "release") {
        return do_release(o, **k, s);
    }
    auto out = stages::hold_abort(**k, o.kube.cluster, o.machines);
    if (!out) {
        return cli::fail(s, "hold", out.error());
    }
    if (auto st = cli::write_list(s, o.output, *out, nullptr); !st) {
        return cli::fail(s, "hold", st.error());
    }
    return out->has_errors() ? cli::exit_code(ErrorKind::Partial) : 0;
}

} // namespace ichor::tools::hold
