#include "common/cli/flags.h"

#include "common/cli/errors.h"
#include "common/doc/vocabulary.h"
#include "common/util/strings.h"
#include "common/util/version.h"

#include <algorithm>
#include <sstream>

namespace ichor::cli {

std::string version_text(const ToolInfo& info) {
    return "kubectl-ichor-" + info.verb + " " + std::string(util::k_version) + "\n";
}

cxxopts::Options make_options(const ToolInfo& info) {
    cxxopts::Options opts("kubectl ichor " + info.verb, info.summary);
    opts.custom_help("[flags]");
    opts.set_width(100);
    opts.add_options()("h,help", "show this help")("version", "print the version")(
        "q,quiet", "print no warnings on stderr (errors still print)");
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
        auto r = opts.parse(static_cast<int>(args.size()), argv.data());
        // An argument no flag or positional takes would be ignored without a word.
        if (!r.unmatched().empty()) {
            return make_error(ErrorKind::Usage,
                              "unexpected argument \"" + r.unmatched().front() + "\"", "see --help",
                              vocab::code::k_usage);
        }
        return r;
    } catch (const cxxopts::exceptions::exception& e) {
        std::string msg = e.what();
        return make_error(ErrorKind::Usage, msg, "see --help", vocab::code::k_usage);
    }
}

namespace {
// The formats, joined by ", " and the last one by `before_last` ("yaml, json, table or objects").
std::string format_list(std::string_view before_last) {
    std::string text;
    for (size_t i = 0; i < k_output_formats.size(); ++i) {
        if (i > 0) {
            text += i + 1 == k_output_formats.size() ? before_last : std::string_view(", ");
        }
        text += k_output_formats[i];
    }
    return text;
}
} // namespace

void add_output_flags(cxxopts::Options& opts) {
    opts.add_options("Output")("o,output", "output format: " + format_list(" or "),
                               cxxopts::value<std::string>()->default_value("yaml"), "FORMAT")(
        "jq", "filter the output through a jq expression (strings print raw)",
        cxxopts::value<std::string>(), "EXPR");
}

Result<OutputOptions> to_output_options(const cxxopts::ParseResult& r) {
    OutputOptions o;
    o.format = r["output"].as<std::string>();
    if (std::find(k_output_formats.begin(), k_output_formats.end(), o.format) ==
        k_output_formats.end()) {
        return make_error(ErrorKind::Usage,
                          "unknown output format \"" + o.format +
                              "\"; allowed: " + format_list(", "),
                          "", vocab::code::k_usage);
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
    g("endpoints",
      "reach the nodes through an endpoint, as talosctl does (default: the context's, when it "
      "names nodes)",
      cxxopts::value<std::vector<std::string>>(), "ADDR,...");
    g("direct", "dial every node itself, even when the context names nodes");
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
                          "", vocab::code::k_usage);
    }
    t.call_timeout_ms = *ms;
    t.concurrency = r["concurrency"].as<int>();
    if (t.concurrency < 1 || t.concurrency > 1024) {
        return make_error(ErrorKind::Usage, "--concurrency must be between 1 and 1024", "",
                          vocab::code::k_usage);
    }
    for (const auto& text : strings_flag(r, "endpoints")) {
        auto a = talos::parse_address(text);
        if (!a) {
            return usage_error("--endpoints: " + a.error().message);
        }
        t.endpoints.push_back(*a);
    }
    t.direct = r.count("direct") != 0;
    if (t.direct && !t.endpoints.empty()) {
        return usage_error("give --endpoints or --direct, not both");
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

namespace ichor::cli {

std::string string_flag(const cxxopts::ParseResult& r, const std::string& name) {
    return r.count(name) != 0 ? r[name].as<std::string>() : std::string();
}

std::vector<std::string> strings_flag(const cxxopts::ParseResult& r, const std::string& name) {
    return r.count(name) != 0 ? r[name].as<std::vector<std::string>>() : std::vector<std::string>{};
}

Error usage_error(std::string message, std::string hint) {
    return make_error(ErrorKind::Usage, std::move(message), std::move(hint), vocab::code::k_usage);
}

std::string first_set(std::initializer_list<std::pair<bool, std::string_view>> flags) {
    for (const auto& [set, flag] : flags) {
        if (set) {
            return std::string(flag);
        }
    }
    return {};
}

std::optional<Error> first_refusal(std::initializer_list<UsageRule> rules) {
    for (const auto& rule : rules) {
        if (rule.refused) {
            return usage_error(rule.message, rule.hint);
        }
    }
    return std::nullopt;
}

Result<std::int64_t> duration_flag(const cxxopts::ParseResult& r, const std::string& name,
                                   std::string_view example) {
    const std::string text = r[name].as<std::string>();
    auto ms = util::parse_duration_ms(text);
    if (!ms || *ms <= 0) {
        return usage_error("--" + name + ": \"" + text + "\" is not a duration such as " +
                           std::string(example));
    }
    return *ms;
}

Result<talos::LoadedContext> TalosOptions::load(const Streams& s) const {
    return talos::load_context(talosconfig, context, s.env);
}

Result<std::optional<talos::Address>>
TalosOptions::endpoint_for(const talos::TalosContext& c) const {
    if (!endpoints.empty()) {
        return std::optional<talos::Address>(endpoints.front());
    }
    if (direct || c.nodes.empty() || c.endpoints.empty()) {
        return std::optional<talos::Address>();
    }
    auto a = talos::parse_address(c.endpoints.front());
    if (!a) {
        return make_error(ErrorKind::Config,
                          "talosconfig context \"" + c.name + "\": endpoints: " + a.error().message,
                          "pass --endpoints ADDR, or --direct", vocab::code::k_config);
    }
    return std::optional<talos::Address>(*a);
}

void add_bundle_flags(cxxopts::Options& opts, bool recover, std::string_view default_text,
                      const std::string& group) {
    auto g = opts.add_options(group);
    g("secrets-bundle", "the cluster's secrets bundle (" + std::string(default_text) + ")",
      cxxopts::value<std::string>(), "FILE");
    if (recover) {
        g("recover-secrets", "rebuild the bundle from a control plane's configuration (held in "
                             "memory; no file is written unless --recover-to FILE is given)");
        g("recover-from", "with --recover-secrets: the control plane",
          cxxopts::value<std::string>(), "ADDRESS");
        g("recover-to",
          "write the recovered bundle to FILE (0600, never over a file); without it no file is "
          "written: the bundle Secret in the cluster is the copy the suite keeps",
          cxxopts::value<std::string>(), "FILE");
    }
}

BundleOptions bundle_flags(const cxxopts::ParseResult& r, bool recover) {
    BundleOptions b;
    b.file = string_flag(r, "secrets-bundle");
    if (recover) {
        b.recover = r.count("recover-secrets") != 0;
        b.recover_from = string_flag(r, "recover-from");
        b.recover_to = string_flag(r, "recover-to");
    }
    return b;
}

Result<BundleOptions> to_bundle_options(const cxxopts::ParseResult& r, bool recover,
                                        std::string_view usage) {
    BundleOptions b = bundle_flags(r, recover);
    if (!recover) {
        return b;
    }
    if (b.recover != !b.recover_from.empty()) {
        return usage_error("--recover-secrets and --recover-from ADDRESS go together",
                           std::string(usage));
    }
    if (b.recover && !b.file.empty()) {
        return usage_error("give --secrets-bundle or --recover-secrets, not both");
    }
    return b;
}

} // namespace ichor::cli
