// The reclaim flow (stages::reclaim) and its network side: the node over common/talos, the
// registry over common/kube. The decisions it calls are in reclaim.cpp.
#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/kube/status.h"
#include "common/stages/inspect.h"
#include "common/stages/reclaim.h"
#include "common/stages/sources.h"
#include "common/talos/errors.h"
#include "common/talos/reach.h"
#include "common/util/strings.h"

#include <algorithm>

namespace ichor::stages {

using doc::Value;
using inspection::View;
namespace f = inspection::field;

namespace {

std::string lower(std::string_view s) {
    return util::to_lower(util::trim(s));
}

std::string in_quotes(const std::string& s) {
    return "\"" + s + "\"";
}

Error refusal(std::string message, std::string hint, std::string_view code) {
    return make_error(ErrorKind::Findings, std::move(message), std::move(hint), code);
}

// The object as printed: without metadata.managedFields, as kubectl shows it.
Value shown(Value obj) {
    if (obj.contains("metadata") && obj["metadata"].is_object()) {
        obj["metadata"].erase("managedFields");
    }
    return obj;
}

// The first error result of an inspection, as an Error (the node could not be read).
std::optional<Error> first_error(const Value& results) {
    for (const auto& r : results) {
        if (r.value("severity", "") != "error") {
            continue;
        }
        std::string code;
        if (r.contains("tags") && r["tags"].is_object()) {
            code = r["tags"].value(std::string(doc::k_tag_code), "");
        }
        ErrorKind kind = ErrorKind::Config;
        if (talos::node_gone(code) || code == talos::code::k_internal) {
            kind = ErrorKind::Unreachable;
        }
        return make_error(kind, r.value("message", ""), "", code);
    }
    return std::nullopt;
}

// --- the flow --------------------------------------------------------------------------------

struct ReclaimOutcome {
    doc::ResourceList list;       // the TalosMachine as registered, and the findings
    std::optional<Error> failure; // a refusal (nothing done) or a failure after the reset
    bool registered = false;
};

struct Flow {
    const ReclaimOptions& o;
    ReclaimNode& node;
    ReclaimRegistry& reg;
    const ReclaimUi& ui;
    ReclaimOutcome out;
    std::string fingerprint;            // the node's new maintenance certificate fingerprint
    std::vector<std::string> discovery; // spec.discovery.addresses of the cluster

    // Whether discovery probes the address: an entry that is the same host and port.
    [[nodiscard]] bool in_discovery() const {
        return std::any_of(discovery.begin(), discovery.end(), [this](const std::string& e) {
            auto a = talos::parse_address(e);
            return a && a->host == o.address.host && a->port == o.address.port;
        });
    }

    // The reporter's kinds of message (reporter.h), each under the reporter's name.
    void step(const std::string& line) const {
        if (ui.report != nullptr) {
            ui.report->step(line);
        }
    }
    void warning(const std::string& line, std::string_view code) {
        if (ui.report != nullptr) {
            ui.report->warning(line);
        }
        Value tags = Value::object();
        tags[std::string(doc::k_tag_node)] = o.address.text;
        out.list.add_result(doc::Severity::Warning, line, code, nullptr, std::move(tags));
    }
    void warning(const Finding& f) { warning(f.message, f.code); }
    // An info result about the node (and no line: the caller says it).
    void note(const std::string& line, std::string_view code, Value tags = Value::object()) {
        tags[std::string(doc::k_tag_node)] = o.address.text;
        out.list.add_result(doc::Severity::Info, line, code, nullptr, std::move(tags));
    }
    // The registration happened: the step line and its result.
    void done(const std::string& line, std::string_view code) {
        step(line);
        note(line, code);
        out.registered = true;
    }
    void status(const std::string& line) const {
        if (ui.report != nullptr) {
            ui.report->status(line);
        }
    }
    void end_status() const {
        if (ui.report != nullptr) {
            ui.report->end_status();
        }
    }
    ReclaimOutcome fail(Error e) {
        end_status();
        Value tags = Value::object();
        tags[std::string(doc::k_tag_node)] = o.address.text;
        if (!e.hint.empty()) {
            tags[std::string(vocab::k_tag_hint)] = e.hint;
        }
        out.list.add_result(doc::Severity::Error, e.message,
                            e.code.empty() ? vocab::code::k_failed : e.code, nullptr,
                            std::move(tags));
        out.failure = std::move(e);
        return std::move(out);
    }
    [[nodiscard]] util::Clock& clock() const {
        return ui.clock != nullptr ? *ui.clock : util::system_clock();
    }
    void sleep(std::int64_t ms) const {
        if (ms > 0) {
            clock().sleep_ms(ms);
        }
    }

    // The typed confirmation: the UUID, and the serial number as well when the UUID is weak.
    Status confirm(const Value& item, const std::string& weakness) {
        const std::string& a = o.address.text;
        const std::string uuid = View(item).uuid();
        const std::string serial = View(item).serial();
        auto answer = [&](const std::string& given,
                          const std::string& question) -> std::optional<std::string> {
            if (!given.empty()) {
                return given;
            }
            return ui.ask ? ui.ask(question) : std::nullopt;
        };
        auto typed = answer(o.confirm_uuid, "To reset " + a + ", type its UUID: ");
        if (!typed) {
            return refusal(a + ": no terminal to confirm the reset on: pass --confirm-uuid with "
                               "the node's UUID; "
                               "nothing was reset",
                           "kubectl ichor reclaim " + a + " ... --confirm-uuid UUID",
                           vocab::code::k_confirmation_required);
        }
        if (lower(*typed) != lower(uuid)) {
            return refusal(a + ": the UUID typed (" +
                               (typed->empty() ? std::string("nothing") : *typed) +
                               ") is not the node's (" + uuid + "); nothing was reset",
                           "", vocab::code::k_confirmation_mismatch);
        }
        if (weakness.empty()) {
            return ok_status();
        }
        warning(a + ": its UUID " + (uuid.empty() ? std::string("(none)") : uuid) +
                    " cannot identify one machine (" + weakness +
                    "): confirm its serial number as well",
                vocab::code::k_weak_uuid);
        auto typed_serial =
            answer(o.confirm_serial, "To reset " + a + ", type its serial number: ");
        if (!typed_serial) {
            return refusal(
                a + ": no terminal to confirm the serial number on: pass --confirm-serial with the "
                    "node's serial number as well; nothing was reset",
                "kubectl ichor reclaim " + a + " ... --confirm-uuid UUID --confirm-serial SERIAL",
                vocab::code::k_confirmation_required);
        }
        if (util::trim(*typed_serial) != util::trim(serial)) {
            return refusal(a + ": the serial number typed (" +
                               (typed_serial->empty() ? std::string("nothing") : *typed_serial) +
                               ") is not the node's (" + serial + "); nothing was reset",
                           "", vocab::code::k_confirmation_mismatch);
        }
        return ok_status();
    }

    static std::string waiting_reason(const Error& e) {
        if (e.code == talos::code::k_timeout) {
            return "not answering";
        }
        if (e.code == talos::code::k_unreachable) {
            return "not listening: rebooting";
        }
        return "still running its configuration";
    }

    // Polls without a client certificate until the node answers in maintenance mode.
    Result<Value> wait_for_maintenance(const std::string& actor) {
        const std::string& a = o.address.text;
        const std::string limit = util::format_duration_ms(o.wait_timeout_ms);
        step("Wait for " + a + " to come back in maintenance mode (at most " + limit + ")");
        const std::int64_t start = clock().monotonic_ms();
        const std::int64_t deadline = start + o.wait_timeout_ms;
        auto left = [&] { return deadline - clock().monotonic_ms(); };
        std::string last = "the reset was just sent";
        sleep(std::min(o.poll_interval_ms, left()));
        while (left() > 0) {
            auto p = node.probe_maintenance(std::min(o.call_timeout_ms, left()));
            if (p) {
                std::string stage = View(*p).machine_stage();
                if (stage.empty() || stage == "maintenance") {
                    end_status();
                    return p;
                }
                last = "answers without a certificate, stage " + stage;
            } else {
                last = waiting_reason(p.error());
            }
            const std::int64_t waited = (clock().monotonic_ms() - start) / 1000;
            status("waiting for " + a + " in maintenance mode: " + std::to_string(waited) +
                   "s of " + limit + " (" + last + ")");
            sleep(std::min(o.poll_interval_ms, left()));
        }
        end_status();
        return make_error(ErrorKind::Unreachable,
                          a + " did not come back in maintenance mode within " + limit +
                              " (last: " + last + "); the reset was sent (actor ID " + actor + ")",
                          "kubectl ichor inspect " + a + " --insecure", vocab::code::k_timeout);
    }

    ReclaimOutcome register_machine(const Value& maint) {
        const std::string& a = o.address.text;
        step("Register " + a + " in cluster " + o.cluster + " (namespace " + o.ns + ")");
        auto machines = reg.machines();
        if (!machines) {
            return fail(machines.error());
        }
        Registration r = plan_registration(*machines, maint, {o.cluster, o.ns, a});
        for (const auto& w : r.warnings) {
            warning(w);
        }
        switch (r.action) {
        case Registration::Action::Create: {
            auto created = reg.create_machine(r.machine);
            if (!created) {
                Error e = created.error().wrap(a + ": creating TalosMachine " + r.name);
                e.kind = e.code == kube::reason::k_already_exists ? ErrorKind::Partial : e.kind;
                return fail(e);
            }
            auto patched = reg.patch_machine_status(r.name, r.status);
            if (!patched) {
                out.list.items.push_back(shown(*created));
                return fail(patched.error().wrap(a + ": TalosMachine " + r.name +
                                                 " was created, but recording its status failed"));
            }
            out.list.items.push_back(shown(*patched));
            done("created pending TalosMachine " + r.name + " (fingerprint " + fingerprint +
                     "); approve it: kubectl patch talosmachine " + r.name + " -n " + o.ns +
                     " --type merge -p '{\"spec\":{\"approval\":\"Approved\"}}'",
                 vocab::code::k_registered);
            return std::move(out);
        }
        case Registration::Action::Discovery: {
            // The refresh is discovery's (Ichor's controller): the CLI writes no status and no
            // Event for it, whichever path reset the node (amendment "discovery refreshes pending
            // machines"). It only says so, and whether discovery will look at the address.
            out.list.items.push_back(shown(r.machine));
            if (!in_discovery()) {
                warning(a + " is not in spec.discovery.addresses of TalosCluster " + o.cluster +
                            ", so discovery does not probe it and pending TalosMachine " + r.name +
                            " keeps the old fingerprint; add it: kubectl ichor discovery add " + a +
                            " --cluster " + o.cluster + " -n " + o.ns,
                        vocab::code::k_not_in_discovery);
            }
            done("pending TalosMachine " + r.name + " records maintenance fingerprint " +
                     (r.old_fingerprint.empty() ? std::string("(none)") : r.old_fingerprint) +
                     " and the node now presents " + fingerprint +
                     ": discovery re-records its fingerprint, disks and links at its next pass "
                     "(Event MaintenanceIdentityRefreshed); " +
                     std::string(vocab::k_nothing_written) + " to it by reclaim",
                 vocab::code::k_left_to_discovery);
            return std::move(out);
        }
        case Registration::Action::Unchanged:
            out.list.items.push_back(shown(r.machine));
            done(r.why, vocab::code::k_unchanged);
            return std::move(out);
        case Registration::Action::Left:
            out.list.items.push_back(shown(r.machine));
            return fail(make_error(ErrorKind::Partial, a + ": the node was reset, but " + r.why, "",
                                   vocab::code::k_not_registered));
        }
        return std::move(out);
    }

    // Everything before the reset: the Ichor objects, the inspection, the assessment and the
    // typed confirmation. Returns the Inspection and the assessment, or the refusal.
    Result<std::pair<Value, Assessment>> decide() {
        const std::string& a = o.address.text;
        auto known = reg.known([this](std::string_view w) {
            warning(std::string(w), vocab::code::k_bundle_unreadable);
        });
        if (!known) {
            return known.error();
        }
        for (const auto& c : known->clusters) {
            if (c.name == o.cluster) {
                discovery = c.discovery;
            }
        }
        if (std::none_of(known->clusters.begin(), known->clusters.end(),
                         [&](const ManagedCluster& c) { return c.name == o.cluster; })) {
            return make_error(ErrorKind::Config,
                              "TalosCluster " + in_quotes(o.cluster) + " not found in namespace " +
                                  in_quotes(o.ns),
                              "kubectl get talosclusters -A", vocab::code::k_cluster_not_found);
        }
        step("Inspect " + a + " with talosconfig context " + in_quotes(o.context_name) +
             " (each call gives up after " + util::format_duration_ms(o.call_timeout_ms) + ")");
        Value results = Value::array();
        Value item = node.inspect(results);
        for (auto& r : results) {
            out.list.results.push_back(r);
        }
        if (View(item).mode() == f::mode::k_unreachable) {
            auto e = first_error(results);
            return e ? *e
                     : make_error(ErrorKind::Unreachable, a + ": could not be read", "",
                                  vocab::code::k_unreachable);
        }
        PeerHealth peers;
        if (View(item).etcd_problem().empty()) {
            for (const auto& p : etcd_peers(item)) {
                peers.emplace_back(p.id, !p.host.empty() && node.member_answers(p.host));
            }
        }
        std::string block = inspection_block(item);
        step(block.substr(0, block.size() - 1));
        auto assessed =
            assess(item, *known, peers, {a, o.talosconfig_path, o.cluster, o.force_ungraceful});
        if (!assessed) {
            return assessed.error();
        }
        for (const auto& w : assessed->warnings) {
            warning(w);
        }
        const std::string weakness =
            uuid_weakness(View(item).uuid(), View(item).serial(), known->machines);
        if (auto c = confirm(item, weakness); !c) {
            return c.error();
        }
        return std::make_pair(std::move(item), std::move(*assessed));
    }

    ReclaimOutcome run() {
        const std::string& a = o.address.text;
        auto decided = decide();
        if (!decided) {
            return fail(decided.error());
        }
        const auto& [item, assessed] = *decided;
        talos::ResetOptions ro;
        ro.graceful = assessed.graceful;
        ro.reboot = true;
        ro.system_volumes = {"STATE", "EPHEMERAL"};
        step("Reset " + a + ": wipe STATE and EPHEMERAL, then reboot (" +
             (ro.graceful ? "graceful" : "not graceful: etcd and Kubernetes are not left first") +
             ")");
        auto actor = node.reset(ro);
        if (!actor) {
            return fail(actor.error().wrap(a + ": the reset was not accepted"));
        }
        note(a + ": the reset was accepted (actor ID " + *actor + ")", vocab::code::k_reset);
        auto maint = wait_for_maintenance(*actor);
        if (!maint) {
            return fail(maint.error());
        }
        fingerprint = View(*maint).tls_fingerprint();
        const std::string uuid = View(item).uuid();
        const std::string now_uuid = View(*maint).uuid();
        if (lower(now_uuid) != lower(uuid)) {
            return fail(make_error(
                ErrorKind::Partial,
                a + ": the node in maintenance mode has UUID " + now_uuid +
                    ", not the reset machine's " + uuid + "; nothing was registered",
                "kubectl ichor inspect " + a + " --insecure", vocab::code::k_identity_changed));
        }
        const std::string back =
            a + " is in maintenance mode; its new maintenance certificate fingerprint is " +
            fingerprint;
        step(back);
        Value fp_tag = Value::object();
        fp_tag[std::string(k_tag_fingerprint)] = fingerprint;
        note(back, vocab::code::k_maintenance, std::move(fp_tag));
        return register_machine(*maint);
    }
};

} // namespace

Outcome reclaim(doc::ResourceList& list, const ReclaimOptions& options) {
    return run_stage("reclaim", list, [&] {
        Flow f{options, *options.node, *options.registry, options.ui, {}, {}};
        ReclaimOutcome done = f.run();
        list = std::move(done.list);
        Outcome out;
        out.done = done.registered ? 1 : 0;
        out.error = std::move(done.failure);
        return out;
    });
}

// --- the real node and registry --------------------------------------------------------------

namespace {

class TalosNode final : public ReclaimNode {
  public:
    explicit TalosNode(NodeDial d) : m_d(std::move(d)) {}

    Value inspect(Value& results) override {
        InspectOptions io;
        io.context = m_d.context;
        io.talosconfig_path = m_d.talosconfig_path;
        io.call_timeout_ms = m_d.call_timeout_ms;
        return inspect_node(m_d.address, io, results);
    }
    // The node is dialled itself (reclaim takes no --endpoints); a member is asked through it,
    // the node as the endpoint of that one read (`node` metadata: talos::reach_for decides both).
    bool member_answers(const std::string& host) override {
        return reach(m_d.address).client({host, host}).etcd_status().ok();
    }
    Result<std::string> reset(const talos::ResetOptions& options) override {
        return reach(std::nullopt).client(m_d.address).reset(options);
    }
    Result<Value> probe_maintenance(std::int64_t timeout_ms) override {
        InspectOptions io;
        io.insecure = true;
        io.call_timeout_ms = timeout_ms;
        Value results = Value::array();
        Value item = inspect_node(m_d.address, io, results);
        if (View(item).mode() == f::mode::k_maintenance) {
            return item;
        }
        if (auto e = first_error(results)) {
            return *e;
        }
        return make_error(ErrorKind::Unreachable, m_d.address.text + ": no answer", "",
                          vocab::code::k_unreachable);
    }

  private:
    [[nodiscard]] talos::Reach reach(const std::optional<talos::Address>& through) const {
        return talos::reach_for(&m_d.context, false, through, m_d.call_timeout_ms);
    }

    NodeDial m_d;
};

class KubeRegistry final : public ReclaimRegistry {
  public:
    KubeRegistry(kube::Client& k, std::string ns) : m_k(k), m_ns(std::move(ns)) {}

    Result<Known> known(const std::function<void(std::string_view)>& warn) override {
        Known k;
        auto list = machines();
        if (!list) {
            return list.error();
        }
        k.machines = std::move(*list);
        auto clusters = m_k.list(kube::ichor_path("talosclusters", m_ns));
        if (!clusters) {
            return clusters.error().wrap("listing the TalosClusters of namespace " + m_ns);
        }
        for (const auto& c : (*clusters)["items"]) {
            ManagedCluster mc{doc::get_string(c, "metadata.name"), "", {}};
            if (const Value* d = objects::ClusterView(c).discovery_addresses(); d != nullptr) {
                for (const auto& e : *d) {
                    if (e.is_string()) {
                        mc.discovery.push_back(e.get<std::string>());
                    }
                }
            }
            auto b = load_bundle({}, nullptr, &m_k, &c, [](std::string_view) {});
            if (b) {
                mc.cluster_id = b->cluster_id;
            } else if (warn) {
                warn("cannot read the secrets bundle of TalosCluster " + mc.name + " (" +
                     b.error().message + "): whether the node belongs to it is not known");
            }
            k.clusters.push_back(std::move(mc));
        }
        return k;
    }
    Result<Value> machines() override {
        auto list = m_k.list(kube::ichor_path("talosmachines", m_ns));
        if (!list) {
            return list.error().wrap("listing the TalosMachines of namespace " + m_ns);
        }
        return (*list)["items"];
    }
    Result<Value> create_machine(const Value& machine) override {
        return m_k.create(kube::ichor_path("talosmachines", m_ns), machine);
    }
    Result<Value> patch_machine_status(const std::string& name, const Value& status) override {
        Value patch = Value::object();
        patch["status"] = status;
        return m_k.merge_patch_status(kube::ichor_path("talosmachines", m_ns, name), patch);
    }

  private:
    kube::Client& m_k;
    std::string m_ns;
};

} // namespace

std::unique_ptr<ReclaimNode> make_node(const NodeDial& dial) {
    return std::make_unique<TalosNode>(dial);
}

std::unique_ptr<ReclaimRegistry> make_registry(kube::Client& kube, std::string ns) {
    return std::make_unique<KubeRegistry>(kube, std::move(ns));
}

} // namespace ichor::stages
