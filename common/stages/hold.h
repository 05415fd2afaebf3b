// Stages: hold apply, hold release, hold abort (ADR 0128 decision 1 step 5). The suite writes
// TalosMachines approved and held (ichor.maesh.dev/hold-apply) and their patches; a hold is
// released only after a live zero-drift check, control planes first, each waiting for Ready
// without AdoptionHeld. Nothing here applies anything to a node.
#pragma once

#include "common/bundle/bundle.h"
#include "common/doc/resource_list.h"
#include "common/doc/vocabulary.h"
#include "common/stages/inspect.h"
#include "common/stages/objects.h"
#include "common/stages/reporter.h"
#include "common/stages/stage.h"
#include "common/talos/loop.h"
#include "common/util/clock.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ichor::stages {

// Class B results of a plan (the changes that need consent), as "PATH: CURRENT -> PROPOSED" lines.
std::vector<std::string> consent_lines(const doc::ResourceList& plan);

// Refusals before any write: an error result that stops the whole plan (one naming no node, or a
// node the plan creates a machine for), no object to create. An error about a node the plan
// creates nothing for (refused, blocked) stops only that node.
Status check_plan_writable(const doc::ResourceList& plan);

// "sha256:<hex>" of the objects the plan creates (canonical JSON, without the suite's own
// annotations): the same plan gives the same digest.
std::string plan_digest(const doc::ResourceList& plan);

// Starts the read of a node's configuration on `loop`: `done`, on the loop's thread, gets it
// exactly as the node returns it (the bytes of its MachineConfig resource, secrets included), or
// an error naming the node. The backup, and the check that a saved plan is not stale.
using StartConfigRead = std::function<void(talos::Loop& loop, const talos::Address& node,
                                           std::function<void(Result<std::string>)> done)>;

// A StartConfigRead with the talosconfig `context` (os:admin), through `endpoint` when set (its
// channel made now, one connection for every read), each call bounded by `call_timeout_ms`.
StartConfigRead config_read(const talos::TalosContext& context,
                            const std::optional<talos::Address>& endpoint,
                            std::int64_t call_timeout_ms);

// Many nodes' configurations at once, in the order given, up to `concurrency` in flight.
using ReadConfigs = std::function<std::vector<Result<std::string>>(
    const std::vector<talos::Address>& addresses, int concurrency)>;

// The reads of `start` on talos::Loops (for_each_on_loops), as the inspection makes its own: no
// thread blocked per node in flight.
ReadConfigs configs_reader(StartConfigRead start);

// configs_reader over config_read: the product's reads.
ReadConfigs configs_reader(const talos::TalosContext& context,
                           const std::optional<talos::Address>& endpoint,
                           std::int64_t call_timeout_ms);

// Applies, releases and aborts talk to the Ichor objects through `objects` (objects.h) and, for
// the zero-drift check, to the node through `read_node` (default: inspect_node with `inspect`).
struct ApplyOptions {
    IchorObjects* objects = nullptr; // required
    // Each node's configuration as the node returned it, secrets included, is saved here first:
    // the folder 0700 (created when missing, refused when group or others may enter it), each
    // file 0600, never over an earlier one.
    std::string backup_dir;
    std::string now_rfc3339;    // the applied-at annotation
    Reporter* report = nullptr; // each backup and write as a step; null: silent
    // Required: the fresh read of the nodes, read_concurrency (at least 1) passed on.
    ReadConfigs read_configs;
    int read_concurrency = 1;
    // The bundle for the Secret of a whole-cluster plan (which carries no data); required when
    // the plan has one.
    const bundle::Bundle* bundle = nullptr;
    // TalosMachines created at once (1 to k_max_write_concurrency), when `writers` is set: each
    // worker writes through its own objects from `writers` (called on the caller's thread). Only
    // a run of consecutive TalosMachines of one role in the plan is written concurrently, in the
    // plan's order within the bound; everything else (the bundle Secret, the TalosCluster, the
    // patches) one at a time, as before. `report` is called from the caller's thread, in plan
    // order.
    int write_concurrency = 1;
    ObjectsFactory writers;
};

// The most creates hold apply keeps in flight: --concurrency bounds it too.
inline constexpr int k_max_write_concurrency = 8;

// The stage hold apply (stage.h). `list` is a plan; afterwards it holds the objects as they are
// now in the cluster, one result per object that could not be written and one (StoppedByPlan)
// per node the plan refused or blocked: class C blocks that machine, not the run, so the others
// are written and the outcome counts each stopped node (exit 5 when some were written). Refused
// before any write (the outcome's error): a plan that creates nothing, or whose error results
// name no node or a node it still plans (its own refusal) (Findings); a whole-cluster plan's
// bundle Secret without a bundle (NoBundle); a stale plan (Findings, code StalePlan, the message
// naming each change): a TalosCluster or a TalosConfigPatch of the cluster whose resourceVersion
// is not the one the plan's PlanBasis recorded (a patch or a TalosCluster this plan creates, left
// by an earlier try, is not a change), a patch added or deleted, a node whose configuration
// digest differs; a plan without a PlanBasis (NoPlanBasis); a node or object that cannot be read
// (its error). Then the backups, then each object is created; one that exists with this plan's
// digest is counted as done and skipped (a rerun converges), one with another digest is a
// Conflict result (stopped). Any other failure to create stops the writes: none is started after
// it, those already in flight end and are counted, and the outcome's error is the first failure
// in the plan's order.
Outcome hold_apply(doc::ResourceList& list, const ApplyOptions& options);

// Reads a node for the zero-drift check: the Inspection, its results appended to `results`.
using ReadNode = std::function<doc::Value(const talos::Address&, doc::Value& results)>;

struct ReleaseOptions {
    IchorObjects* objects = nullptr; // required
    std::string cluster;
    std::vector<std::string> machines; // empty: every held machine of the cluster
    InspectOptions inspect;            // the credential for the zero-drift check
    ReadNode read_node;                // empty: inspect_node(address, inspect, results)
    const bundle::Bundle* bundle = nullptr;
    const doc::Value* talos_cluster = nullptr;
    std::int64_t timeout_ms = 15 * 60 * 1000;
    int parallel = 1; // workers released at once, in waves each waiting for Ready (--parallel)
    // Each release and Ready as a step, each wait as a status line; null: silent.
    Reporter* report = nullptr;
    // The deadlines and the pause between two polls of a machine; null: the system clock.
    util::Clock* clock = nullptr;
};

// The options of a release with the talosconfig context, the bundle and the TalosCluster that the
// caller loaded (hold release and adopt build them the same way).
ReleaseOptions release_options(IchorObjects& objects, const std::string& cluster,
                               std::vector<std::string> machines,
                               const talos::TalosContext& context,
                               const std::string& talosconfig_path, std::int64_t call_timeout_ms,
                               const bundle::Bundle& bundle, const doc::Value& talos_cluster,
                               std::int64_t timeout_ms);

// The stage hold release (stage.h): releases held machines, control planes first, one at a time,
// each after the live zero-drift check and then waiting for Ready without AdoptionHeld. `list`
// becomes the machines considered and one result each (Released, or the failure). Outcome: done =
// released, stopped = failed; a cluster API that cannot be listed is the outcome's error.
Outcome hold_release(doc::ResourceList& list, const ReleaseOptions& options);

struct AbortOptions {
    IchorObjects* objects = nullptr; // required
    std::string cluster;
    std::vector<std::string> machines; // empty: every held machine of the cluster
};

// The stage hold abort (stage.h): removes held machines (and their patches) that this suite
// created, setting allow-delete first. Touches no node. For a cluster that a whole-cluster
// adoption wrote (its TalosCluster carries the plan digest) and no --machine: every machine must
// still be held (else the outcome's Findings error, nothing removed), and the adoption's layer
// patches, the TalosCluster and its bundle Secret are removed too. `list` becomes one result per
// object. Outcome: done = objects removed, stopped = objects that could not be removed.
Outcome hold_abort(doc::ResourceList& list, const AbortOptions& options);

} // namespace ichor::stages
