// Stage: plan. From trusted Inspections (kubectl ichor trustcheck), the TalosCluster, its
// TalosConfigPatches and TalosMachines and the secrets bundle, the objects an adoption creates,
// and the drift of each machine as results (ADR 0128 decision 1 steps 3-4, amendment 4).
// docs/stream.md, "Plan", is the format. Pure: the caller reads the cluster and writes nothing.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/drift/drift.h"
#include "common/render/render.h"
#include "common/stages/stage.h"
#include "common/util/result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages {

// What plan() rendered and diffed for one writable machine, kept for a caller that plans on from
// it (the whole cluster's layering, plan_cluster.cpp): its render and what drift::analyze worked
// from.
struct KeptWork {
    std::vector<doc::Value> rendered;
    drift::Worked worked;
    bool usable = true; // false: two machines of one address, neither kept
};

struct PlanOptions {
    std::string cluster; // the TalosCluster's name
    std::string ns;      // its namespace
    // The Inspections are machines being added to a recorded cluster (adopt --add-machine): a
    // run where no machine is writable is refused ("every machine is blocked ... nothing was
    // written"); otherwise it says "nothing to adopt: X blocked".
    bool add_machine = false;
    const doc::Value* talos_cluster = nullptr; // the TalosCluster object (required)
    const bundle::Bundle* bundle = nullptr;    // its secrets bundle (required)
    std::vector<doc::Value> patches;           // TalosConfigPatch objects of the namespace
    std::vector<doc::Value> machines;          // TalosMachine objects of the namespace
    // When set, each writable machine's KeptWork, by its TalosMachine's spec.address.
    std::map<std::string, KeptWork>* kept = nullptr;
    // When set, the normalized configuration (drift::normalize) of nodes the caller has read
    // already, by their Inspection's spec.node: not normalized again.
    const std::map<std::string, const doc::Value*>* live_facts = nullptr;
};

// The stage (stage.h). Appends, for each writable machine, the TalosMachine (approved, held with
// the ichor.maesh.dev/hold-apply annotation) and its class A TalosConfigPatch `<machine>-adopted`
// to `list.items`, exactly as they would be created; the Inspections and every other item stay.
// The planned objects of an earlier run (TalosMachine and TalosConfigPatch items) are replaced,
// so a plan planned again gives the same list. Results: class A (info), B (warning, consent
// needed) and C (error, blocks the machine) with field.path, current and proposed values, tags
// class and code; refusals and skips (one result per node, naming it, with its hint); a closing
// summary. Outcome: done = writable machines, stopped = blocked or refused ones, skipped = nodes
// that already are a TalosMachine. A TalosCluster the render cannot use (missing fields, unknown
// version contract) is the outcome's Config error and nothing is added.
Outcome plan(doc::ResourceList& list, const PlanOptions& options);

// The documents Ichor's controller renders for TalosMachine `machine` (an object as the plan
// writes it: spec.role, metadata.name, spec.install): the cluster, then every patch of `patches`
// that selects it (`patches` indexes the list), in the controller's order. The same render as the
// drift stage's and so the zero-drift check's (render::render). A patch that does not apply
// is the render's Findings error (PatchDoesNotApply).
// `secrets` resolves the patches' spec.secretValues (empty: their digests).
Result<std::vector<doc::Value>> render_machine(const doc::Value& machine,
                                               const render::ClusterSpec& cluster,
                                               const bundle::Bundle& bundle,
                                               const render::PatchIndex& patches,
                                               const render::SecretLookup& secrets = {});

// The plan's record of what it was made from, one item of the suite's API (docs/stream.md,
// "PlanBasis"): hold apply re-reads each before its first write and refuses a stale plan.
inline constexpr std::string_view k_plan_basis_kind = "PlanBasis";
bool is_plan_basis(const doc::Value& item);

// -o table: one row per planned TalosMachine: MACHINE ROLE ADDRESS INSTALL-DISK IMAGE PATCH.
std::string plan_table(const doc::ResourceList& list, bool color);

// The TalosMachine name of a node: its hostname when that is a valid DNS-1123 subdomain (short
// enough for "-adopted" to follow), else "machine-" and its UUID in lower case.
std::string machine_name(const std::string& hostname, const std::string& uuid);

// Talos's support matrix: the Kubernetes minors a Talos minor supports, {first, last}; {0, 0} for
// a Talos minor this release does not know.
std::pair<int, int> supported_kubernetes(int talos_minor);

} // namespace ichor::stages
