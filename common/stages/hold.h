// Stages: hold apply, hold release, hold abort (ADR 0128 decision 1 step 5). The suite writes
// TalosMachines approved and held (ichor.maesh.dev/hold-apply) and their patches; a hold is
// released only after a live zero-drift check, control planes first, each waiting for Ready
// without AdoptionHeld. Nothing here applies anything to a node.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/doc/vocabulary.h"
#include "common/kube/client.h"
#include "common/stages/inspect.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ichor::stages {

// The annotations of held objects (common/doc/vocabulary.h).
inline constexpr std::string_view k_hold_annotation = vocab::k_annotation_hold_apply;
inline constexpr std::string_view k_allow_delete = vocab::k_annotation_allow_delete;
inline constexpr std::string_view k_plan_digest = vocab::k_annotation_plan_digest;
inline constexpr std::string_view k_applied_at = vocab::k_annotation_applied_at;
inline constexpr std::string_view k_consented = vocab::k_annotation_consented_drift;

// Class B results of a plan (the changes that need consent), as "PATH: CURRENT -> PROPOSED" lines.
std::vector<std::string> consent_lines(const doc::ResourceList& plan);

// Refusals before any write: an error result in the plan, no object to create.
Status check_plan_writable(const doc::ResourceList& plan);

// "sha256:<hex>" of the objects the plan creates (canonical JSON, without the suite's own
// annotations): the same plan gives the same digest.
std::string plan_digest(const doc::ResourceList& plan);

struct ApplyOptions {
    std::string backup_dir;            // the live configurations are saved here first (0600)
    std::string now_rfc3339;           // the applied-at annotation
    std::function<void()> after_write; // called after each write (tests inject a kill here)
    std::function<void(std::string_view)> say; // progress lines
};

struct ApplyOutcome {
    doc::ResourceList list; // the objects as they are now in the cluster, results per object
    int created = 0;
    int existing = 0; // already there from an earlier run of the same plan
    int conflicts = 0;
};

// Writes the plan's TalosMachines (held) and TalosConfigPatches. Backups first; then each object
// is created; one that exists with this plan's digest is counted as existing (a rerun converges),
// one with another digest is a conflict result.
Result<ApplyOutcome> hold_apply(kube::Client& kube, const doc::ResourceList& plan,
                                const ApplyOptions& o);

struct ReleaseOptions {
    std::string cluster;
    std::vector<std::string> machines; // empty: every held machine of the cluster
    InspectOptions inspect;            // the credential for the zero-drift check
    const bundle::Bundle* bundle = nullptr;
    const doc::Value* talos_cluster = nullptr;
    std::int64_t timeout_ms = 15 * 60 * 1000;
    std::function<void(std::string_view)> progress;
    std::function<void(std::string_view)> say;
    std::function<void(std::int64_t)> sleep_ms;
};

struct ReleaseOutcome {
    doc::ResourceList list;
    int released = 0;
    int failed = 0;
};

// The options of a release with the talosconfig context, the bundle and the TalosCluster that the
// caller loaded (hold release and adopt build them the same way).
ReleaseOptions release_options(const std::string& cluster, std::vector<std::string> machines,
                               const talos::TalosContext& context,
                               const std::string& talosconfig_path, std::int64_t call_timeout_ms,
                               const bundle::Bundle& bundle, const doc::Value& talos_cluster,
                               std::int64_t timeout_ms);

// Releases held machines, control planes first, one at a time.
Result<ReleaseOutcome> hold_release(kube::Client& kube, const ReleaseOptions& o);

// Removes held machines (and their patches) that this suite created, setting allow-delete first.
// Touches no node.
Result<doc::ResourceList> hold_abort(kube::Client& kube, const std::string& cluster,
                                     const std::vector<std::string>& machines);

} // namespace ichor::stages
