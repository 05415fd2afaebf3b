#include "common/inspection/engine.h"

#include "common/doc/vocabulary.h"
#include "common/inspection/fields.h"
#include "common/inspection/status.h"
#include "common/talos/client.h"
#include "common/talos/errors.h"
#include "common/talos/loop.h"
#include "common/talos/reach.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>

namespace ichor::inspection {

using doc::Value;
namespace f = field;

namespace {

// One node's reading on a loop, phase by phase (engine.h): start_<phase>() makes the phase's
// calls, after_<phase>() looks at their replies and starts the next phase. Version and Probe take
// one reply each; the reads, MachineType and Etcd are batches, and the last reply of a batch
// calls after_<phase>() (end_of_batch).
class NodeInspection {
  public:
    using Finished = std::function<void(Value item, Value results)>;

    NodeInspection(const talos::Address& a, const RunContext& run, const talos::Reach& reach,
                   const talos::Reach& probe, talos::Loop& loop, Finished finished)
        : m_run(run), m_reach(reach), m_probe_reach(probe), m_endpoint(reach.endpoint()),
          m_loop(loop), m_finished(std::move(finished)), m_r{a, skeleton(a, run)} {}

    void start() { start_version(); }

  private:
    // Reads is two phases here: a node in maintenance mode is done after its reads.
    enum class Phase { Version, Probe, MaintenanceReads, ConfiguredReads, MachineType, Etcd, Done };

    const Settings& settings() const { return m_run.settings; }
    Value& at(Path p) { return put(m_r.item, p); }

    // --- 1. Version ----------------------------------------------------------------------------

    void start_version() {
        m_phase = Phase::Version;
        const Settings& s = settings();
        m_insecure = !m_reach.mutual();
        m_client.emplace(m_reach.client(m_r.address));
        if (m_insecure) {
            at(f::k_tls_outcome) = s.fingerprints.empty() ? f::tls::k_insecure : f::tls::k_pinned;
        }
        m_client->version(m_loop,
                          [this](Result<machine::Version> v) { after_version(std::move(v)); });
    }

    void after_version(Result<machine::Version> v) {
        if (m_insecure) {
            Reply<machine::Version> reply(std::move(v));
            if (auto ver = take(m_r, reply, doc::Severity::Error)) {
                at(f::k_tls_fingerprint) = m_client->peer_fingerprint().value_or("");
                start_maintenance_reads(*m_client, *ver);
                return;
            }
            at(f::k_mode) = f::mode::k_unreachable;
            finish();
        } else if (v.ok()) {
            start_configured_reads(*v);
        } else if (m_endpoint != nullptr) {
            after_forwarded_failure(v.error());
        } else if (v.error().code == talos::code::k_unknown_authority) {
            start_probe();
        } else {
            at(f::k_mode) = f::mode::k_unreachable;
            at(f::k_tls_outcome) = f::tls::k_failed;
            m_r.add(doc::Severity::Error, v.error().message, v.error().code);
            finish();
        }
    }

    // Through an endpoint, Version failed: the hop to the endpoint (EndpointRefused), the node's
    // certificate as the endpoint checked it (UnknownAuthority), or the node did not answer.
    void after_forwarded_failure(const Error& e) {
        const std::string& ep = m_endpoint->address().text;
        const std::string& node = m_r.address.text;
        bool handshake =
            talos::own_connection_failure(e.message) && e.code != talos::code::k_unreachable;
        bool no_forwarding = e.code == talos::code::k_permission_denied &&
                             e.message.find("no request forwarding") != std::string::npos;
        if (handshake || no_forwarding) {
            at(f::k_mode) = f::mode::k_unreachable;
            at(f::k_tls_outcome) = f::tls::k_failed;
            m_r.add(doc::Severity::Error,
                    node + ": not reached: the endpoint " + ep +
                        (handshake ? " refused this client (the TLS handshake with the endpoint "
                                     "failed: it is not of the talosconfig's cluster, or the "
                                     "talosconfig is the wrong one)"
                                   : " does not forward calls (a worker: endpoints must be "
                                     "control-plane nodes)") +
                        "; " + e.message,
                    std::string(talos::code::k_endpoint_refused));
            finish();
            return;
        }
        if (talos::forwarded_unknown_authority(e.message)) {
            at(f::k_mode) = f::mode::k_configured;
            at(f::k_tls_outcome) = f::tls::k_unknown_authority;
            const std::string ctx = settings().context ? settings().context->name : "";
            m_r.add(doc::Severity::Error,
                    node + ": its Talos API certificate, as the endpoint " + ep +
                        " checked it, is not signed by the CA of talosconfig context \"" + ctx +
                        "\": the node belongs to another cluster, or is in maintenance mode "
                        "(read those directly: kubectl ichor inspect --insecure " +
                        node + ")",
                    std::string(talos::code::k_unknown_authority));
            finish();
            return;
        }
        at(f::k_mode) = f::mode::k_unreachable;
        at(f::k_tls_outcome) = f::tls::k_failed;
        m_r.add(doc::Severity::Error, e.message, e.code);
        finish();
    }

    // --- 2. Probe ------------------------------------------------------------------------------

    // Against the talosconfig's CA the dial failed verification: a node in maintenance mode
    // answers an insecure Version; another cluster's node does not (it wants a client certificate).
    void start_probe() {
        m_phase = Phase::Probe;
        m_probe.emplace(m_probe_reach.client(m_r.address));
        m_probe->version(m_loop, [this](Result<machine::Version> v) { after_probe(std::move(v)); });
    }

    void after_probe(Result<machine::Version> v) {
        if (v.ok()) {
            m_probe_fingerprint = m_probe->peer_fingerprint().value_or("");
            at(f::k_tls_outcome) = f::tls::k_insecure;
            at(f::k_tls_fingerprint) = m_probe_fingerprint;
            start_maintenance_reads(*m_probe, *v);
            return;
        }
        at(f::k_mode) = f::mode::k_configured;
        at(f::k_tls_outcome) = f::tls::k_unknown_authority;
        if (auto fp = m_client->peer_fingerprint()) {
            at(f::k_tls_fingerprint) = *fp;
        }
        const std::string ctx = settings().context ? settings().context->name : "";
        m_r.add(doc::Severity::Error,
                m_r.address.text +
                    ": its Talos API certificate is not signed by the CA of talosconfig "
                    "context \"" +
                    ctx +
                    "\": the node belongs to another cluster, or the talosconfig is the wrong one",
                std::string(talos::code::k_unknown_authority));
        finish();
    }

    // --- 3. Reads ------------------------------------------------------------------------------

    void start_maintenance_reads(talos::NodeClient& c, const machine::Version& v) {
        at(f::k_mode) = f::mode::k_maintenance;
        at(f::k_access) = "os:reader";
        at(f::k_talos_version) = v.version().tag();
        begin(Phase::MaintenanceReads);
        start_machine_reads(c);
    }

    void start_configured_reads(const machine::Version& v) {
        at(f::k_mode) = f::mode::k_configured;
        at(f::k_access) = m_run.access;
        at(f::k_tls_outcome) = f::tls::k_verified;
        at(f::k_talos_version) = v.version().tag();
        begin(Phase::ConfiguredReads);
        auto& c = *m_client;
        start_machine_reads(c);
        c.cosi_get(m_loop, talos::kind::k_machine_config, into(m_replies.machine_config));
        c.cosi_get(m_loop, talos::kind::k_persistent_config, into(m_replies.persistent_config));
        c.cosi_get(m_loop, talos::kind::k_cluster_info, into(m_replies.cluster_info));
        c.cosi_get(m_loop, talos::kind::k_identity, into(m_replies.identity));
    }

    // The reads a node answers in either mode: identity, links, stage and storage.
    void start_machine_reads(talos::NodeClient& c) {
        c.cosi_get(m_loop, talos::kind::k_system_information, into(m_replies.system_information));
        c.cosi_list(m_loop, talos::kind::k_link_statuses, into(m_replies.links));
        c.hostname(m_loop, into(m_replies.hostname));
        c.cosi_get(m_loop, talos::kind::k_machine_status, into(m_replies.machine_status));
        c.cosi_list(m_loop, talos::kind::k_volume_statuses, into(m_replies.volumes));
        c.cosi_list(m_loop, talos::kind::k_disks, into(m_replies.disks));
    }

    void after_maintenance_reads() {
        put_identity(m_r, m_replies);
        put_machine_status(m_r, m_replies);
        put_storage(m_r, m_replies);
        if (m_probe) {
            const std::string& fp = m_probe_fingerprint;
            m_r.add(doc::Severity::Info,
                    m_r.address.text + ": in maintenance mode (certificate fingerprint " +
                        (fp.empty() ? "unknown" : fp) + ")",
                    vocab::code::k_maintenance);
        }
        finish();
    }

    void after_configured_reads() {
        put_identity(m_r, m_replies);
        put_machine_status(m_r, m_replies);
        bool have_config = put_config(m_r, m_replies, m_facts);
        if (!have_config && !m_r.gone) {
            start_machine_type();
            return;
        }
        after_machine_type();
    }

    // --- 4. MachineType ------------------------------------------------------------------------

    void start_machine_type() {
        begin(Phase::MachineType);
        m_client->cosi_get(m_loop, talos::kind::k_machine_type, into(m_replies.machine_type));
    }

    // Also where a configured node goes on when it needed no MachineType.
    void after_machine_type() {
        put_role_and_facts(m_r, m_replies, m_facts);
        put_storage(m_r, m_replies);
        if (!m_r.gone && m_facts.role != "worker") {
            start_etcd();
            return;
        }
        after_etcd();
    }

    // --- 5. Etcd -------------------------------------------------------------------------------

    void start_etcd() {
        begin(Phase::Etcd);
        m_client->etcd_member_list(m_loop, into(m_replies.etcd_members));
        m_client->etcd_status(m_loop, into(m_replies.etcd_status));
    }

    // Also where a configured node goes on when etcd was not asked.
    void after_etcd() {
        put_etcd(m_r, m_replies);
        put_node_id(m_r, m_replies);
        finish();
    }

    // --- 6. Done -------------------------------------------------------------------------------

    // Hands the item on and lets the connections go.
    void finish() {
        m_phase = Phase::Done;
        std::vector<const talos::NodeClient*> clients;
        for (auto* c : {&m_client, &m_probe}) {
            if (*c) {
                clients.push_back(&**c);
            }
        }
        put_timings(m_r, clients);
        m_client.reset();
        m_probe.reset();
        m_replies = Replies{};
        m_finished(std::move(m_r.item), std::move(m_r.results));
    }

    // --- batches -------------------------------------------------------------------------------

    void begin(Phase p) {
        m_phase = p;
        m_in_flight = 0;
    }

    // The callback of one call of the current batch: stores the reply in `slot`; the last reply
    // of the batch ends the phase.
    template <class T> talos::NodeClient::Done<T> into(Reply<T>& slot) {
        ++m_in_flight;
        return [this, &slot](Result<T> reply) {
            slot.emplace(std::move(reply));
            if (--m_in_flight == 0) {
                end_of_batch();
            }
        };
    }

    void end_of_batch() {
        switch (m_phase) {
        case Phase::MaintenanceReads:
            after_maintenance_reads();
            return;
        case Phase::ConfiguredReads:
            after_configured_reads();
            return;
        case Phase::MachineType:
            after_machine_type();
            return;
        case Phase::Etcd:
            after_etcd();
            return;
        case Phase::Version:
        case Phase::Probe:
        case Phase::Done:
            return; // one reply each, or nothing left to wait for: never a batch
        }
    }

    const RunContext& m_run;
    const talos::Reach& m_reach;       // the reads' (insecure without a credential)
    const talos::Reach& m_probe_reach; // the probe's: insecure, unpinned
    const talos::Endpoint* m_endpoint; // the reads' endpoint; null: dialled directly
    talos::Loop& m_loop;
    Finished m_finished;
    NodeReading m_r;
    Phase m_phase = Phase::Version;
    bool m_insecure = false; // dialled without a client certificate from the start
    std::optional<talos::NodeClient> m_client;
    std::optional<talos::NodeClient> m_probe; // after an unknown authority: the insecure dial
    std::string m_probe_fingerprint;
    Replies m_replies;
    machineconfig::Facts m_facts;
    int m_in_flight = 0; // calls of the current batch not yet answered
};

} // namespace

std::vector<NodeReport> read_nodes(const std::vector<talos::Address>& addresses,
                                   const Settings& s) {
    RunContext run(s);
    std::vector<NodeReport> out(addresses.size());
    // Through an endpoint, one channel for every node on every loop: one handshake for the
    // cluster (gRPC channels may be shared between threads).
    const talos::TalosContext* context = s.context ? &*s.context : nullptr;
    const talos::Reach reach =
        talos::reach_for(context, s.insecure, s.endpoint, s.call_timeout_ms, s.fingerprints);
    const talos::Reach probe = talos::reach_for(nullptr, true, s.endpoint, s.call_timeout_ms);
    std::atomic<std::size_t> next{0};
    talos::run_on_loops(s.concurrency, addresses.size(), [&](talos::Loop& loop, int share) {
        std::vector<std::unique_ptr<NodeInspection>> nodes;
        std::function<void()> start_next = [&] {
            std::size_t i = next++;
            if (i >= addresses.size()) {
                return;
            }
            nodes.push_back(std::make_unique<NodeInspection>(
                addresses[i], run, reach, probe, loop, [&, i](Value item, Value results) {
                    out[i] = NodeReport{std::move(item), std::move(results)};
                    start_next();
                }));
            nodes.back()->start();
        };
        for (int k = 0; k < share; ++k) {
            start_next();
        }
        loop.run();
    });
    return out;
}

} // namespace ichor::inspection
