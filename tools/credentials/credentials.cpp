#include "tools/credentials/credentials.h"

#include "common/bundle/credentials.h"
#include "common/cli/errors.h"
#include "common/cli/run.h"
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/stages/sources.h"
#include "common/talos/address.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <ctime>
#include <ostream>

namespace ichor::tools::credentials {

using objects::MachineView;

namespace {

const cli::ToolInfo k_info{
    "credentials",
    "Write a talosconfig for a cluster from its secrets bundle: "
    "an os:admin client certificate signed by the cluster's Talos API CA.",
    cli::text_block(R"(
kubectl ichor credentials NAME [-n NS] [--secrets-bundle FILE] [--endpoints ADDR,...]
      [--role os:admin] [--ttl 8760h] [--output-file FILE])"),
    cli::text_block(R"(
The bundle is the TalosCluster's bundle Secret, or --secrets-bundle FILE. The endpoints are
--endpoints (or --endpoint, repeated), else the addresses of the cluster's approved
control-plane TalosMachines. The file (default ./talosconfig-NAME) is written 0600 and
never over an existing file; the key is never printed. It talks to no node; the other
tools reach nodes through such an endpoint with --endpoints.
)"),
    cli::text_block(R"(
  kubectl ichor credentials prod
  kubectl ichor credentials prod --output-file ~/.talos/prod --endpoints 10.0.0.11
  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod
)"),
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, false);
    opts.add_options("Credentials")("secrets-bundle", "the cluster's secrets bundle",
                                    cxxopts::value<std::string>(), "FILE")(
        "endpoints", "the Talos API endpoints the talosconfig names",
        cxxopts::value<std::vector<std::string>>(),
        "ADDR,...")("endpoint", "a Talos API endpoint (repeatable; as --endpoints)",
                    cxxopts::value<std::vector<std::string>>(),
                    "ADDRESS")("role", "a role of the certificate (repeatable)",
                               cxxopts::value<std::vector<std::string>>(), "ROLE")(
        "ttl", "lifetime of the certificate", cxxopts::value<std::string>()->default_value("8760h"),
        "DURATION")("output-file", "the talosconfig to write (0600)", cxxopts::value<std::string>(),
                    "FILE")("name", "", cxxopts::value<std::vector<std::string>>(), "CLUSTER");
    opts.parse_positional({"name"});
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            o.kube = cli::to_kube_options(r, false);
            auto names = cli::strings_flag(r, "name");
            if (names.size() != 1) {
                return cli::usage_error("give exactly one cluster NAME",
                                        "kubectl ichor credentials NAME");
            }
            o.kube.cluster = names.front();
            auto bundle = cli::to_bundle_options(r, false, "");
            if (!bundle) {
                return bundle.error();
            }
            o.bundle = *bundle;
            // The spelling of the other tools (--endpoints ADDR,...) and the older repeatable
            // --endpoint; each an address the other tools accept, so that the talosconfig written
            // is one they can use.
            for (const char* flag : {"endpoints", "endpoint"}) {
                for (auto& text : cli::strings_flag(r, flag)) {
                    if (auto a = talos::parse_address(text); !a) {
                        return cli::usage_error("--" + std::string(flag) + ": " +
                                                a.error().message);
                    }
                    o.endpoints.push_back(std::move(text));
                }
            }
            o.roles = r.count("role") != 0 ? cli::strings_flag(r, "role")
                                           : std::vector<std::string>{"os:admin"};
            auto ttl = util::parse_duration_ms(r["ttl"].as<std::string>());
            if (!ttl || *ttl < 60000) {
                return cli::usage_error("--ttl must be a duration of at least 1m, e.g. 8760h");
            }
            o.ttl_seconds = *ttl / 1000;
            o.output_file = r.count("output-file") != 0 ? r["output-file"].as<std::string>()
                                                        : "talosconfig-" + o.kube.cluster;
            return o;
        });
}

namespace {

// Approved control planes' addresses, in name order.
Result<std::vector<std::string>> control_plane_endpoints(kube::Client& k,
                                                         const std::string& cluster) {
    auto list = k.list(kube::ichor_path("talosmachines", k.ns()),
                       {.label_selector = vocab::cluster_selector(cluster)});
    if (!list) {
        return list.error();
    }
    std::vector<std::string> out;
    for (const auto& m : (*list)["items"]) {
        if (const MachineView v(m); v.cluster() == cluster && v.is_control_plane() &&
                                    v.is_approved() && !v.address().empty()) {
            out.push_back(v.address());
        }
    }
    return out;
}

stages::Outcome execute(const Options& given, cli::Streams& s) {
    Options o = given;
    std::unique_ptr<kube::Client> kube;
    doc::Value cluster;
    if (o.bundle.file.empty() || o.endpoints.empty()) {
        auto k = o.kube.connect(s, "credentials");
        if (!k) {
            return stages::failed(k.error());
        }
        kube = std::move(*k);
        auto c = stages::get_cluster(*kube, o.kube.cluster, kube->ns());
        if (!c) {
            return stages::failed(c.error());
        }
        cluster = std::move(*c);
    }
    auto b = o.bundle.load(
        s, "credentials",
        {nullptr, kube.get(), cluster.is_null() ? nullptr : &cluster, o.kube.cluster});
    if (!b) {
        return stages::failed(b.error());
    }
    if (o.endpoints.empty()) {
        auto eps = control_plane_endpoints(*kube, o.kube.cluster);
        if (!eps) {
            return stages::failed(eps.error());
        }
        if (eps->empty()) {
            return stages::failed(make_error(ErrorKind::Config,
                                             "cluster " + o.kube.cluster +
                                                 " has no approved control-plane TalosMachine "
                                                 "with an address",
                                             "give --endpoint ADDRESS",
                                             vocab::code::k_no_endpoints));
        }
        o.endpoints = *eps;
    }
    auto cert = bundle::issue_client_certificate(*b, o.roles, o.ttl_seconds, std::time(nullptr));
    if (!cert) {
        return stages::failed(cert.error());
    }
    std::string text = bundle::talosconfig_yaml(o.kube.cluster, o.endpoints, b->os_ca_pem(), *cert);
    if (auto st = util::write_private_file(o.output_file, text); !st) {
        return stages::failed(st.error());
    }
    s.err << "wrote " << o.output_file << " (0600): context " << o.kube.cluster << ", roles "
          << util::join(o.roles, ",") << ", endpoints " << util::join(o.endpoints, ",") << "\n";
    return {};
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::credentials
