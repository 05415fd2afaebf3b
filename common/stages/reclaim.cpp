#include "common/stages/reclaim.h"

#include "common/doc/objects.h"
#include "common/doc/vocabulary.h"
#include "common/inspection/view.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <set>

namespace ichor::stages {

using doc::Value;
using inspection::View;
using objects::MachineView;
namespace f = inspection::field;

namespace {

constexpr std::string_view k_etcd_prefix = "etcd is not running or not answering (";

std::string lower(std::string_view s) {
    return util::to_lower(util::trim(s));
}

std::string in_quotes(const std::string& s) {
    return "\"" + s + "\"";
}

bool is_uuid_text(const std::string& u) {
    if (u.size() != 36) {
        return false;
    }
    for (size_t i = 0; i < u.size(); ++i) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : std::isxdigit(static_cast<unsigned char>(u[i])) == 0) {
            return false;
        }
    }
    return true;
}

std::string machine_uuid(const Value& m) {
    return lower(MachineView(m).uuid());
}

std::string approval_of(const Value& m) {
    return MachineView(m).approval(std::string(objects::k_approval_pending));
}

// A machine record that stands for the node: the same UUID, and for a weak UUID the same serial.
bool same_machine(const Value& m, const std::string& uuid, const std::string& serial, bool weak) {
    if (machine_uuid(m) != lower(uuid)) {
        return false;
    }
    return !weak || util::trim(MachineView(m).serial()) == util::trim(serial);
}

std::set<std::string> mac_set(const Value* list) {
    std::set<std::string> out;
    if (list != nullptr && list->is_array()) {
        for (const auto& v : *list) {
            if (v.is_string()) {
                out.insert(lower(v.get<std::string>()));
            }
        }
    }
    return out;
}

Error refusal(std::string message, std::string hint, std::string_view code,
              ErrorKind kind = ErrorKind::Findings) {
    return make_error(kind, std::move(message), std::move(hint), code);
}

// The reason inside an Inspection's etcd problem: "etcd is not running or not answering (R)" -> R.
std::string etcd_reason(const std::string& problem) {
    if (problem.rfind(k_etcd_prefix, 0) == 0 && problem.back() == ')') {
        return problem.substr(k_etcd_prefix.size(), problem.size() - k_etcd_prefix.size() - 1);
    }
    return problem;
}

std::string host_of_url(const std::string& url) {
    std::string s = url;
    if (auto p = s.find("://"); p != std::string::npos) {
        s = s.substr(p + 3);
    }
    if (auto p = s.find('/'); p != std::string::npos) {
        s = s.substr(0, p);
    }
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        return close == std::string::npos ? s : s.substr(1, close - 1);
    }
    if (auto p = s.rfind(':'); p != std::string::npos) {
        s = s.substr(0, p);
    }
    return s;
}

// Refuses a reset that would break the etcd quorum or end the cluster (etcd answered).
Status check_quorum(const View& node, const PeerHealth& peers, const AssessOptions& o,
                    const std::string& cluster_name) {
    const Value* members = node.etcd_members();
    const std::string self = node.etcd_member_id();
    if (members == nullptr || self.empty()) {
        return ok_status();
    }
    int voting = 0;
    bool self_votes = false;
    for (const auto& m : *members) {
        if (m.value(f::member::k_learner, false)) {
            continue;
        }
        ++voting;
        self_votes = self_votes || m.value(f::member::k_id, "") == self;
    }
    if (!self_votes) {
        return ok_status(); // a learner or not a member: its leaving changes no quorum
    }
    if (voting == 1) {
        return refusal(
            o.address + ": is the last control plane of cluster " + in_quotes(cluster_name) +
                " (its only etcd member); a reset would end that cluster",
            "add another control plane to " + in_quotes(cluster_name) +
                " first; if the cluster is to end, reset the node yourself: talosctl -n " +
                o.address + " reset --graceful=false --reboot",
            vocab::code::k_last_control_plane);
    }
    int remaining = voting - 1;
    int need = remaining / 2 + 1;
    int started = 0;
    std::vector<std::string> silent;
    for (const auto& m : *members) {
        std::string id = m.value(f::member::k_id, "");
        if (id == self || m.value(f::member::k_learner, false)) {
            continue;
        }
        auto it =
            std::find_if(peers.begin(), peers.end(), [&](const auto& p) { return p.first == id; });
        if (it != peers.end() && it->second) {
            ++started;
        } else {
            silent.push_back(m.value(f::member::k_hostname, id));
        }
    }
    if (started >= need) {
        return ok_status();
    }
    return refusal(
        o.address + ": a reset would break the etcd quorum of cluster " + in_quotes(cluster_name) +
            ": after it leaves, " + std::to_string(remaining) + " members remain and need " +
            std::to_string(need) + " started, but only " + std::to_string(started) +
            " answer (not answering: " + util::join(silent, ", ") + ")",
        "bring the etcd members that do not answer back first (talosctl -n HOST service etcd)",
        vocab::code::k_quorum_break);
}

} // namespace

std::string uuid_weakness(const std::string& uuid_in, const std::string& serial,
                          const Value& machines) {
    std::string uuid = lower(uuid_in);
    if (uuid.empty()) {
        return "the node reports no UUID";
    }
    if (!is_uuid_text(uuid)) {
        return in_quotes(uuid_in) + " is not a UUID";
    }
    std::string digits;
    for (char c : uuid) {
        if (c != '-') {
            digits += c;
        }
    }
    if (digits.find_first_not_of(digits.front()) == std::string::npos) {
        return digits.front() == '0' ? "it is all zeros" : "it is one digit repeated";
    }
    static const std::set<std::string> k_placeholders = {"03000200-0400-0500-0006-000700080009",
                                                         "00020003-0004-0005-0006-000700080009",
                                                         "12345678-1234-5678-90ab-cddeefaabbcc"};
    if (k_placeholders.count(uuid) != 0) {
        return "it is a firmware placeholder that many boards share";
    }
    if (machines.is_array()) {
        for (const auto& m : machines) {
            std::string other = util::trim(MachineView(m).serial()).data();
            if (machine_uuid(m) == uuid && !other.empty() && other != util::trim(serial)) {
                return "TalosMachine " + doc::get_string(m, "metadata.name") +
                       " has the same UUID with serial " + in_quotes(other);
            }
        }
    }
    return "";
}

bool weak_uuid(const std::string& uuid, const std::string& serial, const Value& machines) {
    return !uuid_weakness(uuid, serial, machines).empty();
}

std::vector<EtcdPeer> etcd_peers(const Value& inspection) {
    std::vector<EtcdPeer> out;
    const View node(inspection);
    const Value* members = node.etcd_members();
    const std::string self = node.etcd_member_id();
    if (members == nullptr) {
        return out;
    }
    for (const auto& m : *members) {
        std::string id = m.value(f::member::k_id, "");
        if (id == self || m.value(f::member::k_learner, false)) {
            continue;
        }
        std::string host;
        for (const char* key : {f::member::k_peer_urls, f::member::k_client_urls}) {
            if (host.empty() && m.contains(key) && m[key].is_array() && !m[key].empty()) {
                host = host_of_url(m[key][0].get<std::string>());
            }
        }
        out.push_back({id, host.empty() ? m.value(f::member::k_hostname, "") : host});
    }
    return out;
}

namespace {

// Nodes reclaim cannot or must not reset: in maintenance mode, of another CA, read without
// os:admin, or an Ichor machine.
Status check_resettable(const View& node, const Known& known, bool weak, const AssessOptions& o) {
    const std::string& a = o.address;
    if (node.mode() == f::mode::k_maintenance) {
        return refusal(a +
                           ": is in maintenance mode already (it runs no configuration): there is "
                           "nothing to reset; it joins cluster " +
                           in_quotes(o.cluster) + " through discovery and approval",
                       "add " + a + " to spec.discovery.addresses of TalosCluster " + o.cluster +
                           ", then approve its TalosMachine",
                       vocab::code::k_maintenance);
    }
    if (node.tls_outcome() == f::tls::k_unknown_authority) {
        return refusal(a + ": its Talos API certificate is not signed by the CA of the "
                           "talosconfig: reclaim needs an os:admin talosconfig of the cluster "
                           "that configured it",
                       "kubectl ichor reclaim " + a +
                           " --talosconfig FILE-OF-ITS-CLUSTER --cluster " + o.cluster,
                       "UnknownAuthority", ErrorKind::Config);
    }
    const std::string access = node.access();
    if (access.find("os:admin") == std::string::npos) {
        return refusal(a + ": a reset needs os:admin, and the talosconfig's certificate has " +
                           (access.empty() || access == "none" ? std::string("no role") : access),
                       "use an os:admin talosconfig of the node's cluster",
                       vocab::code::k_not_admin, ErrorKind::Config);
    }
    const std::string uuid = node.uuid();
    const std::string serial = node.serial();
    for (const auto& m : known.machines) {
        if (approval_of(m) == objects::k_approval_approved && same_machine(m, uuid, serial, weak)) {
            const std::string name = doc::get_string(m, "metadata.name");
            return refusal(a + ": is an Ichor machine: TalosMachine " + name + " of cluster " +
                               in_quotes(MachineView(m).cluster()) + " is approved with its UUID " +
                               uuid + "; reclaim does not reset a machine Ichor manages",
                           "kubectl get talosmachine " + name + " -o yaml",
                           vocab::code::k_ichor_machine);
        }
    }
    return ok_status();
}

// A control plane: whether the reset is graceful, or refused, from its etcd.
Status assess_etcd(const View& node, const PeerHealth& peers, const AssessOptions& o,
                   Assessment& a) {
    const std::string name = node.text(f::k_cluster_name, "(unnamed)");
    const std::string problem = node.etcd_problem();
    if (problem.empty()) {
        if (auto q = check_quorum(node, peers, o, name); !q) {
            return q;
        }
        if (o.force_ungraceful) {
            a.warnings.push_back({std::string(vocab::code::k_force_ungraceful_unused),
                                  "--force-ungraceful is not used: etcd of cluster " +
                                      in_quotes(name) +
                                      " answers and keeps its quorum, so the reset is graceful"});
        }
        return ok_status();
    }
    if (!o.force_ungraceful) {
        return refusal(o.address + ": refusing a graceful reset: etcd of cluster " +
                           in_quotes(name) + " is not running or not answering (" +
                           etcd_reason(problem) + "); a graceful reset must leave etcd first",
                       "if cluster " + in_quotes(name) +
                           " does not exist any more: kubectl ichor reclaim " + o.address +
                           " --talosconfig " + (o.talosconfig.empty() ? "FILE" : o.talosconfig) +
                           " --cluster " + o.cluster + " --force-ungraceful",
                       vocab::code::k_etcd_problem);
    }
    a.graceful = false;
    a.warnings.push_back({std::string(vocab::code::k_ungraceful),
                          "cluster " + in_quotes(name) +
                              " is treated as not existing, so its quorum cannot be "
                              "checked and the reset is not graceful"});
    return ok_status();
}

} // namespace

Result<Assessment> assess(const Value& item, const Known& known, const PeerHealth& peers,
                          const AssessOptions& o) {
    const View node(item);
    Assessment a;
    a.weak_uuid = weak_uuid(node.uuid(), node.serial(), known.machines);
    if (auto r = check_resettable(node, known, a.weak_uuid, o); !r) {
        return r.error();
    }
    const std::string id = node.cluster_id();
    const std::string name = node.text(f::k_cluster_name, "(unnamed)");
    for (const auto& c : known.clusters) {
        if (!id.empty() && c.cluster_id == id) {
            a.warnings.push_back(
                {std::string(vocab::code::k_managed_cluster),
                 o.address + ": node belongs to cluster " + in_quotes(name) +
                     ", which Ichor already manages; a reset is not needed: add it to that Ichor "
                     "cluster with kubectl ichor adopt --cluster " +
                     c.name + " --add-machine " + o.address +
                     " (no approved TalosMachine has its UUID, so reclaim goes on)"});
        }
    }
    if (node.role() == "worker") {
        return a;
    }
    if (auto e = assess_etcd(node, peers, o, a); !e) {
        return e.error();
    }
    return a;
}

namespace {

Value new_machine(const std::string& name, const View& node, const RegisterOptions& o) {
    Value m = Value::object();
    m["apiVersion"] = doc::k_ichor_api;
    m["kind"] = "TalosMachine";
    m["metadata"]["name"] = name;
    m["metadata"]["namespace"] = o.ns;
    m["metadata"]["labels"][std::string(k_label_cluster)] = o.cluster;
    m["spec"]["cluster"] = o.cluster;
    m["spec"]["approval"] = "Pending";
    m["spec"]["address"] = o.address;
    m["spec"]["identity"]["uuid"] = node.uuid();
    m["spec"]["identity"]["serial"] = node.serial();
    const Value* macs = node.macs();
    m["spec"]["identity"]["macs"] = macs != nullptr ? *macs : Value::array();
    return m;
}

// What differs between a machine's recorded identity and the node's: serial, MAC set.
std::vector<std::string> identity_differences(const Value& m, const View& node) {
    std::vector<std::string> differ;
    const std::string recorded = util::trim(MachineView(m).serial()).data();
    const std::string read = util::trim(node.serial()).data();
    if (recorded != read) {
        differ.push_back("serial " + in_quotes(recorded) + " recorded, " + in_quotes(read) +
                         " read");
    }
    if (mac_set(MachineView(m).macs()) != mac_set(node.macs())) {
        differ.push_back("MAC addresses");
    }
    return differ;
}

} // namespace

// The TalosMachine's schema keeps a disk's name, path, size, model and serial (the Inspection
// also has the fields a disk selector matches).
Value recorded_disks(const View& node) {
    Value disks = Value::array();
    if (const Value* list = node.disks(); list != nullptr) {
        namespace dk = inspection::field::disk;
        for (const auto& d : *list) {
            Value x = Value::object();
            for (const char* key :
                 {dk::k_name, dk::k_dev_path, dk::k_size, dk::k_model, dk::k_serial}) {
                if (d.contains(key)) {
                    x[key] = d[key];
                }
            }
            disks.push_back(std::move(x));
        }
    }
    return disks;
}

Registration plan_registration(const Value& machines, const Value& maint,
                               const RegisterOptions& o) {
    Registration r;
    const View node(maint);
    const std::string uuid = node.uuid();
    const std::string serial = node.serial();
    const std::string fp = node.tls_fingerprint();
    // A UUID that is weak by itself (all zeros, a placeholder) is matched with the serial; one
    // that is only shared with another record is matched alone, so that the record is found and
    // its other serial keeps it unchanged.
    const bool weak = !uuid_weakness(uuid, serial, Value::array()).empty();
    r.status = Value::object();
    r.status["maintenanceFingerprint"] = fp;
    r.status["discoveredDisks"] = recorded_disks(node);
    r.status["discoveredLinks"] = node.links() != nullptr ? *node.links() : Value::array();

    const Value* found = nullptr;
    for (const auto& m : machines) {
        if (!same_machine(m, uuid, serial, weak)) {
            continue;
        }
        if (MachineView(m).cluster() != o.cluster) {
            r.warnings.push_back({std::string(vocab::code::k_same_uuid_elsewhere),
                                  "TalosMachine " + doc::get_string(m, "metadata.name") +
                                      " of cluster " + in_quotes(MachineView(m).cluster()) + " (" +
                                      approval_of(m) + ") has the same UUID; it is left as it is"});
            continue;
        }
        if (found == nullptr || approval_of(m) != objects::k_approval_pending) {
            found = &m; // an approved or rejected record wins: it is never touched
        }
    }
    if (found == nullptr) {
        std::string base = weak ? "serial-" + lower(serial) : lower(uuid);
        for (char& c : base) {
            c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '-';
        }
        r.action = Registration::Action::Create;
        r.name = o.cluster + "-" + base;
        r.machine = new_machine(r.name, node, o);
        return r;
    }
    r.name = doc::get_string(*found, "metadata.name");
    r.machine = *found;
    const std::string approval = approval_of(*found);
    r.action = Registration::Action::Left;
    if (approval != objects::k_approval_pending) {
        r.why = "TalosMachine " + r.name + " of cluster " + in_quotes(o.cluster) +
                " has this UUID and is " + approval +
                "; it is never changed by reclaim, so nothing was registered";
        return r;
    }
    r.old_fingerprint = doc::get_string(*found, "status.maintenanceFingerprint");
    const std::vector<std::string> differ = identity_differences(*found, node);
    if (weak || !differ.empty()) {
        r.why = "pending TalosMachine " + r.name + " was left as it is: " +
                (weak ? std::string("the node's UUID cannot identify it")
                      : "its recorded identity differs (" + util::join(differ, "; ") + ")") +
                "; approve it with the annotation " +
                std::string(vocab::k_annotation_trust_maintenance_fingerprint) + ": " + fp +
                ", or reject it";
        return r;
    }
    if (r.old_fingerprint == fp) {
        r.action = Registration::Action::Unchanged;
        r.why = "pending TalosMachine " + r.name + " already records fingerprint " + fp;
        return r;
    }
    r.action = Registration::Action::Discovery;
    return r;
}

std::string inspection_block(const Value& item) {
    const View node(item);
    auto row = [](const std::string& k, const std::string& v) {
        std::string key = k + ":";
        key.resize(std::max<size_t>(key.size(), 10), ' ');
        return "  " + key + (v.empty() ? "(unknown)" : v) + "\n";
    };
    std::string cluster = node.cluster_name();
    std::string id = node.cluster_id();
    std::string out;
    out += row("cluster", cluster + (id.empty() ? "" : " (ID " + id + ")"));
    out += row("role", node.role());
    out += row("hostname", node.hostname());
    out += row("address",
               node.address() + ":" + std::to_string(node.port().value_or(talos::k_apid_port)));
    out += row("UUID", node.uuid());
    out += row("serial", node.serial());
    out += row("Talos", node.talos_version());
    if (node.role() != "worker" && node.has_etcd()) {
        std::string problem = node.etcd_problem();
        std::string etcd;
        if (!problem.empty()) {
            etcd = "not running or not answering (" + etcd_reason(problem) + ")";
        } else {
            const Value* members = node.etcd_members();
            std::vector<std::string> names;
            if (members != nullptr) {
                for (const auto& m : *members) {
                    names.push_back(m.value(f::member::k_hostname, m.value(f::member::k_id, "")));
                }
            }
            etcd = std::to_string(names.size()) + " member" + (names.size() == 1 ? "" : "s") +
                   " (" + util::join(names, ", ") + "), this node " + node.etcd_member_id();
        }
        out += row("etcd", etcd);
    }
    return out;
}

} // namespace ichor::stages
