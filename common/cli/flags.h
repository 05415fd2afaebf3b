// Shared flag groups (output, input, talos, kube, bundle), registered by tools and turned into
// values (cli-runtime's ConfigFlags). Option parsing never prints, exits or reads files: it returns
// a value or a Usage error. A group then yields its object, validated in one place: the kube
// flags a connected client, the talos flags a loaded context, the bundle flags the bundle.
#pragma once

#include "common/bundle/bundle.h"
#include "common/cli/complete.h"
#include "common/cli/streams.h"
#include "common/doc/resource_list.h"
#include "common/kube/client.h"
#include "common/talos/address.h"
#include "common/talos/talosconfig.h"
#include "common/util/result.h"

#include <cxxopts.hpp>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::cli {

struct ToolInfo {
    std::string verb;     // "inspect"
    std::string summary;  // one line
    std::string usage;    // "kubectl ichor inspect ADDRESS... [flags]"
    std::string details;  // paragraphs after the usage
    std::string examples; // indented example lines
};

// A help text written as a raw string that opens on a line of its own, so that its lines read in
// the source as they print and clang-format leaves them alone:
//     cli::text_block(R"(
//     first line ...)")
// returns the text without the newline that follows R"(; text without one is returned as it is.
inline std::string text_block(std::string_view raw) {
    if (!raw.empty() && raw.front() == '\n') {
        raw.remove_prefix(1);
    }
    return std::string(raw);
}

// The common shape of a parse: options, or a request for help/version text, or for completion.
template <class T> struct Parsed {
    std::optional<T> options;
    std::string text; // help or version text to print on stdout when options is empty
    std::optional<CompletionRequest> completion; // `__complete ARGS... WORD` (cli/complete.h)
    bool quiet = false; // -q, --quiet: no warnings on stderr (run_parsed sets Streams::quiet)
};

std::string version_text(const ToolInfo& info);
std::string help_text(const ToolInfo& info, const cxxopts::Options& opts);

// Makes the cxxopts parser of a tool, with --help, --version and -q, --quiet.
cxxopts::Options make_options(const ToolInfo& info);

// Runs cxxopts over args (args[0] is the program). Usage errors name the flag.
Result<cxxopts::ParseResult> parse_args(cxxopts::Options& opts,
                                        const std::vector<std::string>& args);

// The one prologue of every option parser: parses `args` with `opts` (made by make_options and
// the tool's groups); --help and --version give their text; otherwise `fill` turns the parse
// result into the tool's options, or a Usage error. `__complete` (or `__completeNoDesc`) as the
// first argument is a completion request over these options, whatever follows it.
template <class T, class Fill>
Result<Parsed<T>> parse_tool(const ToolInfo& info, cxxopts::Options& opts,
                             const std::vector<std::string>& args, Fill&& fill) {
    if (is_completion_request(args)) {
        Parsed<T> p;
        p.completion = completion_request(opts, args);
        return p;
    }
    auto r = parse_args(opts, args);
    if (!r) {
        return r.error();
    }
    Parsed<T> p;
    p.quiet = r->count("quiet") != 0;
    if (r->count("help") != 0) {
        p.text = help_text(info, opts);
        return p;
    }
    if (r->count("version") != 0) {
        p.text = version_text(info);
        return p;
    }
    Result<T> o = fill(*r);
    if (!o) {
        return o.error();
    }
    p.options = std::move(*o);
    return p;
}

// The value of a string flag, or empty when it was not given.
std::string string_flag(const cxxopts::ParseResult& r, const std::string& name);
// The values of a repeatable flag, or none.
std::vector<std::string> strings_flag(const cxxopts::ParseResult& r, const std::string& name);
// A duration flag ("15m", "20s"); a Usage error naming the flag when it is not a positive one.
Result<std::int64_t> duration_flag(const cxxopts::ParseResult& r, const std::string& name,
                                   std::string_view example);
// A Usage error with the tag code Usage.
Error usage_error(std::string message, std::string hint = {});
// The first flag of a table walked in order, each row {is set, "--flag"}, or empty when none is:
// the flag that a refusal of flags which do not go together names.
std::string first_set(std::initializer_list<std::pair<bool, std::string_view>> flags);
// A rule of a tool's command line: when `refused`, a Usage error with `message` and `hint`.
struct UsageRule {
    bool refused = false;
    std::string message;
    std::string hint;
};
// The Usage error of the first rule that refuses, the rules in the order their refusals are owed;
// none when every rule passes.
std::optional<Error> first_refusal(std::initializer_list<UsageRule> rules);

// Output: -o yaml|json|table|objects, --jq EXPR. k_output_formats is the one list of the formats
// (the help text, the refusal of another and the shell completion are made from it); "objects" is
// a v1 List of the planned Ichor objects alone, for kubectl diff and apply (output.h, write_list).
inline constexpr std::array<std::string_view, 4> k_output_formats = {"yaml", "json", "table",
                                                                     "objects"};
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
// --talos-context for those that speak to both), --call-timeout, --concurrency, --endpoints
// ADDR,... and --direct (how nodes are reached, endpoint_for).
struct TalosOptions {
    std::string talosconfig;
    std::string context;
    std::int64_t call_timeout_ms = 20000;
    int concurrency = 16;
    std::vector<talos::Address> endpoints; // --endpoints, each checked by parse_address
    bool direct = false;                   // --direct: dial every node, whatever the context says

    // The endpoint the nodes are reached through, with `node` metadata (talosctl's endpoints and
    // nodes): the first of --endpoints when given (the user asks for it); else, without --direct,
    // the first of the context's endpoints when the context names `nodes` (it is set up for
    // reaching nodes behind its endpoints, as talosctl uses it); else none: every node is dialled
    // directly. One endpoint, one connection: talosctl's round robin over several is not made.
    // Error (Config) when the context's endpoint is not a valid address.
    [[nodiscard]] Result<std::optional<talos::Address>>
    endpoint_for(const talos::TalosContext& context) const;

    // The talosconfig (--talosconfig, else $TALOSCONFIG, else ~/.talos/config) and its context,
    // checked (talos::load_context).
    [[nodiscard]] Result<talos::LoadedContext> load(const Streams& s) const;
};
void add_talos_flags(cxxopts::Options& opts, bool context_is_talos);
Result<TalosOptions> to_talos_options(const cxxopts::ParseResult& r, bool context_is_talos);

// Kubernetes: --kubeconfig, --context, -n/--namespace (default ichor-system), --cluster.
struct KubeOptions {
    std::string kubeconfig;
    std::string context;
    std::string ns; // -n; empty: ichor-system, whatever namespace the kubeconfig context sets
    std::string cluster;

    // A client for the kubeconfig and context (kube::load_config rules) in namespace -n, else
    // ichor-system (never the context's namespace: ADR 0128 amendment finding 3); the
    // kubeconfig's and the server's warnings go to s.err as the tool `verb`'s.
    [[nodiscard]] Result<std::unique_ptr<kube::Client>> connect(Streams& s,
                                                                std::string_view verb) const;
    // The namespace without a kubeconfig (offline): -n, else ichor-system.
    [[nodiscard]] std::string offline_ns() const;
};
void add_kube_flags(cxxopts::Options& opts, bool with_cluster);
KubeOptions to_kube_options(const cxxopts::ParseResult& r, bool with_cluster);

// The secrets bundle: --secrets-bundle FILE, or (with `recover`) --recover-secrets
// --recover-from ADDRESS [--recover-to FILE]; neither: the TalosCluster's own bundle Secret.
// to_bundle_options refuses --recover-secrets without --recover-from (and the reverse), and both
// sources at once.
struct BundleOptions {
    std::string file;         // --secrets-bundle
    bool recover = false;     // --recover-secrets
    std::string recover_from; // --recover-from
    std::string recover_to;   // --recover-to; empty: no file is written

    // Where the bundle is read when it is neither a file nor recovered.
    [[nodiscard]] bool from_secret() const { return file.empty() && !recover; }

    // The bundle from the source given: the file (a warning when group or others can read it), a
    // control plane's configuration read with `talos`, through `endpoint` when set (written 0600
    // to recover_to when given, never over a file; else kept in memory only), else the Secret of
    // `cluster` through `kube`. Whatever the source, refused while a CA rotation is under way when
    // `kube` and `cluster` are given (stages::load_bundle). Warnings go to s.err as the tool
    // `verb`'s.
    struct Sources {
        const talos::TalosContext* talos = nullptr;
        kube::Client* kube = nullptr;
        const doc::Value* cluster = nullptr; // the TalosCluster object
        std::string cluster_name;
        std::int64_t call_timeout_ms = 20000;
        // The endpoint the control plane of --recover-from is read through
        // (TalosOptions::endpoint_for); none: dialled directly.
        std::optional<talos::Address> endpoint;
    };
    [[nodiscard]] Result<bundle::Bundle> load(Streams& s, std::string_view verb,
                                              const Sources& from) const;
};
void add_bundle_flags(cxxopts::Options& opts, bool recover, std::string_view default_text,
                      const std::string& group = "Secrets");
Result<BundleOptions> to_bundle_options(const cxxopts::ParseResult& r, bool recover,
                                        std::string_view usage);
// The bundle flags as given, unchecked, for a caller whose rules differ from to_bundle_options'.
BundleOptions bundle_flags(const cxxopts::ParseResult& r, bool recover);

} // namespace ichor::cli
