// Stage: the node confirms the plan (issue 12, "The node confirms the plan"). Before consent, each
// planned machine's rendered configuration, with every patch that selects it, is sent to its node
// with ApplyConfiguration in dry-run mode, as `talosctl apply-config --dry-run` does: the node
// validates it with Talos's own code and answers with the changes it would make; nothing is
// applied. The answer goes into the plan beside the suite's own drift. docs/stream.md, "Node
// check", is the format.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/stages/inspect.h"
#include "common/stages/stage.h"
#include "common/talos/client.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages {

// Where a machine's node is: its address (the TalosMachine's spec.address) and, when its
// Inspection was read through an endpoint (spec.endpoint), that endpoint's text.
struct NodeTarget {
    talos::Address address;
    std::string via_endpoint; // empty: dial the address directly
};

// Starts sending `config` (the rendered documents as one YAML stream) to the node in dry-run mode,
// on `loop`: `done`, on the loop's thread, gets the node's answer.
using DryRunNode =
    std::function<void(talos::Loop& loop, const NodeTarget& target, const std::string& config,
                       talos::NodeClient::Done<talos::DryRunAnswer> done)>;

struct NodeCheckOptions {
    std::string cluster;                       // the TalosCluster's name
    std::string ns;                            // its namespace
    const doc::Value* talos_cluster = nullptr; // the TalosCluster object (required)
    const bundle::Bundle* bundle = nullptr;    // its secrets bundle (required)
    // The namespace's TalosConfigPatch objects. The plan's own TalosConfigPatch items are added to
    // them (an item replaces a patch of the same name), so a machine renders with every layer.
    std::vector<doc::Value> patches;
    // The credential, the call timeout and the concurrency (machines checked at once).
    InspectOptions inspect;
    // Empty: talos::NodeClient::dry_run_configuration with `inspect`'s credential. Either way the
    // machines are checked on talos::Loops (for_each_on_loops).
    DryRunNode dry_run;
    // Reads a node's configuration as it returns it, for a machine whose patches carry
    // credentials (spec.secretValues): each value is taken from there by its digest, so that the
    // node is sent the configuration Ichor will render, never digests. Empty: a talos::NodeClient
    // with `inspect`'s credential. Nothing read is printed.
    std::function<Result<std::string>(const NodeTarget& target)> read_config;
};

// The stage (stage.h), named "node-check". For each TalosMachine item of the plan (each planned
// machine; other items pass through), in parallel up to inspect.concurrency: renders it (role,
// name, install fields, the cluster and every patch that selects it, as the drift stage and the
// zero-drift check render) and dry-runs the result on its node (the Inspection of its address
// says whether through an endpoint). Results, each naming the machine and tagged with its node:
//   info    NodeCheck          the node's answer: its changes ("no changes" when none)
//   error   NodeRejected       the node refused the configuration, in its words; the machine is
//                              blocked: its TalosMachine and its machine-layer patches leave the
//                              plan's items
//   info    InstallReplaced    install settings of the node (disk, selector, image, wipe) that the
//                              render replaces with the TalosMachine's: named, never a mismatch
//   warning NodeCheckMismatch  the paths the node would change and the plan's class B paths for
//                              that machine disagree (both named): the render or the diff is wrong
//   error   NodeCheckFailed    the node could not be asked (unreachable, timeout, a render that
//                              fails); the machine is blocked as for NodeRejected
// Outcome: done = machines the node accepted, stopped = machines blocked (unreachable counts the
// NodeCheckFailed ones that did not answer). A TalosCluster the render cannot use is the
// outcome's error and the list is unchanged. A plan without TalosMachine items is done at once.
Outcome node_check(doc::ResourceList& plan, const NodeCheckOptions& options);

// The outcome of a plan (the drift stage's) after its node check: the machines the check blocked
// move from done to stopped; the check's error, when it has one, is the outcome's.
Outcome with_node_check(Outcome planned, const Outcome& checked);

// The configuration paths a dry run's answer changes, read from its unified diff ("Config
// diff:"): for each added or removed line, its key with the parents that the diff's context shows,
// joined with '.' (a list item names its list). A path whose top is outside the context is
// partial: it is a suffix of the full path. A line of a typed document whose `kind:` the hunk shows
// is named by the v1alpha1 path the layout table gives its field ("Kind.path" where the table has
// none), and a document added or removed whole by one name: the v1alpha1 subtree it holds
// (DiscoveryServiceConfig: cluster.discovery), or the v1alpha1 entry a named document is
// (RegistryMirrorConfig docker.io: machine.registries.mirrors.docker.io), else its kind. Empty
// for "No changes." or an answer without a diff.
std::vector<std::string> dry_run_changes(std::string_view mode_details);

// The answer with every secret value in its diff replaced by "sha256:<hex>" of the value (a line
// whose key is a secret, or `config`, and every line of a block under one; docs/design.md
// "Secrets"), so that the plan can carry it. Lines before the diff stay as they are.
std::string redact_dry_run(std::string_view mode_details);

// Whether a changed path of the node's diff (possibly partial, see dry_run_changes) and a path of
// the plan's drift results name the same fact: one ends where the other begins (the diff names a
// parent list, or shows only the tail of the path), compared key by key.
bool same_fact(std::string_view node_path, std::string_view plan_path);

} // namespace ichor::stages
