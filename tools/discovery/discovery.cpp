#include "tools/discovery/discovery.h"

#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/stages/discovery.h"
#include "common/stages/inspect.h"
#include "common/stages/objects.h"
#include "common/stages/sources.h"
#include "common/stages/tables.h"

#include <ostream>
#include <utility>

namespace ichor::tools::discovery {

namespace {

const cli::ToolInfo k_info{
    "discovery",
    "Add an address to a TalosCluster's discovery and say what becomes of the machine there.",
    cli::text_block(R"(
kubectl ichor discovery add ADDRESS --cluster NAME [-n NS] [--talosconfig FILE]
      [-o yaml|json|table])"),
    cli::text_block(R"(
add: adds ADDRESS to the TalosCluster's spec.discovery.addresses (a JSON merge patch that
carries the object's resourceVersion; an address already listed is not written again), then
probes it with the inspect code. A machine in maintenance mode is discovery's: a pending
TalosMachine at its next pass, to approve. A machine that already runs a configuration is not
enrolled by discovery; the result names both commands and when each applies:
  kubectl ichor adopt --cluster NAME --add-machine ADDRESS --talosconfig FILE
      when it carries this cluster's PKI (its cluster ID and Talos API CA): no reset;
  kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME
      when another cluster configured it (that cluster's talosconfig): a reset.
With a talosconfig of the cluster (kubectl ichor credentials NAME) and its bundle Secret, the
trust check tells which one applies. A malformed address is refused before any write.
)"),
    cli::text_block(R"(
  kubectl ichor discovery add 10.0.0.31 --cluster prod
  kubectl ichor discovery add 10.0.0.21 --cluster prod --talosconfig talosconfig-prod -o table
  kubectl ichor discovery add '[fd00::21]:50000' --cluster prod -n ops
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, true);
    cli::add_talos_flags(opts, false);
    cli::add_output_flags(opts);
    opts.add_options()("words", "", cxxopts::value<std::vector<std::string>>(),
                       "add|"); // the action and its address; "add|" completes the action
    opts.parse_positional({"words"});
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            auto words = cli::strings_flag(r, "words");
            if (words.empty() || words[0] != "add") {
                return cli::usage_error("give one action: add",
                                        "kubectl ichor discovery add ADDRESS --cluster NAME");
            }
            if (words.size() != 2) {
                return cli::usage_error("discovery add takes one ADDRESS",
                                        "kubectl ichor discovery add ADDRESS --cluster NAME");
            }
            o.action = words[0];
            auto address = talos::parse_address(words[1]);
            if (!address) {
                return cli::usage_error(address.error().message,
                                        "an address is HOST, HOST:PORT, [V6] or [V6]:PORT");
            }
            o.address = *address;
            o.kube = cli::to_kube_options(r, true);
            if (o.kube.cluster.empty()) {
                return cli::usage_error("--cluster is required",
                                        "kubectl ichor discovery add ADDRESS --cluster NAME");
            }
            auto talos = cli::to_talos_options(r, false);
            auto out = cli::to_output_options(r);
            if (!talos || !out) {
                return !talos ? talos.error() : out.error();
            }
            o.talos = *talos;
            o.output = *out;
            return o;
        });
}

namespace {

// How the address is read: with the talosconfig when there is one (a configured node of this
// cluster is then read and trust-checked; another cluster's is told apart by its certificate);
// without it, as a maintenance-mode node only.
stages::InspectOptions probe_options(const Options& o, cli::Streams& s, std::string& path) {
    stages::InspectOptions io;
    io.call_timeout_ms = o.talos.call_timeout_ms;
    io.concurrency = 1;
    auto ctx = o.talos.load(s);
    if (!ctx) {
        cli::report_warning(s, "discovery",
                            "no talosconfig (" + ctx.error().message +
                                "): the address is read as a maintenance-mode node only");
        io.insecure = true;
        return io;
    }
    io.context = ctx->context;
    io.talosconfig_path = ctx->path;
    path = ctx->path;
    if (auto ep = o.talos.endpoint_for(ctx->context); ep) {
        io.endpoint = *ep;
    }
    return io;
}

stages::Outcome execute(const Options& o, cli::Streams& s) {
    auto k = o.kube.connect(s, "discovery");
    if (!k) {
        return stages::failed(k.error());
    }
    auto objects = stages::objects_over(**k);
    std::optional<bundle::Bundle> bundle;
    if (auto cluster = stages::get_cluster(**k, o.kube.cluster, (*k)->ns()); cluster) {
        auto warn = [&s](std::string_view m) { cli::report_warning(s, "discovery", m); };
        auto b = stages::load_bundle({}, nullptr, k->get(), &*cluster, warn);
        if (b) {
            bundle = *b;
        } else {
            warn("the trust check is off: " + b.error().message);
        }
    }
    std::string path;
    stages::InspectOptions io = probe_options(o, s, path);
    stages::DiscoveryAddOptions d;
    d.objects = objects.get();
    d.cluster = o.kube.cluster;
    d.address = o.address;
    d.probe = [&io](const talos::Address& a, doc::Value& results) {
        return stages::inspect_node(a, io, results);
    };
    d.bundle = bundle ? &*bundle : nullptr;
    d.talosconfig = path.empty() ? "FILE" : path;
    doc::ResourceList list;
    stages::Outcome out = stages::discovery_add(list, d);
    if (out.error) {
        return out;
    }
    if (auto st = cli::write_list(s, o.output, std::move(list), stages::inspection_table); !st) {
        return stages::failed(st.error());
    }
    return out;
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::discovery
