#include "common/cli/flags.h"

#include "common/cli/errors.h"
#include "common/util/strings.h"
#include "common/util/version.h"

#include <sstream>

namespace ichor::cli {

std::string version_text(const ToolInfo& info) {
    return "kubectl-ichor-" + info.verb + " " + std::string(util::k_version) + "\n";
}

cxxopts::Options make_options(const ToolInfo& info) {
    cxxopts::Options opts("kubectl ichor " + info.verb, info.summary);
    opts.custom_help("[flags]");
    opts.set_width(100);
    opts.add_options()("h,help", "show this help")("version", "print the version");
    return opts;
}

std::string help_text(const ToolInfo& info, const cxxopts::Options& opts) {
    std::ostringstream ss;
    ss << info.summary << "\n\nUsage:\n  " << info.usage << "\n";
    if (!info.details.empty()) {
        ss << "\n" << info.details;
        if (info.details.back() != '\n') {
            ss << "\n";
        }
    }
    if (!info.examples.empty()) {
        ss << "\nExamples:\n" << info.examples;
        if (info.examples.back() != '\n') {
            ss << "\n";
        }
    }
    // cxxopts prints its own "usage" line first; keep only the option table.
    std::string table = opts.help();
    auto pos = table.find("\n\n");
    ss << "\nFlags:" << (pos == std::string::npos ? table : table.substr(pos + 1));
    ss << "\n" << exit_status_help();
    return ss.str();
}

Result<cxxopts::ParseResult> parse_args(cxxopts::Options& opts,
                                        const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args) {
        argv.push_back(a.c_str());
    }
    argv.push_back(nullptr);
    try {
        return opts.parse(static_cast<int>(args.size()), argv.data());
    } catch (const cxxopts::exceptions::exception& e) {
        std::string msg = e.what();
        return make_error(ErrorKind::Usage, msg, "see --help", "Usage");
    }
}

void add_output_flags(cxxopts::Options& opts) {
    opts.add_options("Output")("o,output", "output format: yaml, json or table",
                               cxxopts::value<std::string>()->default_value("yaml"), "FORMAT")(
        "jq", "filter the output through a jq expression (strings print raw)",
        cxxopts::value<std::string>(), "EXPR");
}

Result<OutputOptions> to_output_options(const cxxopts::ParseResult& r) {
    OutputOptions o;
    o.format = r["output"].as<std::string>();
    if (o.format != "yaml" && o.format != "json" && o.format != "table") {
        return make_error(ErrorKind::Usage,
                          "unknown output format \"" + o.format + "\"; allowed: yaml, json, table",
                          "", "Usage");
    }
    if (r.count("jq") != 0) {
        o.jq = r["jq"].as<std::string>();
    }
    return o;
}

void add_input_flags(cxxopts::Options& opts) {
    opts.add_options("Input")("f,filename",
                              "read the documents from FILE ('-' or absent: standard input)",
                              cxxopts::value<std::string>(), "FILE");
}

InputOptions to_input_options(const cxxopts::ParseResult& r) {
    InputOptions in;
    if (r.count("filename") != 0) {
        in.file = r["filename"].as<std::string>();
    }
    return in;
}

void add_talos_flags(cxxopts::Options& opts, bool context_is_talos) {
    auto g = opts.add_options("Talos");
    g("talosconfig", "talosconfig file (default $TALOSCONFIG, else ~/.talos/config)",
      cxxopts::value<std::string>(), "FILE");
    g(context_is_talos ? "context" : "talos-context", "talosconfig context (default: its current)",
      cxxopts::value<std::string>(), "NAME");
    g("call-timeout", "bound of every call to a node",
      cxxopts::value<std::string>()->default_value("20s"), "DURATION");
    g("concurrency", "nodes read at once", cxxopts::value<int>()->default_value("16"), "N");
}

Result<TalosOptions> to_talos_options(const cxxopts::ParseResult& r, bool context_is_talos) {
    TalosOptions t;
    if (r.count("talosconfig") != 0) {
        t.talosconfig = r["talosconfig"].as<std::string>();
    }
    const char* ctx = context_is_talos ? "context" : "talos-context";
    if (r.count(ctx) != 0) {
        t.context = r[ctx].as<std::string>();
    }
    auto ms = util::parse_duration_ms(r["call-timeout"].as<std::string>());
    if (!ms || *ms <= 0) {
        return make_error(ErrorKind::Usage,
                          "--call-timeout: \"" + r["call-timeout"].as<std::string>() +
                              "\" is not a duration such as 20s, 500ms or 1m",
                          "", "Usage");
    }
    t.call_timeout_ms = *ms;
    t.concurrency = r["concurrency"].as<int>();
    if (t.concurrency < 1 || t.concurrency > 1024) {
        return make_error(ErrorKind::Usage, "--concurrency must be between 1 and 1024", "",
                          "Usage");
    }
    return t;
}

void add_kube_flags(cxxopts::Options& opts, bool with_cluster) {
    auto g = opts.add_options("Kubernetes");
    g("kubeconfig", "kubeconfig file (default $KUBECONFIG, else ~/.kube/config)",
      cxxopts::value<std::string>(), "FILE");
    g("context", "kubeconfig context", cxxopts::value<std::string>(), "NAME");
    g("n,namespace", "namespace of the Ichor objects (default ichor-system)",
      cxxopts::value<std::string>(), "NS");
    if (with_cluster) {
        g("cluster", "the TalosCluster", cxxopts::value<std::string>(), "NAME");
    }
}

KubeOptions to_kube_options(const cxxopts::ParseResult& r, bool with_cluster) {
    KubeOptions k;
    if (r.count("kubeconfig") != 0) {
        k.kubeconfig = r["kubeconfig"].as<std::string>();
    }
    if (r.count("context") != 0) {
        k.context = r["context"].as<std::string>();
    }
    if (r.count("namespace") != 0) {
        k.ns = r["namespace"].as<std::string>();
    }
    if (with_cluster && r.count("cluster") != 0) {
        k.cluster = r["cluster"].as<std::string>();
    }
    return k;
}

} // namespace ichor::cli
