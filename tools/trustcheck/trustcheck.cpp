#include "tools/trustcheck/trustcheck.h"

#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/stages/sources.h"
#include "common/stages/tables.h"
#include "common/stages/trust.h"

#include <ostream>
#include <utility>

namespace ichor::tools::trustcheck {

namespace {

const cli::ToolInfo k_info{
    "trustcheck",
    "Check that each inspected node carries the cluster's CAs: its cluster ID and Talos API CA.",
    cli::text_block(R"(
kubectl ichor trustcheck --cluster NAME [-n NS] [--secrets-bundle FILE |
      --recover-secrets --recover-from ADDRESS --talosconfig FILE] [-f FILE|-]
      [-o yaml|json|table|objects])"),
    cli::text_block(R"(
Reads Inspections (from kubectl ichor inspect) and adds status.trust to each. The bundle is
--secrets-bundle FILE, or rebuilt from a control plane's configuration with --recover-secrets
--recover-from ADDRESS (no file unless --recover-to FILE: written 0600, never over a file),
or else the TalosCluster's own bundle Secret. A node of another cluster, one whose
certificate the talosconfig's CA does not sign, one in maintenance mode, or one that could
not be read is refused (nothing was written); the result names the command that applies.
)"),
    cli::text_block(R"(
  kubectl ichor inspect 10.0.0.21 --talosconfig tc | kubectl ichor trustcheck --cluster prod
  kubectl ichor trustcheck --cluster prod -f inspections.yaml -o table
  kubectl ichor trustcheck --cluster prod --recover-secrets --recover-from 10.0.0.11 \
      --talosconfig tc --recover-to prod-secrets.yaml -f inspections.yaml
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    cli::add_bundle_flags(opts, true, "secrets.yaml");
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            o.kube = cli::to_kube_options(r, true);
            auto talos = cli::to_talos_options(r, false);
            auto out = cli::to_output_options(r);
            if (!talos || !out) {
                return talos ? out.error() : talos.error();
            }
            o.talos = *talos;
            o.output = *out;
            o.input = cli::to_input_options(r);
            if (o.kube.cluster.empty()) {
                return cli::usage_error("--cluster is required",
                                        "kubectl ichor trustcheck --cluster NAME");
            }
            auto bundle = cli::to_bundle_options(
                r, true,
                "kubectl ichor trustcheck --cluster NAME --recover-secrets --recover-from ADDRESS");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            return o;
        });
}

namespace {

stages::Outcome execute(const Options& o, cli::Streams& s) {
    auto list = cli::read_input(s, o.input, "trustcheck", "the output of kubectl ichor inspect");
    if (!list) {
        return stages::failed(list.error());
    }
    std::unique_ptr<kube::Client> kube;
    doc::Value cluster;
    std::string ns = o.kube.offline_ns();
    if (o.bundle.from_secret()) {
        auto k = o.kube.connect(s, "trustcheck");
        if (!k) {
            return stages::failed(k.error());
        }
        kube = std::move(*k);
        ns = kube->ns();
        auto c = stages::get_cluster(*kube, o.kube.cluster, ns);
        if (!c) {
            return stages::failed(c.error());
        }
        cluster = std::move(*c);
    }
    // The only node trustcheck talks to is --recover-from's control plane: reached as inspect
    // reaches nodes (--endpoints, or the context's endpoint when it names nodes).
    std::optional<talos::TalosContext> ctx;
    std::optional<talos::Address> endpoint;
    if (o.bundle.recover) {
        auto c = o.talos.load(s);
        if (!c) {
            return stages::failed(c.error());
        }
        ctx = c->context;
        auto ep = o.talos.endpoint_for(*ctx);
        if (!ep) {
            return stages::failed(ep.error());
        }
        endpoint = *ep;
    }
    auto b =
        o.bundle.load(s, "trustcheck",
                      {ctx ? &*ctx : nullptr, kube.get(), cluster.is_null() ? nullptr : &cluster,
                       o.kube.cluster, o.talos.call_timeout_ms, endpoint});
    if (!b) {
        return stages::failed(b.error());
    }
    stages::Outcome out = stages::check_trust(*list, {&*b, o.kube.cluster, ns});
    if (auto st = cli::write_list(s, o.output, std::move(*list), stages::inspection_table); !st) {
        return stages::failed(st.error());
    }
    return out;
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::trustcheck
