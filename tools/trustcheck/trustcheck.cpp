#include "tools/trustcheck/trustcheck.h"

#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/stages/sources.h"
#include "common/stages/tables.h"
#include "common/stages/trust.h"

#include <ostream>

namespace ichor::tools::trustcheck {

namespace {

const cli::ToolInfo k_info{
    "trustcheck",
    "Check that each inspected node carries the cluster's CAs: its cluster ID and Talos API CA.",
    "kubectl ichor trustcheck --cluster NAME [-n NS] [--secrets-bundle FILE |\n"
    "      --recover-secrets --recover-from ADDRESS --talosconfig FILE] [-f FILE|-] [-o "
    "yaml|json|table]",
    "Reads Inspections (from kubectl ichor inspect) and adds status.trust to each. The bundle is\n"
    "--secrets-bundle FILE, or rebuilt from a control plane's configuration with "
    "--recover-secrets\n"
    "--recover-from ADDRESS (written 0600 to --recover-to, never over a file), or else the\n"
    "TalosCluster's own bundle Secret. A node of another cluster, one whose certificate the\n"
    "talosconfig's CA does not sign, one in maintenance mode, or one that could not be read is\n"
    "refused with nothing written; the result names the command that applies.\n",
    "  kubectl ichor inspect 10.0.0.21 --talosconfig tc | kubectl ichor trustcheck --cluster prod\n"
    "  kubectl ichor trustcheck --cluster prod -f inspections.yaml -o table\n"
    "  kubectl ichor trustcheck --cluster prod --recover-secrets --recover-from 10.0.0.11 \\\n"
    "      --talosconfig tc --recover-to prod-secrets.yaml -f inspections.yaml\n",
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    opts.add_options("Secrets")("secrets-bundle", "the cluster's secrets bundle (secrets.yaml)",
                                cxxopts::value<std::string>(), "FILE")(
        "recover-secrets", "rebuild the bundle from a control plane's configuration")(
        "recover-from", "with --recover-secrets: the control plane", cxxopts::value<std::string>(),
        "ADDRESS")("recover-to", "where the recovered bundle is written (0600)",
                   cxxopts::value<std::string>(), "FILE");
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
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
    if (!talos || !out) {
        return talos ? out.error() : talos.error();
    }
    o.talos = *talos;
    o.output = *out;
    o.input = cli::to_input_options(*r);
    auto str = [&](const char* name) {
        return r->count(name) != 0 ? (*r)[name].as<std::string>() : std::string();
    };
    o.secrets_bundle = str("secrets-bundle");
    o.recover_secrets = r->count("recover-secrets") != 0;
    o.recover_from = str("recover-from");
    o.recover_to = str("recover-to");
    if (o.kube.cluster.empty()) {
        return make_error(ErrorKind::Usage, "--cluster is required",
                          "kubectl ichor trustcheck --cluster NAME", "Usage");
    }
    if (o.recover_secrets != !o.recover_from.empty()) {
        return make_error(
            ErrorKind::Usage, "--recover-secrets and --recover-from ADDRESS go together",
            "kubectl ichor trustcheck --cluster NAME --recover-secrets --recover-from ADDRESS",
            "Usage");
    }
    if (o.recover_secrets && !o.secrets_bundle.empty()) {
        return make_error(ErrorKind::Usage, "give --secrets-bundle or --recover-secrets, not both",
                          "", "Usage");
    }
    p.options = std::move(o);
    return p;
}

int run(const std::vector<std::string>& args, cli::Streams& s) {
    auto parsed = parse_options(args);
    if (!parsed) {
        return cli::fail(s, "trustcheck", parsed.error());
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return 0;
    }
    const Options& o = *parsed->options;
    auto warn = [&s](std::string_view m) { cli::report_warning(s, "trustcheck", m); };
    auto list = cli::read_input(s, o.input, "trustcheck", "the output of kubectl ichor inspect");
    if (!list) {
        return cli::fail(s, "trustcheck", list.error());
    }
    std::unique_ptr<kube::Client> kube;
    Result<doc::Value> cluster = doc::Value(nullptr);
    std::string ns = o.kube.ns.empty() ? "ichor-system" : o.kube.ns;
    if (o.secrets_bundle.empty() && !o.recover_secrets) {
        auto k = stages::connect_kube({o.kube.kubeconfig, o.kube.context, o.kube.ns}, s.env,
                                      s.in_tty, warn);
        if (!k) {
            return cli::fail(s, "trustcheck", k.error());
        }
        kube = std::move(*k);
        ns = kube->ns();
        cluster = stages::get_cluster(*kube, o.kube.cluster, ns);
        if (!cluster) {
            return cli::fail(s, "trustcheck", cluster.error());
        }
    }
    std::optional<talos::TalosContext> ctx;
    if (o.recover_secrets) {
        auto c = talos::load_context(o.talos.talosconfig, o.talos.context, s.env);
        if (!c) {
            return cli::fail(s, "trustcheck", c.error());
        }
        ctx = c->context;
    }
    stages::BundleSource src{o.secrets_bundle, o.recover_from,
                             o.recover_to.empty() ? o.kube.cluster + "-secrets.yaml" : o.recover_to,
                             o.talos.call_timeout_ms};
    auto b = stages::load_bundle(src, ctx ? &*ctx : nullptr, kube.get(),
                                 cluster->is_null() ? nullptr : &*cluster, warn);
    if (!b) {
        return cli::fail(s, "trustcheck", b.error());
    }
    int refused = stages::check_trust(*list, *b, {o.kube.cluster, ns});
    if (auto st = cli::write_list(s, o.output, *list, stages::inspection_table); !st) {
        return cli::fail(s, "trustcheck", st.error());
    }
    return refused > 0 ? cli::exit_code(ErrorKind::Findings) : 0;
}

} // namespace ichor::tools::trustcheck
