// Shell completion in cobra's protocol (reference/reliability.md D2), computed from a tool's own
// flag definitions: `kubectl-ichor-VERB __complete ARGS... WORD` prints one candidate per line
// ("VALUE<TAB>DESCRIPTION", the description left out by `__completeNoDesc` or
// KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS=false), then the directive line ":N", and exits 0. The
// flags offered are the cxxopts::Options the tool parses with, so a flag in --help is always
// offered and no list is kept by hand.
//
// What a value completes to follows from its definition:
//   --output                        the formats to_output_options accepts (k_output_formats)
//   --cluster, a CLUSTER argument   the TalosClusters the API serves (through the kube flags on
//                                   the line), nothing when it does not answer within 2.5 s
//   --talos-context, and --context  the contexts of the talosconfig (--talosconfig on the line,
//   of a tool without kube flags    else $TALOSCONFIG, else ~/.talos/config)
//   --context of the kube flags     the kubeconfig's contexts
//   an ADDRESS                      the nodes of the talosconfig's context (the one on the line,
//                                   else its current), else its endpoints
//   a FILE                          the shell's file completion (directive 0)
//   a DIR                           directories (directive 16)
//   an argument "a|b|c"             those words, for the first positional argument only
//   anything else                   nothing (directive 4: no file completion either)
// Positional arguments are the one option a tool registers without a description (cxxopts hides
// it from --help); its argument help ("ADDRESS", "CLUSTER", "apply|release|abort") says what
// completes it. Completion never does a tool's work, prints nothing on stderr and cannot fail:
// an unreadable talosconfig or kubeconfig gives no candidates.
#pragma once

#include "common/util/env.h"

#include <cxxopts.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::cli {

struct KubeOptions;

// cobra's ShellCompDirective bits.
enum CompDirective : int {
    k_comp_default = 0, // the shell's file completion when there are no candidates
    k_comp_error = 1,
    k_comp_no_space = 2,
    k_comp_no_file = 4,
    k_comp_filter_ext = 8,
    k_comp_filter_dirs = 16,
    k_comp_keep_order = 32,
};

struct Candidate {
    std::string value;
    std::string description; // one line; may be empty
};

struct Completion {
    std::vector<Candidate> candidates;
    int directive = k_comp_no_file;
};

// True when args[1] is "__complete" or "__completeNoDesc" (args[0] is the program).
bool is_completion_request(const std::vector<std::string>& args);

// Whether to print descriptions: `request` is "__complete" and neither
// KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS nor (when that is unset) COBRA_COMPLETION_DESCRIPTIONS
// says false (cobra's switch for shells that cannot show them).
bool completion_descriptions(std::string_view request, const Environment& env);

// cobra's output: a line per candidate, "VALUE\tDESCRIPTION" (VALUE alone when `descriptions` is
// false or it has none; descriptions cut at their first line break), then ":DIRECTIVE".
std::string format_completion(const Completion& c, bool descriptions);

// One option as a tool's cxxopts::Options defines it.
struct FlagSpec {
    std::string name;        // the long name: "output"
    std::string short_name;  // "o", or empty
    std::string description; // the --help text
    std::string arg_help; // "FORMAT", "FILE", "ADDRESS", "apply|release|abort"; empty for a switch
    bool takes_value = false;
    bool repeatable = false;
    bool positional = false; // registered without a description: the positional arguments
};

// Every option of `opts`, group by group in the order --help lists them.
std::vector<FlagSpec> flag_specs(const cxxopts::Options& opts);

// A completion request: the tool's flags and the words typed after `__complete`, the last being
// the word under completion ("" for a new word).
struct CompletionRequest {
    std::vector<FlagSpec> flags;
    std::vector<std::string> words;
    bool descriptions = true;
};

// The request of `args` (is_completion_request(args) is true), over the flags of `opts`.
CompletionRequest completion_request(const cxxopts::Options& opts,
                                     const std::vector<std::string>& args);

// The TalosClusters in the namespace of the kube flags on the line, given a bound in ms for the
// whole look-up; empty when there are none or the API does not answer.
using ClusterLister =
    std::function<std::vector<Candidate>(const KubeOptions& kube, std::int64_t bound_ms)>;
// The contexts of the kubeconfig the kube flags name.
using KubeContextLister = std::function<std::vector<Candidate>(const KubeOptions& kube)>;

// Where dynamic values come from. A lister left empty offers nothing.
struct CompletionSources {
    Environment env; // $TALOSCONFIG, $HOME, $KUBECONFIG
    ClusterLister clusters;
    KubeContextLister kube_contexts;
    std::int64_t cluster_bound_ms = 2500;
};

// The candidates and directive for `req`; candidates already filtered by the word's prefix.
Completion complete(const CompletionRequest& req, const CompletionSources& src);

// The listers over the Kubernetes API and kubeconfig (complete_kube.cpp: only a tool that has
// the kube flags links them, so inspect starts without libcurl; docs/design.md "Linking").
std::vector<Candidate> list_clusters(const KubeOptions& kube, const Environment& env,
                                     std::int64_t bound_ms);
std::vector<Candidate> list_kube_contexts(const KubeOptions& kube, const Environment& env);

// The scripts `kubectl-ichor completion SHELL` prints: "bash", "zsh", "fish" (completion of
// kubectl-ichor run by its own name, through `kubectl-ichor __complete`), and "kubectl-shim" (the
// executable kubectl_complete-ichor that kubectl >= 1.26 runs for `kubectl ichor ...`). Empty
// for another name.
std::string_view completion_script(std::string_view shell);
// The names completion_script knows, in the order --help lists them.
const std::vector<std::string_view>& completion_shells();

} // namespace ichor::cli
