#include "tools/reclaim/reclaim.h"

#include "common/cli/errors.h"
#include "common/cli/output.h"
#include "common/cli/progress.h"
#include "common/cli/prompt.h"
#include "common/cli/run.h"
#include "common/doc/objects.h"
#include "common/stages/reclaim.h"
#include "common/stages/sources.h"
#include "common/util/strings.h"

#include <ostream>

namespace ichor::tools::reclaim {

using objects::MachineView;

namespace {

const cli::ToolInfo k_info{
    "reclaim",
    "Reset a machine that another cluster configured, "
    "and register it as a pending TalosMachine.",
    cli::text_block(R"(
kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME [-n NS]
      [--force-ungraceful] [--confirm-uuid UUID [--confirm-serial SERIAL]]
      [--wait-timeout 15m] [--call-timeout 20s])"),
    cli::text_block(R"(
Steps: inspect the node with the talosconfig of the cluster that configured it (every
call gives up after --call-timeout); assess; confirm by typing the node's UUID on the
terminal (or --confirm-uuid; without a terminal the flag is required); reset STATE and
EPHEMERAL with a reboot, graceful unless assessed otherwise; wait for maintenance mode
(--wait-timeout) and print the node's new maintenance certificate fingerprint; register it
in --cluster: a new pending TalosMachine; a pending one with the same UUID, serial and MAC
addresses is left to discovery, which re-records its fingerprint, disks and links at its next
pass (reclaim writes no status and no Event; the address must be in spec.discovery.addresses:
kubectl ichor discovery add ADDRESS --cluster NAME). Approved and rejected machines are never
changed; nothing is deleted. A UUID that cannot identify one machine (all zeros, a
firmware placeholder, shared with another TalosMachine) is confirmed with the serial
number as well (--confirm-serial).

Refused before anything is reset (exit 1; docs/reclaim.md has every text):
  an Ichor machine    ADDRESS: is an Ichor machine: TalosMachine NAME of cluster "C" is
                      approved with its UUID U; reclaim does not reset a machine Ichor
                      manages
  quorum break        ADDRESS: a reset would break the etcd quorum of cluster "X": after
                      it leaves, N members remain and need Q started, but only H answer
                      (not answering: ...)
  last control plane  ADDRESS: is the last control plane of cluster "X" (its only etcd
                      member); a reset would end that cluster
  etcd not answering  ADDRESS: refusing a graceful reset: etcd of cluster "X" is not
                      running or not answering (REASON); a graceful reset must leave etcd
                      first. With --force-ungraceful it goes on with the warning: cluster
                      "X" is treated as not existing, so its quorum cannot be checked and
                      the reset is not graceful
  wrong confirmation  ADDRESS: the UUID typed (T) is not the node's (U); nothing was reset
A node of a cluster Ichor manages with no approved TalosMachine is a warning, not a
refusal (kubectl ichor adopt --cluster NAME --add-machine ADDRESS adds it without a reset).

stdout: a ResourceList with the TalosMachine as registered and the findings; steps,
warnings and errors on stderr, progress on the terminal only.
)"),
    cli::text_block(R"(
  kubectl ichor reclaim 10.0.0.21 --talosconfig ./lab-b-talosconfig --cluster prod
  # a foreign cluster that is gone (etcd not running): no graceful reset is possible
  kubectl ichor reclaim 10.0.0.21 --talosconfig ./tc --cluster prod --force-ungraceful
  # from a script: no terminal, so the UUID is passed
  kubectl ichor reclaim 10.0.0.21 --talosconfig ./tc --cluster prod --confirm-uuid 4c4c...
)"),
};

std::string machine_table(const doc::ResourceList& list, bool /*color*/) {
    std::vector<std::vector<std::string>> rows{
        {"NAME", "CLUSTER", "APPROVAL", "ADDRESS", "UUID", "FINGERPRINT"}};
    for (const auto& m : list.items) {
        const MachineView v(m);
        rows.push_back({doc::get_string(m, "metadata.name"), v.cluster(), v.approval(), v.address(),
                        v.uuid(), doc::get_string(m, "status.maintenanceFingerprint")});
    }
    return list.items.empty() ? std::string() : util::format_table(rows);
}

} // namespace

Result<cli::Parsed<Options>> parse_options(const std::vector<std::string>& args) {
    auto opts = cli::make_options(k_info);
    cli::add_talos_flags(opts, false);
    cli::add_kube_flags(opts, true);
    opts.add_options("Reclaim")(
        "force-ungraceful", "reset without leaving etcd when the node's etcd does not answer (its "
                            "cluster is treated as not existing)")(
        "confirm-uuid", "the node's UUID, instead of typing it on the terminal",
        cxxopts::value<std::string>(),
        "UUID")("confirm-serial", "the node's serial number, when its UUID cannot identify it",
                cxxopts::value<std::string>(),
                "SERIAL")("wait-timeout", "how long to wait for maintenance mode after the reset",
                          cxxopts::value<std::string>()->default_value("15m"), "DURATION")(
        "address", "", cxxopts::value<std::vector<std::string>>(), "ADDRESS");
    cli::add_output_flags(opts);
    opts.parse_positional({"address"});
    return cli::parse_tool<Options>(
        k_info, opts, args, [](const cxxopts::ParseResult& r) -> Result<Options> {
            Options o;
            auto talos = cli::to_talos_options(r, false);
            if (!talos) {
                return talos.error();
            }
            o.talos = *talos;
            // A reset wipes the machine it reaches: reclaim reaches it only over a direct
            // connection, so that the node reset is the one whose certificate was checked.
            if (!o.talos.endpoints.empty()) {
                return cli::usage_error(
                    "reclaim resets only over a direct connection: --endpoints is refused",
                    "give the node's own address, reachable from here, without --endpoints");
            }
            o.kube = cli::to_kube_options(r, true);
            auto out = cli::to_output_options(r);
            if (!out) {
                return out.error();
            }
            o.output = *out;
            o.force_ungraceful = r.count("force-ungraceful") != 0;
            o.confirm_uuid = cli::string_flag(r, "confirm-uuid");
            o.confirm_serial = cli::string_flag(r, "confirm-serial");
            const std::string usage =
                "kubectl ichor reclaim ADDRESS --talosconfig FILE --cluster NAME";
            auto wait = cli::duration_flag(r, "wait-timeout", "15m, 90s or 1h");
            if (!wait) {
                return wait.error();
            }
            o.wait_timeout_ms = *wait;
            std::vector<std::string> addresses = cli::strings_flag(r, "address");
            if (addresses.size() != 1) {
                return cli::usage_error(addresses.empty()
                                            ? "no address given"
                                            : "one address at a time: reclaim resets one machine",
                                        usage);
            }
            o.address = addresses.front();
            if (o.kube.cluster.empty()) {
                return cli::usage_error("--cluster is required: the TalosCluster the machine joins",
                                        usage);
            }
            if (!o.confirm_serial.empty() && o.confirm_uuid.empty()) {
                return cli::usage_error("--confirm-serial goes with --confirm-uuid", usage);
            }
            return o;
        });
}

namespace {

stages::Outcome execute(const Options& o, cli::Streams& s) {
    auto address = talos::parse_address(o.address);
    if (!address) {
        return stages::failed(address.error());
    }
    auto ctx = o.talos.load(s);
    if (!ctx) {
        return stages::failed(ctx.error());
    }
    auto kube = o.kube.connect(s, "reclaim");
    if (!kube) {
        return stages::failed(kube.error());
    }
    auto node = stages::make_node({*address, ctx->context, ctx->path, o.talos.call_timeout_ms});
    auto registry = stages::make_registry(**kube, (*kube)->ns());
    stages::ReclaimOptions ro;
    ro.address = *address;
    ro.talosconfig_path = ctx->path;
    ro.context_name = ctx->context.name;
    ro.cluster = o.kube.cluster;
    ro.ns = (*kube)->ns();
    ro.force_ungraceful = o.force_ungraceful;
    ro.confirm_uuid = o.confirm_uuid;
    ro.confirm_serial = o.confirm_serial;
    ro.call_timeout_ms = o.talos.call_timeout_ms;
    ro.wait_timeout_ms = o.wait_timeout_ms;
    ro.node = node.get();
    ro.registry = registry.get();

    cli::StreamReporter report(s, "reclaim");
    ro.ui.report = &report;
    if (cli::can_prompt(s)) {
        ro.ui.ask = [&](std::string_view q) { return cli::prompt_line(s, q); };
    }

    doc::ResourceList list;
    stages::Outcome out = stages::reclaim(list, ro);
    if (auto st = cli::write_list(s, o.output, list, machine_table); !st && !out.error) {
        return stages::failed(st.error());
    }
    return out;
}

} // namespace

stages::Outcome run(const std::vector<std::string>& args, cli::Streams& s) {
    return cli::run_parsed(parse_options(args), s, execute);
}

} // namespace ichor::tools::reclaim
