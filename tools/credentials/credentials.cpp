#include "tools/credentials/credentials.h"

#include "common/bundle/credentials.h"
#include "common/cli/errors.h"
#include "common/cli/run.h"
#include "common/stages/sources.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <ctime>
#include <ostream>

namespace ichor::tools::credentials {

namespace {

const cli::ToolInfo k_info{
    "credentials",
    "Write a talosconfig for a cluster from its secrets bundle: an os:admin client certificate "
    "signed by the cluster's Talos API CA.",
    "kubectl ichor credentials NAME [-n NS] [--secrets-bundle FILE] [--endpoint ADDRESS...]\n"
    "      [--role os:admin] [--ttl 8760h] [--output-file FILE]",
    "The bundle is the TalosCluster's bundle Secret, or --secrets-bundle FILE. The endpoints are\n"
    "--endpoint, else the addresses of the cluster's approved control-plane TalosMachines. The\n"
    "file (default ./talosconfig-NAME) is written 0600 and never over an existing file; the key\n"
    "is never printed.\n",
    "  kubectl ichor credentials prod\n"
    "  kubectl ichor credentials prod --output-file ~/.talos/prod --endpoint 10.0.0.11\n"
    "  kubectl ichor adopt --cluster prod --add-machine 10.0.0.21 --talosconfig talosconfig-prod\n",
};

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_kube_flags(opts, false);
    opts.add_options("Credentials")("secrets-bundle", "the cluster's secrets bundle",
                                    cxxopts::value<std::string>(), "FILE")(
        "endpoint", "a Talos API endpoint (repeatable)", cxxopts::value<std::vector<std::string>>(),
        "ADDRESS")("role", "a role of the certificate (repeatable)",
                   cxxopts::value<std::vector<std::string>>(), "ROLE")(
        "ttl", "lifetime of the certificate", cxxopts::value<std::string>()->default_value("8760h"),
        "DURATION")("output-file", "the talosconfig to write (0600)", cxxopts::value<std::string>(),
                    "FILE")("name", "", cxxopts::value<std::vector<std::string>>());
    opts.parse_positional({"name"});
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
    o.kube = cli::to_kube_options(*r, false);
    auto names = r->count("name") != 0 ? (*r)["name"].as<std::vector<std::string>>()
                                       : std::vector<std::string>{};
    if (names.size() != 1) {
        return make_error(ErrorKind::Usage, "give exactly one cluster NAME",
                          "kubectl ichor credentials NAME", "Usage");
    }
    o.kube.cluster = names.front();
    o.secrets_bundle =
        r->count("secrets-bundle") != 0 ? (*r)["secrets-bundle"].as<std::string>() : "";
    if (r->count("endpoint") != 0) {
        o.endpoints = (*r)["endpoint"].as<std::vector<std::string>>();
    }
    o.roles = r->count("role") != 0 ? (*r)["role"].as<std::vector<std::string>>()
                                    : std::vector<std::string>{"os:admin"};
    auto ttl = util::parse_duration_ms((*r)["ttl"].as<std::string>());
    if (!ttl || *ttl < 60000) {
        return make_error(ErrorKind::Usage, "--ttl must be a duration of at least 1m, e.g. 8760h",
                          "", "Usage");
    }
    o.ttl_seconds = *ttl / 1000;
    o.output_file = r->count("output-file") != 0 ? (*r)["output-file"].as<std::string>()
                                                 : "talosconfig-" + o.kube.cluster;
    p.options = std::move(o);
    return p;
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
        if (doc::get_string(m, "spec.cluster") == cluster &&
            doc::get_string(m, "spec.role") == "controlplane" &&
            doc::get_string(m, "spec.approval") == "Approved" &&
            !doc::get_string(m, "spec.address").empty()) {
            out.push_back(doc::get_string(m, "spec.address"));
        }
    }
    return out;
}

} // namespace

int run(const std::vector<std::string>& args, cli::Streams& s) {
    auto parsed = parse_options(args);
    if (!parsed) {
        return cli::fail(s, "credentials", parsed.error());
    }
    if (!parsed->options) {
        s.out << parsed->text;
        return 0;
    }
    Options o = *parsed->options;
    auto warn = [&s](std::string_view m) { cli::report_warning(s, "credentials", m); };
    std::unique_ptr<kube::Client> kube;
    Result<doc::Value> cluster = doc::Value(nullptr);
    if (o.secrets_bundle.empty() || o.endpoints.empty()) {
        auto k = stages::connect_kube({o.kube.kubeconfig, o.kube.context, o.kube.ns}, s.env,
                                      s.in_tty, warn);
        if (!k) {
            return cli::fail(s, "credentials", k.error());
        }
        kube = std::move(*k);
        cluster = stages::get_cluster(*kube, o.kube.cluster, kube->ns());
        if (!cluster) {
            return cli::fail(s, "credentials", cluster.error());
        }
    }
    auto b = stages::load_bundle({o.secrets_bundle, "", "", 20000}, nullptr, kube.get(),
                                 cluster->is_null() ? nullptr : &*cluster, warn);
    if (!b) {
        return cli::fail(s, "credentials", b.error());
    }
    if (o.endpoints.empty()) {
        auto eps = control_plane_endpoints(*kube, o.kube.cluster);
        if (!eps) {
            return cli::fail(s, "credentials", eps.error());
        }
        if (eps->empty()) {
            return cli::fail(
                s, "credentials",
                make_error(ErrorKind::Config,
                           "cluster " + o.kube.cluster +
                               " has no approved control-plane TalosMachine with an address",
                           "give --endpoint ADDRESS", "NoEndpoints"));
        }
        o.endpoints = *eps;
    }
    auto cert = bundle::issue_client_certificate(*b, o.roles, o.ttl_seconds, std::time(nullptr));
    if (!cert) {
        return cli::fail(s, "credentials", cert.error());
    }
    std::string text = bundle::talosconfig_yaml(o.kube.cluster, o.endpoints, b->os_ca_pem(), *cert);
    if (auto st = util::write_private_file(o.output_file, text); !st) {
        return cli::fail(s, "credentials", st.error());
    }
    s.err << "wrote " << o.output_file << " (0600): context " << o.kube.cluster << ", roles "
          << util::join(o.roles, ",") << ", endpoints " << util::join(o.endpoints, ",") << "\n";
    return 0;
}

} // namespace ichor::tools::credentials
