#include "common/stages/reclaim.h"

#include "common/stages/inspect.h"
#include "common/stages/sources.h"
#include "common/talos/errors.h"
#include "common/util/strings.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <set>

namespace ichor::stages {

using doc::Value;

namespace {

constexpr std::string_view k_etcd_prefix = "etcd is not running or not answering (";

std::string lower(std::string_view s) {
    return util::to_lower(util::trim(s));
}

std::string quoted(const std::string& s) {
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
    return lower(doc::get_string(m, "spec.identity.uuid"));
}

std::string approval_of(const Value& m) {
    return doc::get_string(m, "spec.approval", "Pending");
}

// A machine record that stands for the node: the same UUID, and for a weak UUID the same serial.
bool same_machine(const Value& m, const std::string& uuid, const std::string& serial, bool weak) {
    if (machine_uuid(m) != lower(uuid)) {
        return false;
    }
    return !weak || util::trim(doc::get_string(m, "spec.identity.serial")) == util::trim(serial);
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

std::string rfc3339(std::chrono::system_clock::time_point t) {
    std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

Error refusal(std::string message, std::string hint, std::string code,
              ErrorKind kind = ErrorKind::Findings) {
    return make_error(kind, std::move(message), std::move(hint), std::move(code));
}

// The reason inside an Inspection's etcd problem: "etcd is not running or not answering (R)" -> R.
std::string etcd_reason(const std::string& problem) {
    if (problem.rfind(k_etcd_prefix, 0) == 0 && problem.back() == ')') {
        return problem.substr(k_etcd_prefix.size(), problem.size() - k_etcd_prefix.size() - 1);
    }
    return problem;
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
        if (code == talos::code::k_timeout || code == talos::code::k_unreachable ||
            code == talos::code::k_unavailable || code == talos::code::k_internal) {
            kind = ErrorKind::Unreachable;
        }
        return make_error(kind, r.value("message", ""), "", code);
    }
    return std::nullopt;
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
Status check_quorum(const Value& st, const PeerHealth& peers, const AssessOptions& o,
                    const std::string& cluster_name) {
    const Value* members = doc::find_path(st, "etcd.members");
    const std::string self = doc::get_string(st, "etcd.status.memberID");
    if (members == nullptr || !members->is_array() || self.empty()) {
        return ok_status();
    }
    int voting = 0;
    bool self_votes = false;
    for (const auto& m : *members) {
        if (m.value("learner", false)) {
            continue;
        }
        ++voting;
        self_votes = self_votes || m.value("id", "") == self;
    }
    if (!self_votes) {
        return ok_status(); // a learner or not a member: its leaving changes no quorum
    }
    if (voting == 1) {
        return refusal(o.address + ": is the last control plane of cluster " + quoted(cluster_name) +
                           " (its only etcd member); a reset would end that cluster",
                       "add another control plane to " + quoted(cluster_name) +
                           " first; if the cluster is to end, reset the node yourself: talosctl -n " +
                           o.address + " reset --graceful=false --reboot",
                       "LastControlPlane");
    }
    int remaining = voting - 1;
    int need = remaining / 2 + 1;
    int started = 0;
    std::vector<std::string> silent;
    for (const auto& m : *members) {
        std::string id = m.value("id", "");
        if (id == self || m.value("learner", false)) {
            continue;
        }
        auto it = std::find_if(peers.begin(), peers.end(), [&](const auto& p) { return p.first == id; });
        if (it != peers.end() && it->second) {
            ++started;
        } else {
            silent.push_back(m.value("hostname", id));
        }
    }
    if (started >= need) {
        return ok_status();
    }
    return refusal(o.address + ": a reset would break the etcd quorum of cluster " + quoted(cluster_name) +
                       ": after it leaves, " + std::to_string(remaining) + " members remain and need " +
                       std::to_string(need) + " started, but only " + std::to_string(started) +
                       " answer (not answering: " + util::join(silent, ", ") + ")",
                   "bring the etcd members that do not answer back first (talosctl -n HOST service etcd)",
                   "QuorumBreak");
}

} // namespace

std::string uuid_weakness(const std::string& uuid_in, const std::string& serial, const Value& machines) {
    std::string uuid = lower(uuid_in);
    if (uuid.empty()) {
        return "the node reports no UUID";
    }
    if (!is_uuid_text(uuid)) {
        return quoted(uuid_in) + " is not a UUID";
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
    static const std::set<std::string> k_placeholders = {
        "03000200-0400-0500-0006-000700080009", "00020003-0004-0005-0006-000700080009",
        "12345678-1234-5678-90ab-cddeefaabbcc"};
    if (k_placeholders.count(uuid) != 0) {
        return "it is a firmware placeholder that many boards share";
    }
    if (machines.is_array()) {
        for (const auto& m : machines) {
            std::string other = util::trim(doc::get_string(m, "spec.identity.serial")).data();
            if (machine_uuid(m) == uuid && !other.empty() && other != util::trim(serial)) {
                return "TalosMachine " + doc::get_string(m, "metadata.name") +
                       " has the same UUID with serial " + quoted(other);
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
    const Value* members = doc::find_path(inspection, "status.etcd.members");
    const std::string self = doc::get_string(inspection, "status.etcd.status.memberID");
    if (members == nullptr || !members->is_array()) {
        return out;
    }
    for (const auto& m : *members) {
        std::string id = m.value("id", "");
        if (id == self || m.value("learner", false)) {
            continue;
        }
        std::string host;
        for (const char* key : {"peerURLs", "clientURLs"}) {
            if (host.empty() && m.contains(key) && m[key].is_array() && !m[key].empty()) {
                host = host_of_url(m[key][0].get<std::string>());
            }
        }
        out.push_back({id, host.empty() ? m.value("hostname", "") : host});
    }
    return out;
}

Result<Assessment> assess(const Value& item, const Known& known, const PeerHealth& peers,
                          const AssessOptions& o) {
    const Value& st = item.contains("status") ? item["status"] : Value::object();
    const std::string mode = st.value("mode", "");
    const std::string tls = doc::get_string(st, "tls.outcome");
    if (mode == "maintenance") {
        return refusal(o.address + ": is in maintenance mode already (it runs no configuration): there is "
                                   "nothing to reset; it joins cluster " + quoted(o.cluster) +
                           " through discovery and approval",
                       "add " + o.address + " to spec.discovery.addresses of TalosCluster " + o.cluster +
                           ", then approve its TalosMachine",
                       "Maintenance");
    }
    if (tls == "unknownAuthority") {
        return refusal(o.address + ": its Talos API certificate is not signed by the CA of the talosconfig: "
                                   "reclaim needs an os:admin talosconfig of the cluster that configured it",
                       "kubectl ichor reclaim " + o.address + " --talosconfig FILE-OF-ITS-CLUSTER --cluster " +
                           o.cluster,
                       "UnknownAuthority", ErrorKind::Config);
    }
    const std::string access = st.value("access", "");
    if (access.find("os:admin") == std::string::npos) {
        return refusal(o.address + ": a reset needs os:admin, and the talosconfig's certificate has " +
                           (access.empty() || access == "none" ? std::string("no role") : access),
                       "use an os:admin talosconfig of the node's cluster", "NotAdmin", ErrorKind::Config);
    }
    Assessment a;
    const std::string uuid = doc::get_string(st, "identity.uuid");
    const std::string serial = doc::get_string(st, "identity.serial");
    a.weak_uuid = weak_uuid(uuid, serial, known.machines);
    for (const auto& m : known.machines) {
        if (approval_of(m) == "Approved" && same_machine(m, uuid, serial, a.weak_uuid)) {
            return refusal(o.address + ": is an Ichor machine: TalosMachine " + doc::get_string(m, "metadata.name") +
                               " of cluster " + quoted(doc::get_string(m, "spec.cluster")) +
                               " is approved with its UUID " + uuid +
                               "; reclaim does not reset a machine Ichor manages",
                           "kubectl get talosmachine " + doc::get_string(m, "metadata.name") + " -o yaml",
                           "IchorMachine");
        }
    }
    const std::string id = doc::get_string(st, "facts.clusterID");
    const std::string name = doc::get_string(st, "facts.clusterName", "(unnamed)");
    for (const auto& c : known.clusters) {
        if (!id.empty() && c.cluster_id == id) {
            a.warnings.push_back(o.address + ": node belongs to cluster " + quoted(name) +
                                 ", which Ichor already manages; a reset is not needed: add it to that "
                                 "Ichor cluster with kubectl ichor adopt --cluster " + c.name +
                                 " --add-machine " + o.address +
                                 " (no approved TalosMachine has its UUID, so reclaim goes on)");
        }
    }
    if (doc::get_string(st, "facts.role") == "worker") {
        return a;
    }
    const std::string problem = doc::get_string(st, "etcd.problem");
    if (!problem.empty()) {
        if (!o.force_ungraceful) {
            return refusal(o.address + ": refusing a graceful reset: etcd of cluster " + quoted(name) +
                               " is not running or not answering (" + etcd_reason(problem) +
                               "); a graceful reset must leave etcd first",
                           "if cluster " + quoted(name) + " does not exist any more: kubectl ichor reclaim " +
                               o.address + " --talosconfig " + (o.talosconfig.empty() ? "FILE" : o.talosconfig) +
                               " --cluster " + o.cluster + " --force-ungraceful",
                           "EtcdProblem");
        }
        a.graceful = false;
        a.warnings.push_back("cluster " + quoted(name) +
                             " is treated as not existing, so its quorum cannot be checked and the reset "
                             "is not graceful");
        return a;
    }
    if (auto q = check_quorum(st, peers, o, name); !q) {
        return q.error();
    }
    if (o.force_ungraceful) {
        a.warnings.push_back("--force-ungraceful is not used: etcd of cluster " + quoted(name) +
                             " answers and keeps its quorum, so the reset is graceful");
    }
    return a;
}

Registration plan_registration(const Value& machines, const Value& maint, const RegisterOptions& o) {
    Registration r;
    const Value& st = maint["status"];
    const std::string uuid = doc::get_string(st, "identity.uuid");
    const std::string serial = doc::get_string(st, "identity.serial");
    const std::string fp = doc::get_string(st, "tls.fingerprint");
    const bool weak = weak_uuid(uuid, serial, machines);
    r.status = Value::object();
    r.status["maintenanceFingerprint"] = fp;
    r.status["discoveredDisks"] = st.contains("disks") ? st["disks"] : Value::array();
    r.status["discoveredLinks"] = st.contains("links") ? st["links"] : Value::array();

    const Value* found = nullptr;
    for (const auto& m : machines) {
        if (!same_machine(m, uuid, serial, weak)) {
            continue;
        }
        if (doc::get_string(m, "spec.cluster") != o.cluster) {
            r.warnings.push_back("TalosMachine " + doc::get_string(m, "metadata.name") + " of cluster " +
                                 quoted(doc::get_string(m, "spec.cluster")) + " (" + approval_of(m) +
                                 ") has the same UUID; it is left as it is");
            continue;
        }
        if (found == nullptr || approval_of(m) != "Pending") {
            found = &m; // an approved or rejected record wins: it is never touched
        }
    }
    if (found == nullptr) {
        r.action = Registration::Action::Create;
        std::string base = weak ? "serial-" + lower(serial) : lower(uuid);
        for (char& c : base) {
            c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '-';
        }
        r.name = o.cluster + "-" + base;
        Value m = Value::object();
        m["apiVersion"] = doc::k_ichor_api;
        m["kind"] = "TalosMachine";
        m["metadata"]["name"] = r.name;
        m["metadata"]["namespace"] = o.ns;
        m["metadata"]["labels"][std::string(k_label_cluster)] = o.cluster;
        m["spec"]["cluster"] = o.cluster;
        m["spec"]["approval"] = "Pending";
        m["spec"]["address"] = o.address;
        m["spec"]["identity"]["uuid"] = uuid;
        m["spec"]["identity"]["serial"] = serial;
        m["spec"]["identity"]["macs"] = doc::find_path(st, "identity.macs") != nullptr ? st["identity"]["macs"] : Value::array();
        r.machine = std::move(m);
        return r;
    }
    r.name = doc::get_string(*found, "metadata.name");
    r.machine = *found;
    const std::string approval = approval_of(*found);
    if (approval != "Pending") {
        r.action = Registration::Action::Left;
        r.why = "TalosMachine " + r.name + " of cluster " + quoted(o.cluster) + " has this UUID and is " +
                approval + "; it is never changed by reclaim, so nothing was registered";
        return r;
    }
    r.old_fingerprint = doc::get_string(*found, "status.maintenanceFingerprint");
    std::vector<std::string> differ;
    if (machine_uuid(*found) != lower(uuid)) {
        differ.push_back("UUID");
    }
    if (util::trim(doc::get_string(*found, "spec.identity.serial")) != util::trim(serial)) {
        differ.push_back("serial " + quoted(doc::get_string(*found, "spec.identity.serial")) + " recorded, " +
                         quoted(serial) + " read");
    }
    if (mac_set(doc::find_path(*found, "spec.identity.macs")) != mac_set(doc::find_path(st, "identity.macs"))) {
        differ.push_back("MAC addresses");
    }
    if (weak || !differ.empty()) {
        r.action = Registration::Action::Left;
        r.why = "pending TalosMachine " + r.name + " was left as it is: " +
                (weak ? std::string("the node's UUID cannot identify it")
                      : "its recorded identity differs (" + util::join(differ, "; ") + ")") +
                "; approve it with the annotation ichor.maesh.dev/trust-maintenance-fingerprint: " + fp +
                ", or reject it";
        return r;
    }
    if (r.old_fingerprint == fp) {
        r.action = Registration::Action::Unchanged;
        r.why = "pending TalosMachine " + r.name + " already records fingerprint " + fp;
        return r;
    }
    r.action = Registration::Action::Refresh;
    return r;
}

Value refresh_event(const Value& machine, const std::string& old_fp, const std::string& new_fp,
                    std::chrono::system_clock::time_point now) {
    const std::string name = doc::get_string(machine, "metadata.name");
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    char suffix[20];
    std::snprintf(suffix, sizeof(suffix), "%llx", static_cast<unsigned long long>(nanos));
    Value e = Value::object();
    e["apiVersion"] = "v1";
    e["kind"] = "Event";
    e["metadata"]["name"] = name + "." + suffix;
    e["metadata"]["namespace"] = doc::get_string(machine, "metadata.namespace");
    Value ref = Value::object();
    ref["apiVersion"] = doc::k_ichor_api;
    ref["kind"] = "TalosMachine";
    ref["name"] = name;
    ref["namespace"] = doc::get_string(machine, "metadata.namespace");
    if (auto uid = doc::get_string(machine, "metadata.uid"); !uid.empty()) {
        ref["uid"] = uid;
    }
    if (auto rv = doc::get_string(machine, "metadata.resourceVersion"); !rv.empty()) {
        ref["resourceVersion"] = rv;
    }
    e["involvedObject"] = std::move(ref);
    e["type"] = "Normal";
    e["reason"] = k_reason_identity_refreshed;
    e["message"] = "maintenance certificate fingerprint changed from " +
                   (old_fp.empty() ? std::string("(none)") : old_fp) + " to " + new_fp +
                   " (UUID, serial and MAC addresses unchanged); status re-recorded after a reset";
    e["source"]["component"] = k_reclaim_component;
    e["reportingComponent"] = k_reclaim_component;
    e["reportingInstance"] = k_reclaim_component;
    e["firstTimestamp"] = rfc3339(now);
    e["lastTimestamp"] = rfc3339(now);
    e["count"] = 1;
    return e;
}

std::string inspection_block(const Value& item) {
    const Value& st = item.contains("status") ? item["status"] : Value::object();
    auto row = [](const std::string& k, const std::string& v) {
        std::string key = k + ":";
        key.resize(std::max<size_t>(key.size(), 10), ' ');
        return "  " + key + (v.empty() ? "(unknown)" : v) + "\n";
    };
    std::string cluster = doc::get_string(st, "facts.clusterName");
    std::string id = doc::get_string(st, "facts.clusterID");
    std::string out;
    out += row("cluster", cluster + (id.empty() ? "" : " (ID " + id + ")"));
    out += row("role", doc::get_string(st, "facts.role"));
    out += row("hostname", doc::get_string(st, "identity.hostname"));
    out += row("address", doc::get_string(item, "spec.address") + ":" +
                              std::to_string(item["spec"].value("port", talos::k_apid_port)));
    out += row("UUID", doc::get_string(st, "identity.uuid"));
    out += row("serial", doc::get_string(st, "identity.serial"));
    out += row("Talos", doc::get_string(st, "talosVersion"));
    if (doc::get_string(st, "facts.role") != "worker" && st.contains("etcd")) {
        std::string problem = doc::get_string(st, "etcd.problem");
        std::string etcd;
        if (!problem.empty()) {
            etcd = "not running or not answering (" + etcd_reason(problem) + ")";
        } else {
            const Value* members = doc::find_path(st, "etcd.members");
            std::vector<std::string> names;
            if (members != nullptr && members->is_array()) {
                for (const auto& m : *members) {
                    names.push_back(m.value("hostname", m.value("id", "")));
                }
            }
            etcd = std::to_string(names.size()) + " member" + (names.size() == 1 ? "" : "s") + " (" +
                   util::join(names, ", ") + "), this node " + doc::get_string(st, "etcd.status.memberID");
        }
        out += row("etcd", etcd);
    }
    return out;
}

// --- the flow --------------------------------------------------------------------------------

namespace {

struct Flow {
    const ReclaimOptions& o;
    ReclaimNode& node;
    ReclaimRegistry& reg;
    const ReclaimUi& ui;
    ReclaimOutcome out;

    void say(const std::string& line) const {
        if (ui.step) {
            ui.step(line);
        }
    }
    void warn(const std::string& line) {
        if (ui.warn) {
            ui.warn(line);
        }
        out.list.add_result(doc::Severity::Warning, line, "Warning");
    }
    void progress(const std::string& line) const {
        if (ui.progress) {
            ui.progress(line);
        }
    }
    void progress_done() const {
        if (ui.progress_done) {
            ui.progress_done();
        }
    }
    ReclaimOutcome fail(Error e) {
        progress_done();
        Value tags = Value::object();
        tags[std::string(doc::k_tag_node)] = o.address.text;
        if (!e.hint.empty()) {
            tags["ichor.maesh.dev/hint"] = e.hint;
        }
        out.list.add_result(doc::Severity::Error, e.message, e.code.empty() ? "Failed" : e.code, nullptr,
                            std::move(tags));
        out.failure = std::move(e);
        return std::move(out);
    }
    std::chrono::steady_clock::time_point now() const {
        return ui.now ? ui.now() : std::chrono::steady_clock::now();
    }
    void sleep(std::int64_t ms) const {
        if (ms > 0 && ui.sleep_ms) {
            ui.sleep_ms(ms);
        }
    }

    // The typed confirmation: the UUID, and the serial number as well when the UUID is weak.
    Status confirm(const Value& item, const std::string& weakness) {
        const std::string& a = o.address.text;
        const std::string uuid = doc::get_string(item, "status.identity.uuid");
        const std::string serial = doc::get_string(item, "status.identity.serial");
        auto answer = [&](const std::string& given, const std::string& question) -> std::optional<std::string> {
            if (!given.empty()) {
                return given;
            }
            return ui.ask ? ui.ask(question) : std::nullopt;
        };
        auto typed = answer(o.confirm_uuid, "To reset " + a + ", type its UUID: ");
        if (!typed) {
            return refusal(a + ": no terminal to confirm the reset on: pass --confirm-uuid with the node's UUID; "
                               "nothing was reset",
                           "kubectl ichor reclaim " + a + " ... --confirm-uuid UUID", "ConfirmationRequired");
        }
        if (lower(*typed) != lower(uuid)) {
            return refusal(a + ": the UUID typed (" + (typed->empty() ? std::string("nothing") : *typed) +
                               ") is not the node's (" + uuid + "); nothing was reset",
                           "", "ConfirmationMismatch");
        }
        if (weakness.empty()) {
            return ok_status();
        }
        warn(a + ": its UUID " + (uuid.empty() ? std::string("(none)") : uuid) +
             " cannot identify one machine (" + weakness + "): confirm its serial number as well");
        auto typed_serial = answer(o.confirm_serial, "To reset " + a + ", type its serial number: ");
        if (!typed_serial) {
            return refusal(a + ": no terminal to confirm the serial number on: pass --confirm-serial with the "
                               "node's serial number as well; nothing was reset",
                           "kubectl ichor reclaim " + a + " ... --confirm-uuid UUID --confirm-serial SERIAL",
                           "ConfirmationRequired");
        }
        if (util::trim(*typed_serial) != util::trim(serial)) {
            return refusal(a + ": the serial number typed (" +
                               (typed_serial->empty() ? std::string("nothing") : *typed_serial) +
                               ") is not the node's (" + serial + "); nothing was reset",
                           "", "ConfirmationMismatch");
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
        say("Wait for " + a + " to come back in maintenance mode (at most " + limit + ")");
        const auto start = now();
        const auto deadline = start + std::chrono::milliseconds(o.wait_timeout_ms);
        auto left = [&] {
            return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now()).count();
        };
        std::string last = "the reset was just sent";
        sleep(std::min(o.poll_interval_ms, left()));
        while (left() > 0) {
            auto p = node.probe_maintenance(std::min(o.call_timeout_ms, left()));
            if (p) {
                std::string stage = doc::get_string(*p, "status.machineStatus.stage");
                if (stage.empty() || stage == "maintenance") {
                    progress_done();
                    return p;
                }
                last = "answers without a certificate, stage " + stage;
            } else {
                last = waiting_reason(p.error());
            }
            auto waited = std::chrono::duration_cast<std::chrono::seconds>(now() - start).count();
            progress("waiting for " + a + " in maintenance mode: " + std::to_string(waited) + "s of " + limit +
                     " (" + last + ")");
            sleep(std::min(o.poll_interval_ms, left()));
        }
        progress_done();
        return make_error(ErrorKind::Unreachable,
                          a + " did not come back in maintenance mode within " + limit + " (last: " + last +
                              "); the reset was sent (actor ID " + actor + ")",
                          "kubectl ichor inspect " + a + " --insecure", "Timeout");
    }

    ReclaimOutcome register_machine(const Value& maint) {
        const std::string& a = o.address.text;
        say("Register " + a + " in cluster " + o.cluster + " (namespace " + o.ns + ")");
        auto machines = reg.machines();
        if (!machines) {
            return fail(machines.error());
        }
        Registration r = plan_registration(*machines, maint, {o.cluster, o.ns, a});
        for (const auto& w : r.warnings) {
            warn(w);
        }
        out.registered = r.action;
        switch (r.action) {
        case Registration::Action::Create: {
            auto created = reg.create_machine(r.machine);
            if (!created) {
                Error e = created.error().wrap(a + ": creating TalosMachine " + r.name);
                e.kind = e.code == "AlreadyExists" ? ErrorKind::Partial : e.kind;
                return fail(e);
            }
            auto patched = reg.patch_machine_status(r.name, r.status);
            if (!patched) {
                out.list.items.push_back(*created);
                return fail(patched.error().wrap(a + ": TalosMachine " + r.name +
                                                 " was created, but recording its status failed"));
            }
            out.list.items.push_back(*patched);
            say("created pending TalosMachine " + r.name + " (fingerprint " + out.fingerprint +
                "); approve it: kubectl patch talosmachine " + r.name + " -n " + o.ns +
                " --type merge -p '{\"spec\":{\"approval\":\"Approved\"}}'");
            return std::move(out);
        }
        case Registration::Action::Refresh: {
            auto patched = reg.patch_machine_status(r.name, r.status);
            if (!patched) {
                return fail(patched.error().wrap(a + ": refreshing pending TalosMachine " + r.name));
            }
            out.list.items.push_back(*patched);
            auto wall = ui.wall_now ? ui.wall_now() : std::chrono::system_clock::now();
            if (auto ev = reg.create_event(refresh_event(*patched, r.old_fingerprint, out.fingerprint, wall)); !ev) {
                warn("the Event " + std::string(k_reason_identity_refreshed) + " on TalosMachine " + r.name +
                     " could not be written: " + ev.error().message);
            }
            say("refreshed pending TalosMachine " + r.name + ": maintenance fingerprint " +
                (r.old_fingerprint.empty() ? std::string("(none)") : r.old_fingerprint) + " -> " +
                out.fingerprint + ", disks and links re-recorded (Event " +
                std::string(k_reason_identity_refreshed) + ")");
            return std::move(out);
        }
        case Registration::Action::Unchanged:
            out.list.items.push_back(r.machine);
            say(r.why);
            return std::move(out);
        case Registration::Action::Left:
            out.list.items.push_back(r.machine);
            return fail(make_error(ErrorKind::Partial, a + ": the node was reset, but " + r.why, "",
                                   "NotRegistered"));
        }
        return std::move(out);
    }

    ReclaimOutcome run() {
        const std::string& a = o.address.text;
        auto known = reg.known([this](std::string_view w) { warn(std::string(w)); });
        if (!known) {
            return fail(known.error());
        }
        if (std::none_of(known->clusters.begin(), known->clusters.end(),
                         [&](const ManagedCluster& c) { return c.name == o.cluster; })) {
            return fail(make_error(ErrorKind::Config,
                                   "TalosCluster " + quoted(o.cluster) + " not found in namespace " + quoted(o.ns),
                                   "kubectl get talosclusters -A", "ClusterNotFound"));
        }
        say("Inspect " + a + " with talosconfig context " + quoted(o.context_name) + " (each call gives up after " +
            util::format_duration_ms(o.call_timeout_ms) + ")");
        Value results = Value::array();
        Value item = node.inspect(results);
        for (auto& r : results) {
            out.list.results.push_back(r);
        }
        if (doc::get_string(item, "status.mode") == "unreachable") {
            auto e = first_error(results);
            return fail(e ? *e : make_error(ErrorKind::Unreachable, a + ": could not be read", "", "Unreachable"));
        }
        PeerHealth peers;
        if (doc::get_string(item, "status.etcd.problem").empty()) {
            for (const auto& p : etcd_peers(item)) {
                peers.emplace_back(p.id, !p.host.empty() && node.member_answers(p.host));
            }
        }
        std::string block = inspection_block(item);
        say(block.substr(0, block.size() - 1));
        auto assessed = assess(item, *known, peers, {a, o.talosconfig_path, o.cluster, o.force_ungraceful});
        if (!assessed) {
            return fail(assessed.error());
        }
        for (const auto& w : assessed->warnings) {
            warn(w);
        }
        const std::string weakness = uuid_weakness(doc::get_string(item, "status.identity.uuid"),
                                                   doc::get_string(item, "status.identity.serial"), known->machines);
        if (auto c = confirm(item, weakness); !c) {
            return fail(c.error());
        }
        talos::ResetOptions ro;
        ro.graceful = assessed->graceful;
        ro.reboot = true;
        ro.system_volumes = {"STATE", "EPHEMERAL"};
        say("Reset " + a + ": wipe STATE and EPHEMERAL, then reboot (" +
            (ro.graceful ? "graceful" : "not graceful: etcd and Kubernetes are not left first") + ")");
        auto actor = node.reset(ro);
        if (!actor) {
            return fail(actor.error().wrap(a + ": the reset was not accepted"));
        }
        out.reset_done = true;
        auto maint = wait_for_maintenance(*actor);
        if (!maint) {
            return fail(maint.error());
        }
        out.fingerprint = doc::get_string(*maint, "status.tls.fingerprint");
        const std::string uuid = doc::get_string(item, "status.identity.uuid");
        const std::string now_uuid = doc::get_string(*maint, "status.identity.uuid");
        if (lower(now_uuid) != lower(uuid)) {
            return fail(make_error(ErrorKind::Partial,
                                   a + ": the node in maintenance mode has UUID " + now_uuid +
                                       ", not the reset machine's " + uuid + "; nothing was registered",
                                   "kubectl ichor inspect " + a + " --insecure", "IdentityChanged"));
        }
        say(a + " is in maintenance mode; its new maintenance certificate fingerprint is " + out.fingerprint);
        return register_machine(*maint);
    }
};

} // namespace

ReclaimOutcome reclaim(const ReclaimOptions& options, ReclaimNode& node, ReclaimRegistry& registry,
                       const ReclaimUi& ui) {
    Flow f{options, node, registry, ui, {}};
    return f.run();
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
    bool member_answers(const std::string& host) override {
        talos::DialOptions opts = talos::mutual_tls(m_d.context, m_d.call_timeout_ms);
        opts.node = host;
        talos::NodeClient c(m_d.address, opts);
        return c.etcd_status().ok();
    }
    Result<std::string> reset(const talos::ResetOptions& options) override {
        talos::NodeClient c(m_d.address, talos::mutual_tls(m_d.context, m_d.call_timeout_ms));
        return c.reset(options);
    }
    Result<Value> probe_maintenance(std::int64_t timeout_ms) override {
        InspectOptions io;
        io.insecure = true;
        io.call_timeout_ms = timeout_ms;
        Value results = Value::array();
        Value item = inspect_node(m_d.address, io, results);
        if (doc::get_string(item, "status.mode") == "maintenance") {
            return item;
        }
        if (auto e = first_error(results)) {
            return *e;
        }
        return make_error(ErrorKind::Unreachable, m_d.address.text + ": no answer", "", "Unreachable");
    }

private:
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
            ManagedCluster mc{doc::get_string(c, "metadata.name"), ""};
            auto b = load_bundle({}, nullptr, &m_k, &c, [](std::string_view) {});
            if (b) {
                mc.cluster_id = b->cluster_id;
            } else if (warn) {
                warn("cannot read the secrets bundle of TalosCluster " + mc.name + " (" + b.error().message +
                     "): whether the node belongs to it is not known");
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
    Status create_event(const Value& event) override {
        auto r = m_k.create(kube::events_path(m_ns), event);
        if (!r) {
            return r.error();
        }
        return ok_status();
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
