#include "common/stages/inspect.h"

#include "common/machineconfig/machineconfig.h"
#include "common/talos/client.h"
#include "common/talos/errors.h"
#include "common/talos/loop.h"
#include "common/util/pem.h"
#include "common/util/strings.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>

namespace ichor::stages {

using doc::Value;

namespace {

// What is the same for every node of a run, worked out once.
struct Common {
    const InspectOptions& options;
    std::string ca_fingerprint; // of the context's CA
    std::string access;         // the client certificate's organizations, "none" without one

    explicit Common(const InspectOptions& o) : options(o), access("none") {
        if (o.context) {
            ca_fingerprint = util::certificate_fingerprint(o.context->ca_pem).value_or("");
            auto orgs = util::certificate_organizations(o.context->crt_pem);
            access = orgs.empty() ? "none" : util::join(orgs, ",");
        }
    }
};

// Collects what one node's reading produces: the item's status and the node's results.
struct NodeReading {
    const talos::Address& address;
    Value item;
    Value results = Value::array();
    bool gone = false; // the node stopped answering: later replies are not looked at

    void add(doc::Severity sev, const std::string& message, const std::string& code) {
        Value r = Value::object();
        r["severity"] = doc::severity_name(sev);
        r["message"] = message;
        r["resourceRef"] = doc::ref_of(item);
        Value tags = Value::object();
        tags[std::string(doc::k_tag_code)] = code;
        tags[std::string(doc::k_tag_node)] = address.text;
        r["tags"] = std::move(tags);
        results.push_back(std::move(r));
    }
    Value& status() { return item["status"]; }
};

bool is_gone(const Error& e) {
    return talos::node_gone(e.code);
}

// A reply, or nothing when the call was not made.
template <class T> using Reply = std::optional<Result<T>>;

// Takes one reply as a sequential reading would have: nothing once the node is gone; on failure
// a result (unless Info) and, when the node stopped answering, the node marked gone.
template <class T>
std::optional<T> take(NodeReading& r, Reply<T>& reply, doc::Severity sev = doc::Severity::Warning) {
    if (r.gone || !reply) {
        return std::nullopt;
    }
    if (reply->ok()) {
        return std::move(*reply).value();
    }
    const Error& e = reply->error();
    if (is_gone(e)) {
        r.gone = true;
        r.add(doc::Severity::Error, e.message, e.code);
    } else if (sev != doc::Severity::Info) {
        r.add(sev, e.message, e.code);
    }
    return std::nullopt;
}

// One node's replies. They arrive in any order; they are read in the order of the fields below
// (the order a one-call-at-a-time reading would make them in), so the output never depends on
// timing, and a node that stops answering is reported at its first call as before.
struct Replies {
    Reply<talos::Resource> system_information;
    Reply<std::vector<talos::Resource>> links;
    Reply<std::string> hostname;
    Reply<talos::Resource> machine_status;
    Reply<talos::Resource> machine_config;
    Reply<talos::Resource> cluster_info;
    Reply<talos::Resource> machine_type;
    Reply<std::vector<talos::Resource>> volumes;
    Reply<std::vector<talos::Resource>> disks;
    Reply<std::vector<machine::EtcdMember>> etcd_members;
    Reply<machine::EtcdMemberStatus> etcd_status;
    Reply<talos::Resource> identity;
};

Value skeleton(const talos::Address& a, const Common& common) {
    const InspectOptions& o = common.options;
    Value v = Value::object();
    v["apiVersion"] = doc::k_adopt_api;
    v["kind"] = "Inspection";
    v["metadata"]["name"] = a.text;
    v["spec"]["address"] = a.host;
    v["spec"]["port"] = a.port;
    if (o.context) {
        Value tc = Value::object();
        tc["path"] = o.talosconfig_path;
        tc["context"] = o.context->name;
        tc["caFingerprint"] = common.ca_fingerprint;
        v["spec"]["talosconfig"] = std::move(tc);
    }
    v["status"] = Value::object();
    return v;
}

void read_identity(NodeReading& r, Replies& replies) {
    Value id = Value::object();
    if (auto res = take(r, replies.system_information)) {
        if (auto si = talos::decode_spec<talos::spec::SystemInformation>(*res)) {
            id["uuid"] = si->uuid();
            id["serial"] = si->serial_number();
        }
    }
    Value macs = Value::array();
    Value links = Value::array();
    if (auto list = take(r, replies.links)) {
        for (const auto& res : *list) {
            auto ls = talos::decode_spec<talos::spec::LinkStatus>(res);
            if (!ls || !talos::is_physical(*ls)) {
                continue;
            }
            std::string perm = talos::format_mac(ls->permanent_addr());
            std::string hw = talos::format_mac(ls->hardware_addr());
            macs.push_back(perm.empty() ? hw : perm);
            Value l = Value::object();
            l["name"] = res.metadata.id();
            l["permanentAddr"] = perm;
            l["hardwareAddr"] = hw;
            links.push_back(std::move(l));
        }
    }
    id["macs"] = std::move(macs);
    if (auto h = take(r, replies.hostname)) {
        id["hostname"] = *h;
    }
    r.status()["identity"] = std::move(id);
    r.status()["links"] = std::move(links);
}

void read_status(NodeReading& r, Replies& replies) {
    if (auto res = take(r, replies.machine_status)) {
        if (auto ms = talos::decode_spec<talos::spec::MachineStatus>(*res)) {
            Value m = Value::object();
            m["stage"] = std::string(talos::machine_stage_name(ms->stage()));
            m["ready"] = ms->status().ready();
            r.status()["machineStatus"] = std::move(m);
        }
    }
}

// The configuration (admin only): its digested documents and facts, and Infos' cluster identity
// for what a reader can see. Returns whether the configuration was read.
bool read_config(NodeReading& r, Replies& replies, machineconfig::Facts& facts) {
    bool have_config = false;
    if (!r.gone && replies.machine_config) {
        auto& res = *replies.machine_config;
        if (res.ok()) {
            if (auto mc = talos::decode_spec<talos::spec::MachineConfig>(*res)) {
                auto parsed =
                    machineconfig::parse(mc->yaml_marshalled(), r.address.text + ": configuration");
                if (parsed) {
                    facts = machineconfig::extract_facts(*parsed);
                    r.status()["config"] = machineconfig::digest_secrets(parsed->documents);
                    have_config = true;
                } else {
                    r.add(doc::Severity::Warning, parsed.error().message, "MalformedConfig");
                }
            }
        } else if (res.error().code == talos::code::k_permission_denied) {
            r.add(doc::Severity::Warning,
                  r.address.text + ": reading the configuration needs os:admin; only the facts a "
                                   "reader can see were read",
                  "PermissionDenied");
        } else {
            take(r, replies.machine_config);
        }
    }
    if (auto res = take(r, replies.cluster_info, doc::Severity::Info)) {
        if (auto info = talos::decode_spec<talos::spec::ClusterInfo>(*res)) {
            facts.cluster_id = facts.cluster_id.empty() ? info->cluster_id() : facts.cluster_id;
            facts.cluster_name =
                facts.cluster_name.empty() ? info->cluster_name() : facts.cluster_name;
        }
    }
    return have_config;
}

// The role from MachineType, when the configuration could not be read; then the facts.
void read_facts(NodeReading& r, Replies& replies, machineconfig::Facts& facts) {
    if (auto res = take(r, replies.machine_type)) {
        if (auto mt = talos::decode_spec<talos::spec::MachineType>(*res)) {
            facts.role = std::string(talos::machine_type_name(mt->machine_type()));
        }
    }
    r.status()["facts"] = machineconfig::facts_to_value(facts);
}

void read_storage(NodeReading& r, Replies& replies) {
    Value vols = Value::array();
    if (auto list = take(r, replies.volumes)) {
        for (const auto& res : *list) {
            const std::string& id = res.metadata.id();
            if (id != "STATE" && id != "EPHEMERAL") {
                continue;
            }
            auto vs = talos::decode_spec<talos::spec::VolumeStatus>(res);
            Value v = Value::object();
            v["id"] = id;
            v["phase"] = vs ? std::string(talos::volume_phase_name(vs->phase())) : "";
            v["location"] = vs ? vs->location() : "";
            vols.push_back(std::move(v));
        }
    }
    r.status()["volumes"] = std::move(vols);
    Value disks = Value::array();
    if (auto list = take(r, replies.disks)) {
        for (const auto& res : *list) {
            auto d = talos::decode_spec<talos::spec::Disk>(res);
            if (!d) {
                continue;
            }
            Value v = Value::object();
            v["name"] = res.metadata.id();
            v["devPath"] = d->dev_path();
            v["size"] = d->size();
            v["model"] = d->model();
            v["serial"] = d->serial();
            disks.push_back(std::move(v));
        }
    }
    r.status()["disks"] = std::move(disks);
}

std::string member_hex(std::uint64_t id) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
    return buf;
}

void etcd_problem(NodeReading& r, Value& etcd, const Error& e) {
    etcd["problem"] = "etcd is not running or not answering (" + e.message + ")";
    r.add(doc::Severity::Warning, r.address.text + ": " + etcd["problem"].get<std::string>(),
          "EtcdProblem");
}

// etcd's members and this member's status; a problem with either is a finding, not a failure.
void read_etcd(NodeReading& r, Replies& replies) {
    if (r.gone || !replies.etcd_members) {
        return;
    }
    Value etcd = Value::object();
    auto& members = *replies.etcd_members;
    if (!members) {
        etcd_problem(r, etcd, members.error());
        r.status()["etcd"] = std::move(etcd);
        return;
    }
    Value list = Value::array();
    for (const auto& m : *members) {
        Value v = Value::object();
        v["id"] = member_hex(m.id());
        v["hostname"] = m.hostname();
        v["peerURLs"] = std::vector<std::string>(m.peer_urls().begin(), m.peer_urls().end());
        v["clientURLs"] = std::vector<std::string>(m.client_urls().begin(), m.client_urls().end());
        v["learner"] = m.is_learner();
        list.push_back(std::move(v));
    }
    etcd["members"] = std::move(list);
    auto& st = *replies.etcd_status;
    if (st.ok()) {
        Value s = Value::object();
        s["memberID"] = member_hex(st->member_id());
        s["leader"] = member_hex(st->leader());
        s["dbSize"] = st->db_size();
        s["raftIndex"] = st->raft_index();
        etcd["status"] = std::move(s);
    } else {
        etcd_problem(r, etcd, st.error());
    }
    r.status()["etcd"] = std::move(etcd);
}

void read_node_id(NodeReading& r, Replies& replies) {
    if (auto res = take(r, replies.identity, doc::Severity::Info)) {
        if (auto id = talos::decode_spec<talos::spec::Identity>(*res)) {
            r.status()["identity"]["nodeID"] = id->node_id();
        }
    }
}

void record_timings(NodeReading& r, const std::vector<const talos::NodeClient*>& clients) {
    Value t = Value::array();
    for (const auto* c : clients) {
        for (const auto& call : c->calls()) {
            Value v = Value::object();
            v["call"] = call.method;
            v["ms"] = call.duration_ms;
            v["ok"] = call.ok;
            t.push_back(std::move(v));
        }
    }
    r.status()["timings"] = std::move(t);
}

// Reads one node on a loop. Version first; then at once every read that does not depend on the
// configuration; then MachineType when the configuration could not be read, and etcd on a
// control plane. A reply is looked at only once its phase is complete, in a fixed order.
class NodeInspection {
  public:
    using Finished = std::function<void(Value item, Value results)>;

    NodeInspection(const talos::Address& a, const Common& common, talos::Loop& loop,
                   Finished finished)
        : m_common(common), m_loop(loop),
          m_finished(std::move(finished)), m_r{a, skeleton(a, common)} {}

    void start() {
        const InspectOptions& o = m_common.options;
        if (o.insecure || !o.context) {
            m_client.emplace(m_r.address, talos::insecure(o.fingerprints, o.call_timeout_ms));
            m_r.status()["tls"]["outcome"] = o.fingerprints.empty() ? "insecure" : "pinned";
            m_client->version(
                m_loop, [this](Result<machine::Version> v) { on_insecure_version(std::move(v)); });
        } else {
            m_client.emplace(m_r.address, talos::mutual_tls(*o.context, o.call_timeout_ms));
            m_client->version(m_loop,
                              [this](Result<machine::Version> v) { on_version(std::move(v)); });
        }
    }

  private:
    // Stores a reply in `slot`; when it is the last one the phase waits for, runs the next step.
    template <class T> talos::NodeClient::Done<T> into(Reply<T>& slot) {
        ++m_waiting;
        return [this, &slot](Result<T> reply) {
            slot.emplace(std::move(reply));
            if (--m_waiting == 0) {
                auto next = std::move(m_next);
                next();
            }
        };
    }
    void then(std::function<void()> next) { m_next = std::move(next); }

    void on_insecure_version(Result<machine::Version> v) {
        Reply<machine::Version> reply(std::move(v));
        if (auto ver = take(m_r, reply, doc::Severity::Error)) {
            m_r.status()["tls"]["fingerprint"] = m_client->peer_fingerprint().value_or("");
            read_maintenance(*m_client, *ver, [this] { finish(); });
            return;
        }
        m_r.status()["mode"] = "unreachable";
        finish();
    }

    void on_version(Result<machine::Version> v) {
        if (v.ok()) {
            read_configured(*v);
        } else if (v.error().code == talos::code::k_unknown_authority) {
            // Against the talosconfig's CA the dial failed verification: a node in maintenance
            // mode answers an insecure Version; another cluster's node does not (it wants a
            // client certificate).
            m_probe.emplace(m_r.address, talos::insecure({}, m_common.options.call_timeout_ms));
            m_probe->version(
                m_loop, [this](Result<machine::Version> pv) { on_probe_version(std::move(pv)); });
        } else {
            m_r.status()["mode"] = "unreachable";
            m_r.status()["tls"]["outcome"] = "failed";
            m_r.add(doc::Severity::Error, v.error().message, v.error().code);
            finish();
        }
    }

    void on_probe_version(Result<machine::Version> v) {
        const std::string& addr = m_r.address.text;
        if (v.ok()) {
            std::string fp = m_probe->peer_fingerprint().value_or("");
            m_r.status()["tls"]["outcome"] = "insecure";
            m_r.status()["tls"]["fingerprint"] = fp;
            read_maintenance(*m_probe, *v, [this, addr, fp] {
                m_r.add(doc::Severity::Info,
                        addr + ": in maintenance mode (certificate fingerprint " +
                            (fp.empty() ? "unknown" : fp) + ")",
                        "Maintenance");
                finish();
            });
            return;
        }
        m_r.status()["mode"] = "configured";
        m_r.status()["tls"]["outcome"] = "unknownAuthority";
        if (auto fp = m_client->peer_fingerprint()) {
            m_r.status()["tls"]["fingerprint"] = *fp;
        }
        const InspectOptions& o = m_common.options;
        std::string ctx = o.context ? o.context->name : "";
        m_r.add(doc::Severity::Error,
                addr +
                    ": its Talos API certificate is not signed by the CA of talosconfig "
                    "context \"" +
                    ctx +
                    "\": the node belongs to another cluster, or the talosconfig is the wrong one",
                std::string(talos::code::k_unknown_authority));
        finish();
    }

    void read_maintenance(talos::NodeClient& c, const machine::Version& v,
                          std::function<void()> done) {
        m_r.status()["mode"] = "maintenance";
        m_r.status()["access"] = "os:reader";
        m_r.status()["talosVersion"] = v.version().tag();
        then([this, done = std::move(done)] {
            read_identity(m_r, m_replies);
            read_status(m_r, m_replies);
            read_storage(m_r, m_replies);
            done();
        });
        start_machine_reads(c);
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

    void read_configured(const machine::Version& v) {
        m_r.status()["mode"] = "configured";
        m_r.status()["access"] = m_common.access;
        m_r.status()["tls"]["outcome"] = "verified";
        m_r.status()["talosVersion"] = v.version().tag();
        then([this] { on_configured_reads(); });
        auto& c = *m_client;
        start_machine_reads(c);
        c.cosi_get(m_loop, talos::kind::k_machine_config, into(m_replies.machine_config));
        c.cosi_get(m_loop, talos::kind::k_cluster_info, into(m_replies.cluster_info));
        c.cosi_get(m_loop, talos::kind::k_identity, into(m_replies.identity));
    }

    void on_configured_reads() {
        read_identity(m_r, m_replies);
        read_status(m_r, m_replies);
        bool have_config = read_config(m_r, m_replies, m_facts);
        if (!have_config && !m_r.gone) {
            then([this] { on_role(); });
            m_client->cosi_get(m_loop, talos::kind::k_machine_type, into(m_replies.machine_type));
            return;
        }
        on_role();
    }

    void on_role() {
        read_facts(m_r, m_replies, m_facts);
        read_storage(m_r, m_replies);
        if (!m_r.gone && m_facts.role != "worker") {
            then([this] { on_etcd(); });
            m_client->etcd_member_list(m_loop, into(m_replies.etcd_members));
            m_client->etcd_status(m_loop, into(m_replies.etcd_status));
            return;
        }
        on_etcd();
    }

    void on_etcd() {
        read_etcd(m_r, m_replies);
        read_node_id(m_r, m_replies);
        finish();
    }

    // Hands the item on and lets the connections go (calls still in flight keep what they need).
    void finish() {
        std::vector<const talos::NodeClient*> clients;
        for (auto* c : {&m_client, &m_probe}) {
            if (*c) {
                clients.push_back(&**c);
            }
        }
        record_timings(m_r, clients);
        m_client.reset();
        m_probe.reset();
        m_replies = Replies{};
        m_finished(std::move(m_r.item), std::move(m_r.results));
    }

    const Common& m_common;
    talos::Loop& m_loop;
    Finished m_finished;
    NodeReading m_r;
    std::optional<talos::NodeClient> m_client;
    std::optional<talos::NodeClient> m_probe; // after an unknown authority: the insecure dial
    Replies m_replies;
    machineconfig::Facts m_facts;
    int m_waiting = 0;
    std::function<void()> m_next;
};

struct NodeOutcome {
    Value item;
    Value results = Value::array();
};

// Reads every address, at most `concurrency` nodes at a time, on a few loops each on its own
// thread (the calling thread runs one); results in input order.
std::vector<NodeOutcome> read_nodes(const std::vector<talos::Address>& addresses,
                                    const InspectOptions& o) {
    Common common(o);
    std::vector<NodeOutcome> out(addresses.size());
    std::atomic<std::size_t> next{0};
    int concurrency = std::max(o.concurrency, 1);
    // One loop per core, up to four: a loop's thread does the TLS and parsing of its nodes, so a
    // second one shortened a 256-node read by a sixth on two cores (bench/README.md); more loops
    // than cores only add switches.
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    int node_count = static_cast<int>(std::max<std::size_t>(addresses.size(), 1));
    int most = std::min({concurrency, 4, node_count});
    int loops = std::clamp(cores, 1, most);
    auto drive = [&](int share) {
        talos::Loop loop;
        std::vector<std::unique_ptr<NodeInspection>> nodes;
        std::function<void()> start_next = [&] {
            std::size_t i = next++;
            if (i >= addresses.size()) {
                return;
            }
            nodes.push_back(std::make_unique<NodeInspection>(
                addresses[i], common, loop, [&, i](Value item, Value results) {
                    out[i] = NodeOutcome{std::move(item), std::move(results)};
                    start_next();
                }));
            nodes.back()->start();
        };
        for (int k = 0; k < share; ++k) {
            start_next();
        }
        loop.run();
    };
    std::vector<std::thread> threads;
    for (int l = 1; l < loops; ++l) {
        threads.emplace_back(drive, concurrency / loops);
    }
    drive(concurrency - (loops - 1) * (concurrency / loops));
    for (auto& t : threads) {
        t.join();
    }
    return out;
}

} // namespace

Value inspect_node(const talos::Address& a, const InspectOptions& o, Value& results) {
    auto out = read_nodes({a}, o);
    for (auto& res : out.front().results) {
        results.push_back(std::move(res));
    }
    return std::move(out.front().item);
}

InspectOutcome inspect_nodes(const InspectOptions& o) {
    auto ones = read_nodes(o.addresses, o);
    InspectOutcome out;
    out.nodes = static_cast<int>(ones.size());
    for (auto& one : ones) {
        bool failed = false;
        bool unreachable = false;
        for (auto& res : one.results) {
            if (res.value("severity", "") == "error") {
                failed = true;
                std::string code = res["tags"].value(std::string(doc::k_tag_code), "");
                unreachable = talos::node_gone(code);
            }
            out.list.results.push_back(std::move(res));
        }
        out.failed += failed ? 1 : 0;
        out.unreachable += unreachable ? 1 : 0;
        out.list.items.push_back(std::move(one.item));
    }
    return out;
}

} // namespace ichor::stages
