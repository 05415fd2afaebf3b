#include "common/inspection/status.h"

#include "common/doc/vocabulary.h"
#include "common/inspection/fields.h"
#include "common/talos/errors.h"
#include "common/talos/reach.h"
#include "common/util/pem.h"
#include "common/util/strings.h"

#include <cstdio>

namespace ichor::inspection {

using doc::Value;
namespace f = field;

RunContext::RunContext(const Settings& s) : settings(s), access("none") {
    if (s.context) {
        ca_fingerprint = util::certificate_fingerprint(s.context->ca_pem).value_or("");
        auto orgs = util::certificate_organizations(s.context->crt_pem);
        access = orgs.empty() ? "none" : util::join(orgs, ",");
    }
}

void NodeReading::add(doc::Severity sev, const std::string& message, std::string_view code) {
    Value r = Value::object();
    r["severity"] = doc::severity_name(sev);
    r["message"] = message;
    r["resourceRef"] = doc::ref_of(item);
    Value tags = Value::object();
    tags[std::string(doc::k_tag_code)] = std::string(code);
    tags[std::string(doc::k_tag_node)] = address.text;
    r["tags"] = std::move(tags);
    results.push_back(std::move(r));
}

bool is_gone(const Error& e) {
    return talos::node_gone(e.code);
}

Value skeleton(const talos::Address& a, const RunContext& run) {
    const Settings& s = run.settings;
    Value v = Value::object();
    put(v, f::k_api_version) = doc::k_adopt_api;
    put(v, f::k_kind) = f::k_inspection;
    put(v, f::k_name) = a.text;
    put(v, f::k_address) = a.host;
    put(v, f::k_port) = a.port;
    // as read_nodes reaches it
    if (auto e = talos::reach_through(s.context ? &*s.context : nullptr, s.insecure, s.endpoint)) {
        put(v, f::k_via_endpoint) = e->text;
    }
    if (s.context) {
        put(v, f::k_talosconfig_path) = s.talosconfig_path;
        put(v, f::k_talosconfig_context) = s.context->name;
        put(v, f::k_talosconfig_ca_fingerprint) = run.ca_fingerprint;
    }
    put(v, f::k_status) = Value::object();
    return v;
}

void put_identity(NodeReading& r, Replies& replies) {
    put(r.item, f::k_identity) = Value::object();
    if (auto res = take(r, replies.system_information)) {
        if (auto si = talos::decode_spec<talos::spec::SystemInformation>(*res)) {
            put(r.item, f::k_uuid) = si->uuid();
            put(r.item, f::k_serial) = si->serial_number();
        }
    }
    Value macs = Value::array();
    Value links = Value::array();
    Value names = Value::array();
    if (auto list = take(r, replies.links)) {
        for (const auto& res : *list) {
            names.push_back(res.metadata.id());
            auto ls = talos::decode_spec<talos::spec::LinkStatus>(res);
            if (!ls || !talos::is_physical(*ls)) {
                continue;
            }
            std::string perm = talos::format_mac(ls->permanent_addr());
            std::string hw = talos::format_mac(ls->hardware_addr());
            macs.push_back(perm.empty() ? hw : perm);
            Value l = Value::object();
            l[f::link::k_name] = res.metadata.id();
            l[f::link::k_permanent_addr] = perm;
            l[f::link::k_hardware_addr] = hw;
            links.push_back(std::move(l));
        }
    }
    put(r.item, f::k_macs) = std::move(macs);
    if (auto h = take(r, replies.hostname)) {
        put(r.item, f::k_hostname) = *h;
    }
    put(r.item, f::k_links) = std::move(links);
    put(r.item, f::k_link_names) = std::move(names);
}

void put_machine_status(NodeReading& r, Replies& replies) {
    if (auto res = take(r, replies.machine_status)) {
        if (auto ms = talos::decode_spec<talos::spec::MachineStatus>(*res)) {
            put(r.item, f::k_machine_stage) = std::string(talos::machine_stage_name(ms->stage()));
            put(r.item, f::k_machine_ready) = ms->status().ready();
        }
    }
}

namespace {

// The persistent configuration, when its bytes are not the running one's. A failed read of it
// says nothing the running one's read has not said (a Talos without it, a reader's role): quiet.
void put_persistent(NodeReading& r, Replies& replies, const std::string& running) {
    if (!replies.persistent_config || !replies.persistent_config->ok()) {
        return;
    }
    auto mc = talos::decode_spec<talos::spec::MachineConfig>(**replies.persistent_config);
    if (!mc || mc->yaml_marshalled() == running) {
        return;
    }
    auto parsed =
        machineconfig::parse(mc->yaml_marshalled(), r.address.text + ": persistent configuration");
    if (!parsed) {
        r.add(doc::Severity::Warning, parsed.error().message, vocab::code::k_malformed_config);
        return;
    }
    put(r.item, f::k_persistent_config) =
        machineconfig::digest_secrets(std::move(parsed->documents));
}

} // namespace

bool put_config(NodeReading& r, Replies& replies, machineconfig::Facts& facts) {
    bool have_config = false;
    if (!r.gone && replies.machine_config) {
        auto& res = *replies.machine_config;
        if (res.ok()) {
            if (auto mc = talos::decode_spec<talos::spec::MachineConfig>(*res)) {
                auto parsed =
                    machineconfig::parse(mc->yaml_marshalled(), r.address.text + ": configuration");
                if (parsed) {
                    facts = machineconfig::extract_facts(*parsed);
                    put(r.item, f::k_config) =
                        machineconfig::digest_secrets(std::move(parsed->documents));
                    put(r.item, f::k_config_digest) = util::sha256_digest(mc->yaml_marshalled());
                    have_config = true;
                    put_persistent(r, replies, mc->yaml_marshalled());
                } else {
                    r.add(doc::Severity::Warning, parsed.error().message,
                          vocab::code::k_malformed_config);
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

void put_role_and_facts(NodeReading& r, Replies& replies, machineconfig::Facts& facts) {
    if (auto res = take(r, replies.machine_type)) {
        if (auto mt = talos::decode_spec<talos::spec::MachineType>(*res)) {
            facts.role = std::string(talos::machine_type_name(mt->machine_type()));
        }
    }
    put_facts(r.item, facts);
}

void put_storage(NodeReading& r, Replies& replies) {
    Value vols = Value::array();
    if (auto list = take(r, replies.volumes)) {
        for (const auto& res : *list) {
            const std::string& id = res.metadata.id();
            if (id != "STATE" && id != "EPHEMERAL") {
                continue;
            }
            auto vs = talos::decode_spec<talos::spec::VolumeStatus>(res);
            Value v = Value::object();
            v[f::volume::k_id] = id;
            v[f::volume::k_phase] = vs ? std::string(talos::volume_phase_name(vs->phase())) : "";
            v[f::volume::k_location] = vs ? vs->location() : "";
            vols.push_back(std::move(v));
        }
    }
    put(r.item, f::k_volumes) = std::move(vols);
    Value disks = Value::array();
    if (auto list = take(r, replies.disks)) {
        for (const auto& res : *list) {
            auto d = talos::decode_spec<talos::spec::Disk>(res);
            if (!d) {
                continue;
            }
            Value v = Value::object();
            v[f::disk::k_name] = res.metadata.id();
            v[f::disk::k_dev_path] = d->dev_path();
            v[f::disk::k_size] = d->size();
            v[f::disk::k_model] = d->model();
            v[f::disk::k_serial] = d->serial();
            v[f::disk::k_wwid] = d->wwid();
            v[f::disk::k_modalias] = d->modalias();
            v[f::disk::k_uuid] = d->uuid();
            v[f::disk::k_bus_path] = d->bus_path();
            v[f::disk::k_transport] = d->transport();
            v[f::disk::k_rotational] = d->rotational();
            v[f::disk::k_cdrom] = d->cdrom();
            v[f::disk::k_readonly] = d->readonly();
            disks.push_back(std::move(v));
        }
    }
    put(r.item, f::k_disks) = std::move(disks);
}

namespace {

std::string member_hex(std::uint64_t id) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
    return buf;
}

void etcd_problem(NodeReading& r, const Error& e) {
    std::string problem = "etcd is not running or not answering (" + e.message + ")";
    put(r.item, f::k_etcd_problem) = problem;
    r.add(doc::Severity::Warning, r.address.text + ": " + problem, vocab::code::k_etcd_problem);
}

} // namespace

void put_etcd(NodeReading& r, Replies& replies) {
    if (r.gone || !replies.etcd_members) {
        return;
    }
    put(r.item, f::k_etcd) = Value::object();
    auto& members = *replies.etcd_members;
    if (!members) {
        etcd_problem(r, members.error());
        return;
    }
    Value list = Value::array();
    for (const auto& m : *members) {
        Value v = Value::object();
        v[f::member::k_id] = member_hex(m.id());
        v[f::member::k_hostname] = m.hostname();
        v[f::member::k_peer_urls] =
            std::vector<std::string>(m.peer_urls().begin(), m.peer_urls().end());
        v[f::member::k_client_urls] =
            std::vector<std::string>(m.client_urls().begin(), m.client_urls().end());
        v[f::member::k_learner] = m.is_learner();
        list.push_back(std::move(v));
    }
    put(r.item, f::k_etcd_members) = std::move(list);
    auto& st = *replies.etcd_status;
    if (st.ok()) {
        put(r.item, f::k_etcd_member_id) = member_hex(st->member_id());
        put(r.item, f::k_etcd_leader) = member_hex(st->leader());
        put(r.item, f::k_etcd_db_size) = st->db_size();
        put(r.item, f::k_etcd_raft_index) = st->raft_index();
    } else {
        etcd_problem(r, st.error());
    }
}

void put_node_id(NodeReading& r, Replies& replies) {
    if (auto res = take(r, replies.identity, doc::Severity::Info)) {
        if (auto id = talos::decode_spec<talos::spec::Identity>(*res)) {
            put(r.item, f::k_node_id) = id->node_id();
        }
    }
}

void put_timings(NodeReading& r, const std::vector<const talos::NodeClient*>& clients) {
    Value t = Value::array();
    for (const auto* c : clients) {
        for (const auto& call : c->calls()) {
            Value v = Value::object();
            v[f::timing::k_call] = call.method;
            v[f::timing::k_ms] = call.duration_ms;
            v[f::timing::k_ok] = call.ok;
            t.push_back(std::move(v));
        }
    }
    put(r.item, f::k_timings) = std::move(t);
}

} // namespace ichor::inspection
