#include "common/stages/inspect.h"

#include "common/machineconfig/machineconfig.h"
#include "common/talos/client.h"
#include "common/talos/errors.h"
#include "common/talos/fanout.h"
#include "common/util/pem.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cstdio>

namespace ichor::stages {

using doc::Value;

namespace {

// Collects what one node's reading produces: the item's status and the node's results.
struct NodeReading {
    const talos::Address& address;
    Value item;
    Value results = Value::array();
    bool gone = false; // the node stopped answering: no further calls

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
    return e.code == talos::code::k_timeout || e.code == talos::code::k_unreachable ||
           e.code == talos::code::k_unavailable;
}

// Runs one read; on failure records a result (unless `quiet`) and marks the node gone when it
// stopped answering. Returns the value or nullopt.
template <class T, class F>
std::optional<T> attempt(NodeReading& r, F&& fn, doc::Severity sev = doc::Severity::Warning) {
    if (r.gone) {
        return std::nullopt;
    }
    Result<T> res = fn();
    if (res.ok()) {
        return std::move(res).value();
    }
    if (is_gone(res.error())) {
        r.gone = true;
        r.add(doc::Severity::Error, res.error().message, res.error().code);
    } else if (sev != doc::Severity::Info) {
        r.add(sev, res.error().message, res.error().code);
    }
    return std::nullopt;
}

Value skeleton(const talos::Address& a, const InspectOptions& o) {
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
        tc["caFingerprint"] = util::certificate_fingerprint(o.context->ca_pem).value_or("");
        v["spec"]["talosconfig"] = std::move(tc);
    }
    v["status"] = Value::object();
    return v;
}

void read_identity(NodeReading& r, talos::NodeClient& c) {
    Value id = Value::object();
    if (auto res = attempt<talos::Resource>(r, [&] { return c.cosi_get(talos::kind::k_system_information); })) {
        if (auto si = talos::decode_spec<talos::spec::SystemInformation>(*res)) {
            id["uuid"] = si->uuid();
            id["serial"] = si->serial_number();
        }
    }
    Value macs = Value::array();
    Value links = Value::array();
    if (auto list = attempt<std::vector<talos::Resource>>(r, [&] { return c.cosi_list(talos::kind::k_link_statuses); })) {
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
    if (auto h = attempt<std::string>(r, [&] { return c.hostname(); })) {
        id["hostname"] = *h;
    }
    r.status()["identity"] = std::move(id);
    r.status()["links"] = std::move(links);
}

void read_status(NodeReading& r, talos::NodeClient& c) {
    if (auto res = attempt<talos::Resource>(r, [&] { return c.cosi_get(talos::kind::k_machine_status); })) {
        if (auto ms = talos::decode_spec<talos::spec::MachineStatus>(*res)) {
            Value m = Value::object();
            m["stage"] = std::string(talos::machine_stage_name(ms->stage()));
            m["ready"] = ms->status().ready();
            r.status()["machineStatus"] = std::move(m);
        }
    }
}

void read_storage(NodeReading& r, talos::NodeClient& c) {
    Value vols = Value::array();
    if (auto list = attempt<std::vector<talos::Resource>>(r, [&] { return c.cosi_list(talos::kind::k_volume_statuses); })) {
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
    if (auto list = attempt<std::vector<talos::Resource>>(r, [&] { return c.cosi_list(talos::kind::k_disks); })) {
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

// The configuration (admin only), its digested documents and the facts; Infos and MachineType
// fill in what a reader can see.
void read_config(NodeReading& r, talos::NodeClient& c) {
    machineconfig::Facts facts;
    bool have_config = false;
    if (!r.gone) {
        auto res = c.cosi_get(talos::kind::k_machine_config);
        if (res.ok()) {
            if (auto mc = talos::decode_spec<talos::spec::MachineConfig>(*res)) {
                auto parsed = machineconfig::parse(mc->yaml_marshalled(), r.address.text + ": configuration");
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
            attempt<int>(r, [&]() -> Result<int> { return res.error(); });
        }
    }
    if (auto res = attempt<talos::Resource>(r, [&] { return c.cosi_get(talos::kind::k_cluster_info); }, doc::Severity::Info)) {
        if (auto info = talos::decode_spec<talos::spec::ClusterInfo>(*res)) {
            facts.cluster_id = facts.cluster_id.empty() ? info->cluster_id() : facts.cluster_id;
            facts.cluster_name = facts.cluster_name.empty() ? info->cluster_name() : facts.cluster_name;
        }
    }
    if (!have_config) {
        if (auto res = attempt<talos::Resource>(r, [&] { return c.cosi_get(talos::kind::k_machine_type); })) {
            if (auto mt = talos::decode_spec<talos::spec::MachineType>(*res)) {
                facts.role = std::string(talos::machine_type_name(mt->machine_type()));
            }
        }
    }
    r.status()["facts"] = machineconfig::facts_to_value(facts);
}

std::string member_hex(std::uint64_t id) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
    return buf;
}

void read_etcd(NodeReading& r, talos::NodeClient& c) {
    if (r.gone || doc::get_string(r.item, "status.facts.role") == "worker") {
        return;
    }
    Value etcd = Value::object();
    auto members = c.etcd_member_list();
    if (!members) {
        etcd["problem"] = "etcd is not running or not answering (" + members.error().message + ")";
        r.add(doc::Severity::Warning, r.address.text + ": " + etcd["problem"].get<std::string>(),
              "EtcdProblem");
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
    if (auto st = c.etcd_status(); st.ok()) {
        Value s = Value::object();
        s["memberID"] = member_hex(st->member_id());
        s["leader"] = member_hex(st->leader());
        s["dbSize"] = st->db_size();
        s["raftIndex"] = st->raft_index();
        etcd["status"] = std::move(s);
    } else {
        etcd["problem"] = "etcd is not running or not answering (" + st.error().message + ")";
        r.add(doc::Severity::Warning, r.address.text + ": " + etcd["problem"].get<std::string>(),
              "EtcdProblem");
    }
    r.status()["etcd"] = std::move(etcd);
}

void record_timings(NodeReading& r, const talos::NodeClient& c) {
    Value t = Value::array();
    for (const auto& call : c.calls()) {
        Value v = Value::object();
        v["call"] = call.method;
        v["ms"] = call.duration_ms;
        v["ok"] = call.ok;
        t.push_back(std::move(v));
    }
    r.status()["timings"] = std::move(t);
}

std::string access_of(const InspectOptions& o) {
    if (!o.context) {
        return "none";
    }
    auto orgs = util::certificate_organizations(o.context->crt_pem);
    return orgs.empty() ? "none" : util::join(orgs, ",");
}

void read_maintenance(NodeReading& r, talos::NodeClient& c, const machine::Version& v) {
    r.status()["mode"] = "maintenance";
    r.status()["access"] = "os:reader";
    r.status()["talosVersion"] = v.version().tag();
    read_identity(r, c);
    read_status(r, c);
    read_storage(r, c);
}

void read_configured(NodeReading& r, talos::NodeClient& c, const machine::Version& v,
                     const InspectOptions& o) {
    r.status()["mode"] = "configured";
    r.status()["access"] = access_of(o);
    r.status()["tls"]["outcome"] = "verified";
    r.status()["talosVersion"] = v.version().tag();
    read_identity(r, c);
    read_status(r, c);
    read_config(r, c);
    read_storage(r, c);
    read_etcd(r, c);
    if (auto res = attempt<talos::Resource>(r, [&] { return c.cosi_get(talos::kind::k_identity); }, doc::Severity::Info)) {
        if (auto id = talos::decode_spec<talos::spec::Identity>(*res)) {
            r.status()["identity"]["nodeID"] = id->node_id();
        }
    }
}

// The dial against the talosconfig's CA failed its verification: a node in maintenance mode
// answers an insecure Version; another cluster's node does not (it wants a client certificate).
void probe_unknown_authority(NodeReading& r, talos::NodeClient& authed, const InspectOptions& o) {
    talos::NodeClient probe(r.address, talos::insecure({}, o.call_timeout_ms));
    auto v = probe.version();
    if (v.ok()) {
        r.status()["tls"]["outcome"] = "insecure";
        r.status()["tls"]["fingerprint"] = probe.peer_fingerprint().value_or("");
        read_maintenance(r, probe, *v);
        r.add(doc::Severity::Info,
              r.address.text + ": in maintenance mode (certificate fingerprint " +
                  probe.peer_fingerprint().value_or("unknown") + ")",
              "Maintenance");
        record_timings(r, probe);
        return;
    }
    r.status()["mode"] = "configured";
    r.status()["tls"]["outcome"] = "unknownAuthority";
    if (auto fp = authed.peer_fingerprint()) {
        r.status()["tls"]["fingerprint"] = *fp;
    }
    std::string ctx = o.context ? o.context->name : "";
    r.add(doc::Severity::Error,
          r.address.text + ": its Talos API certificate is not signed by the CA of talosconfig context \"" +
              ctx + "\": the node belongs to another cluster, or the talosconfig is the wrong one",
          std::string(talos::code::k_unknown_authority));
}

} // namespace

Value inspect_node(const talos::Address& a, const InspectOptions& o, Value& results) {
    NodeReading r{a, skeleton(a, o)};
    if (o.insecure || !o.context) {
        talos::NodeClient c(a, talos::insecure(o.fingerprints, o.call_timeout_ms));
        r.status()["tls"]["outcome"] = o.fingerprints.empty() ? "insecure" : "pinned";
        if (auto v = attempt<machine::Version>(r, [&] { return c.version(); }, doc::Severity::Error)) {
            r.status()["tls"]["fingerprint"] = c.peer_fingerprint().value_or("");
            read_maintenance(r, c, *v);
        } else {
            r.status()["mode"] = "unreachable";
        }
        record_timings(r, c);
    } else {
        talos::NodeClient c(a, talos::mutual_tls(*o.context, o.call_timeout_ms));
        auto v = c.version();
        if (v.ok()) {
            read_configured(r, c, *v, o);
        } else if (v.error().code == talos::code::k_unknown_authority) {
            probe_unknown_authority(r, c, o);
        } else {
            r.status()["mode"] = "unreachable";
            r.status()["tls"]["outcome"] = "failed";
            r.add(doc::Severity::Error, v.error().message, v.error().code);
        }
        record_timings(r, c);
    }
    for (auto& res : r.results) {
        results.push_back(std::move(res));
    }
    return std::move(r.item);
}

InspectOutcome inspect_nodes(const InspectOptions& o) {
    struct One {
        Value item;
        Value results = Value::array();
    };
    auto ones = talos::fan_out(o.addresses, o.concurrency, [&](const talos::Address& a) {
        One one;
        one.item = inspect_node(a, o, one.results);
        return one;
    });
    InspectOutcome out;
    out.nodes = static_cast<int>(ones.size());
    for (auto& one : ones) {
        bool failed = false;
        bool unreachable = false;
        for (auto& res : one.results) {
            if (res.value("severity", "") == "error") {
                failed = true;
                std::string code = res["tags"].value(std::string(doc::k_tag_code), "");
                unreachable = code == talos::code::k_timeout || code == talos::code::k_unreachable ||
                              code == talos::code::k_unavailable;
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
