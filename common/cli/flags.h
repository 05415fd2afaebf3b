// Shared flag groups (output, input, talos, kube), registered by tools and turned into values.
// Option parsing never prints, exits or reads files: it returns a value or a Usage error.
#pragma once

#include "common/doc/resource_list.h"
#include "common/util/result.h"

#include <cxxopts.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ichor::cli {

struct ToolInfo {
    std::string verb;     // "inspect"
    std::string summary;  // one line
    std::string usage;    // "kubectl ichor inspect ADDRESS... [flags]"
    std::string details;  // paragraphs after the usage
    std::string examples; // indented example lines
};

// The common shape of a parse: options, or a request for help/version text.
template <class T> struct Parsed {
    std::optional<T> options;
    std::string text; // help or version text to print on stdout when options is empty
};

std::string version_text(const ToolInfo& info);
std::string help_text(const ToolInfo& info, const cxxopts::Options& opts);

// Makes the cxxopts parser of a tool, with --help and --version.
cxxopts::Options make_options(const ToolInfo& info);

// Runs cxxopts over args (args[0] is the program). Usage errors name the flag.
Result<cxxopts::ParseResult> parse_args(cxxopts::Options& opts,
                                        const std::vector<std::string>& args);

// Output: -o yaml|json|table, --jq EXPR.
struct OutputOptions {
    std::string format = "yaml";
    std::string jq;
};
void add_output_flags(cxxopts::Options& opts);
Result<OutputOptions> to_output_options(const cxxopts::ParseResult& r);

// Input: -f FILE|- (stdin when absent).
struct InputOptions {
    std::string file;
};
void add_input_flags(cxxopts::Options& opts);
InputOptions to_input_options(const cxxopts::ParseResult& r);

// Talos: --talosconfig, the talosconfig context (--context for tools that speak only to Talos,
// --talos-context for those that speak to both), --call-timeout, --concurrency.
struct TalosOptions {
    std::string talosconfig;
    std::string context;
    std::int64_t call_timeout_ms = 20000;
    int concurrency = 16;
};
void add_talos_flags(cxxopts::Options& opts, bool context_is_talos);
Result<TalosOptions> to_talos_options(const cxxopts::ParseResult& r, bool context_is_talos);

// Kubernetes: --kubeconfig, --context, -n/--namespace (default ichor-system), --cluster.
struct KubeOptions {
    std::string kubeconfig;
    std::string context;
    std::string ns; // empty: the context's namespace, else ichor-system
    std::string cluster;
};
void add_kube_flags(cxxopts::Options& opts, bool with_cluster);
KubeOptions to_kube_options(const cxxopts::ParseResult& r, bool with_cluster);

} // namespace ichor::cli
