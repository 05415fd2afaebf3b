#include "tools/inspect/inspect.h"

#include "common/cli/output.h"
#include "common/cli/run.h"
#include "common/stages/inspect.h"
#include "common/stages/tables.h"
#include "common/talos/certs.h"

#include <ostream>
#include <utility>

namespace ichor::tools::inspect {

namespace {

const cli::ToolInfo k_info{
    "inspect",
    "Read Talos nodes over their API: "
    "identity, configuration (secrets digested), facts, etcd, volumes.",
    cli::text_block(R"(
kubectl ichor inspect ADDRESS... [--talosconfig FILE] [--context NAME] [--call-timeout 20s]
      [--concurrency N] [--insecure] [--cert-fingerprint FP] [-o yaml|json|table|objects]
      [--jq EXPR]
  kubectl ichor inspect -f INSPECTIONS.yaml -o table)"),
    cli::text_block(R"(
ADDRESS is host or host:port (port 50000 by default); each node is dialled directly with the
talosconfig's credential (--talosconfig, else $TALOSCONFIG, else ~/.talos/config). Every call
gives up after --call-timeout; nodes are read in parallel. A node whose certificate is not
signed by the talosconfig's CA is probed without a certificate: a node in maintenance mode
answers (mode maintenance, its fingerprint recorded), another cluster's does not (mode
configured, TLS unknown authority). --insecure reads maintenance-mode nodes directly;
--cert-fingerprint pins their certificate.
)"),
    cli::text_block(R"(
  # one worker and one control plane, as a table
  kubectl ichor inspect 10.0.0.21 10.0.0.11 --talosconfig ./talosconfig -o table
  # every node's UUID
  kubectl ichor inspect 10.0.0.21 10.0.0.22 --jq '.items[] | [.spec.address, .status.identity.uuid] | @tsv'
  # a node in maintenance mode, pinned
  kubectl ichor inspect 10.0.0.31 --insecure --cert-fingerprint 'abc...='
  # into the next stage
  kubectl ichor inspect 10.0.0.21 | kubectl ichor trustcheck --cluster prod
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_talos_flags(opts, true);
    opts.add_options("Talos")("insecure",
                              "read maintenance-mode nodes without a client certificate")(
        "cert-fingerprint", "with --insecure: accept only this certificate fingerprint",
        cxxopts::value<std::string>(),
        "FP")("addresses", "", cxxopts::value<std::vector<std::string>>(), "ADDRESS");
    cli::add_input_flags(opts);
    cli::add_output_flags(opts);
    opts.parse_positional({"addresses"});
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            o.addresses = cli::strings_flag(r, "addresses");
            auto talos = cli::to_talos_options(r, true);
            if (!talos) {
                return talos.error();
            }
            o.talos = *talos;
            o.insecure = r.count("insecure") != 0;
            o.fingerprint = cli::string_flag(r, "cert-fingerprint");
            if (!o.fingerprint.empty() && !o.insecure) {
                return cli::usage_error(
                    "--cert-fingerprint pins a maintenance-mode node: it goes with --insecure",
                    "kubectl ichor inspect ADDRESS --insecure --cert-fingerprint FP");
            }
            o.input = cli::to_input_options(r);
            auto out = cli::to_output_options(r);
            if (!out) {
                return out.error();
            }
            o.output = *out;
            if (o.addresses.empty() && o.input.file.empty()) {
                return cli::usage_error("no address given",
                                        "kubectl ichor inspect ADDRESS... --talosconfig FILE");
            }
            if (!o.addresses.empty() && !o.input.file.empty()) {
                return cli::usage_error("give addresses or -f FILE, not both");
            }
            return o;
        });
}

namespace {

Result<stages::InspectOptions> resolve(const Options& o, const cli::Streams& s) {
    stages::InspectOptions io;
    for (const auto& text : o.addresses) {
        auto a = talos::parse_address(text);
        if (!a) {
            return a.error();
        }
        io.addresses.push_back(*a);
    }
    io.insecure = o.insecure;
    io.call_timeout_ms = o.talos.call_timeout_ms;
    io.concurrency = o.talos.concurrency;
    if (!o.fingerprint.empty()) {
        auto fp = talos::parse_fingerprint(o.fingerprint);
        if (!fp) {
            return fp.error();
        }
        io.fingerprints.push_back(*fp);
    }
    if (o.insecure && o.talos.talosconfig.empty()) {
        return io; // maintenance mode needs no credential
    }
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return ctx.error();
    }
    io.context = ctx->context;
    io.talosconfig_path = ctx->path;
    if (!o.insecure) { // maintenance mode does not forward: --insecure always dials directly
        auto ep = o.talos.endpoint_for(ctx->context);
        if (!ep) {
            return ep.error();
        }
        io.endpoint = *ep;
    }
    return io;
}

stages::Outcome execute(const Options& o, cli::Streams& s) {
    doc::ResourceList list;
    stages::Outcome out;
    if (!o.input.file.empty()) {
        auto read = cli::read_input(s, o.input, "inspect", "Inspections");
        if (!read) {
            return stages::failed(read.error());
        }
        list = std::move(*read);
    } else {
        auto io = resolve(o, s);
        if (!io) {
            return stages::failed(io.error());
        }
        out = stages::inspect(list, *io);
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

} // namespace ichor::tools::inspect
