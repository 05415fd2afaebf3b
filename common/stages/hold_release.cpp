// hold release: each held machine's zero-drift check, its release, and the wait for Ready.
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/credentials.h"
#include "common/stages/hold.h"
#include "common/stages/hold_parts.h"
#include "common/stages/lookup.h"
#include "common/stages/plan.h"
#include "common/stages/trust.h"
#include "common/talos/address.h"
#include "common/talos/client.h"
#include "common/talos/loop.h"
#include "common/talos/loops.h"
#include "common/talos/reach.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace ichor::stages {

using doc::Value;
using objects::MachineView;

using namespace hold_parts;

namespace {

// The live zero-drift check: inspect the node again, check its trust, plan it against the cluster
// with every patch; only the consented class B paths may remain.
// `po` holds the namespace's patches and every machine of it: the plan sees every machine but
// this one (taken out for the check, then put back where it was).
Status zero_drift(const Value& machine, PlanOptions& po, const ReleaseOptions& o) {
    std::string name = name_of(machine);
    auto addr = talos::parse_address(MachineView(machine).address());
    if (!addr) {
        return addr.error().wrap(name);
    }
    doc::ResourceList list;
    list.items.push_back(o.read_node ? o.read_node(*addr, list.results)
                                     : inspect_node(*addr, o.inspect, list.results));
    const std::string& ns = o.objects->ns();
    check_trust(list, {o.bundle, o.cluster, ns});
    std::vector<std::pair<std::size_t, Value>> taken; // from the end, so that indexes hold
    for (std::size_t i = po.machines.size(); i-- > 0;) {
        if (name_of(po.machines[i]) == name) {
            taken.emplace_back(i, std::move(po.machines[i]));
            po.machines.erase(po.machines.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    Outcome planned = plan(list, po);
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
        po.machines.insert(po.machines.begin() + static_cast<std::ptrdiff_t>(it->first),
                           std::move(it->second));
    }
    if (planned.error) {
        return planned.error->wrap(name);
    }
    std::set<std::string> consented;
    if (auto parsed =
            doc::parse_one(annotation(machine, vocab::k_annotation_consented_drift), "consented");
        parsed && parsed->is_array()) {
        for (const auto& p : *parsed) {
            consented.insert(p.get<std::string>());
        }
    }
    std::vector<std::string> problems;
    for (const auto& r : list.results) {
        std::string sev = r.value("severity", "");
        const Value* f = doc::find_path(r, "field");
        std::string path = f != nullptr ? f->value("path", "") : "";
        if (sev == "error" || is_class(r, "A") || (is_class(r, "B") && !consented.contains(path))) {
            problems.push_back(r.value("message", ""));
        }
    }
    if (!problems.empty()) {
        return make_error(
            ErrorKind::Findings,
            name +
                ": the live zero-drift check failed; the hold stays: " + util::join(problems, "; "),
            "kubectl ichor inspect " + addr->text + " | kubectl ichor trustcheck --cluster " +
                o.cluster + " | kubectl ichor drift --cluster " + o.cluster,
            vocab::code::k_drift_since_plan);
    }
    return ok_status();
}

// Waits for machine `name`, the `index`th of `total` being released, to be Ready without
// AdoptionHeld; the progress line says which machine, how long it has waited and for what.
Status wait_ready(const std::string& name, std::size_t index, std::size_t total,
                  const ReleaseOptions& o) {
    util::Clock& clock = o.clock != nullptr ? *o.clock : util::system_clock();
    const std::int64_t start = clock.monotonic_ms();
    const std::int64_t deadline = start + o.timeout_ms;
    std::string last = "no answer yet";
    while (clock.monotonic_ms() < deadline) {
        auto m = o.objects->get("talosmachines", o.objects->ns(), name);
        if (m) {
            std::string ready = condition_status(*m, vocab::k_condition_ready);
            std::string held = condition_status(*m, vocab::k_condition_adoption_held);
            if (ready == "True" && held != "True") {
                return ok_status();
            }
            last = "Ready=" + (ready.empty() ? "unknown" : ready) +
                   (held == "True" ? ", AdoptionHeld" : "");
        }
        if (o.report != nullptr) {
            const std::int64_t waited = clock.monotonic_ms() - start;
            o.report->status("machine " + std::to_string(index) + " of " + std::to_string(total) +
                             ": waiting for " + name + " to be Ready, " +
                             util::format_duration_ms(waited / 1000 * 1000) + " of " +
                             util::format_duration_ms(o.timeout_ms) + " (" + last + ")");
        }
        clock.sleep_ms(500);
    }
    return make_error(ErrorKind::Unreachable,
                      name + ": not Ready within " + util::format_duration_ms(o.timeout_ms) + " (" +
                          last + ")",
                      "kubectl get talosmachine -n " + o.objects->ns() + " " + name + " -o yaml",
                      vocab::code::k_timeout);
}

// The bytes of a node's MachineConfig resource, as the node returned them.
Result<std::string> machine_config_bytes(Result<talos::Resource> res) {
    if (!res) {
        return res.error();
    }
    auto spec = talos::decode_spec<talos::spec::MachineConfig>(*res);
    if (!spec) {
        return spec.error();
    }
    return spec->yaml_marshalled();
}

} // namespace

StartConfigRead config_read(const talos::TalosContext& context,
                            const std::optional<talos::Address>& endpoint,
                            std::int64_t call_timeout_ms) {
    // made now, its endpoint's channel shared by every read and loop
    auto reach = std::make_shared<const talos::Reach>(
        talos::reach_for(&context, false, endpoint, call_timeout_ms));
    return [reach](talos::Loop& loop, const talos::Address& node,
                   std::function<void(Result<std::string>)> done) {
        // The client may go once its call is started; the call keeps what it needs.
        reach->client(node).cosi_get(loop, talos::kind::k_machine_config,
                                     [done = std::move(done)](Result<talos::Resource> r) {
                                         done(machine_config_bytes(std::move(r)));
                                     });
    };
}

ReadConfigs configs_reader(StartConfigRead start) {
    return
        [start = std::move(start)](const std::vector<talos::Address>& addresses, int concurrency) {
            std::vector<Result<std::string>> out(addresses.size(),
                                                 make_error(ErrorKind::Internal, "not read"));
            talos::for_each_on_loops(
                concurrency, addresses.size(),
                [&](talos::Loop& loop, std::size_t i, const std::function<void()>& done) {
                    start(loop, addresses[i], [&out, i, &done](Result<std::string> r) {
                        out[i] = std::move(r);
                        done();
                    });
                });
            return out;
        };
}

ReadConfigs configs_reader(const talos::TalosContext& context,
                           const std::optional<talos::Address>& endpoint,
                           std::int64_t call_timeout_ms) {
    return configs_reader(config_read(context, endpoint, call_timeout_ms));
}

ReleaseOptions release_options(IchorObjects& objects, const std::string& cluster,
                               std::vector<std::string> machines,
                               const talos::TalosContext& context,
                               const std::string& talosconfig_path, std::int64_t call_timeout_ms,
                               const bundle::Bundle& bundle, const doc::Value& talos_cluster,
                               std::int64_t timeout_ms) {
    ReleaseOptions ro;
    ro.objects = &objects;
    ro.cluster = cluster;
    ro.machines = std::move(machines);
    ro.inspect.context = context;
    ro.inspect.talosconfig_path = talosconfig_path;
    ro.inspect.call_timeout_ms = call_timeout_ms;
    ro.bundle = &bundle;
    ro.talos_cluster = &talos_cluster;
    ro.timeout_ms = timeout_ms;
    return ro;
}

namespace {

bool is_control_plane(const Value& m) {
    return MachineView(m).is_control_plane();
}

// The held machines chosen (all when none is named), control planes first.
std::vector<Value> held_machines(const std::vector<Value>& machines,
                                 const std::vector<std::string>& chosen) {
    std::vector<Value> held;
    for (const auto& m : machines) {
        bool named =
            chosen.empty() || std::find(chosen.begin(), chosen.end(), name_of(m)) != chosen.end();
        if (named && has_annotation(m, vocab::k_annotation_hold_apply)) {
            held.push_back(m);
        }
    }
    std::stable_sort(held.begin(), held.end(), [](const Value& a, const Value& b) {
        return is_control_plane(a) > is_control_plane(b);
    });
    return held;
}

// Control planes one at a time; workers in waves of `parallel`, each wave waiting for Ready.
std::vector<std::vector<const Value*>> release_waves(const std::vector<Value>& held, int parallel) {
    std::vector<std::vector<const Value*>> waves;
    for (const auto& m : held) {
        if (is_control_plane(m) || waves.empty() || is_control_plane(*waves.back().front()) ||
            static_cast<int>(waves.back().size()) >= std::max(1, parallel)) {
            waves.emplace_back();
        }
        waves.back().push_back(&m);
    }
    return waves;
}

Outcome release(doc::ResourceList& list, const ReleaseOptions& o) {
    IchorObjects& objects = *o.objects;
    auto read = cluster_objects(objects, o.cluster);
    if (!read) {
        return failed(read.error());
    }
    auto& [machines, patches] = *read;
    list = doc::ResourceList{};
    std::vector<Value> held = held_machines(machines, o.machines);
    const auto waves = release_waves(held, o.parallel);
    // One PlanOptions for every zero-drift check of the release, instead of a copy of the
    // namespace's machines and patches for each machine: quadratic, a million copies of a
    // TalosMachine on 1,000 machines (issue 22, "a thousand nodes").
    PlanOptions po{o.cluster, o.objects->ns(), true, o.talos_cluster, o.bundle, {}, {}};
    po.patches = std::move(patches);
    po.machines = std::move(machines);
    Outcome out;
    std::size_t index = 0;
    for (const auto& wave : waves) {
        std::vector<std::pair<const Value*, Status>> started;
        for (const Value* m : wave) {
            const std::string name = name_of(*m);
            Status st = zero_drift(*m, po, o);
            if (st) {
                Value patch = {
                    {"metadata",
                     {{"annotations", {{std::string(vocab::k_annotation_hold_apply), nullptr}}}}}};
                auto r = objects.merge_patch("talosmachines", name, patch);
                st = r ? ok_status() : Status(r.error().wrap("releasing " + name));
            }
            if (st) {
                step(o.report, "released the hold on " + name + "; waiting for Ready");
            }
            started.emplace_back(m, std::move(st));
        }
        for (auto& [m, st] : started) {
            ++index;
            const std::string name = name_of(*m);
            if (st) {
                st = wait_ready(name, index, held.size(), o);
            }
            if (st) {
                ++out.done;
                step(o.report, name + " is Ready");
                list.add_result(doc::Severity::Info, name + ": released and Ready",
                                vocab::code::k_released, m);
            } else {
                ++out.stopped;
                list.add_result(doc::Severity::Error,
                                st.error().message + "; hint: " + st.error().hint, st.error().code,
                                m);
            }
            list.items.push_back(*m);
        }
    }
    if (held.empty()) {
        list.add_result(doc::Severity::Info, "no held machine of cluster " + o.cluster,
                        vocab::code::k_nothing_held);
    }
    return out;
}

} // namespace

Outcome hold_release(doc::ResourceList& list, const ReleaseOptions& o) {
    return run_stage("hold-release", list, [&] { return release(list, o); });
}

} // namespace ichor::stages
