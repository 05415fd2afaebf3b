// talos-smoke [STATE_DIR]: the Talos client against the lab's talos-sim (real Go gRPC servers on
// Talos's own types). STATE_DIR defaults to $ICHOR_LAB_STATE. Checks, each printed as ok/FAIL:
//   1. Version over Ed25519 mutual TLS on prod-cp-1 with the prod talosconfig: the cluster's tag;
//   2. the same credentials against lab-b-cp-1 (another CA): UnknownAuthority;
//   3. Version on maint-1 insecurely, without a client certificate: its fingerprint equals the one
//      the simulator computed with siderolabs/crypto, a pin on it passes, another pin fails with
//      FingerprintMismatch;
//   4. COSI Get of SystemInformations on prod-w-2: the UUID the scenario gave it, and COSI List
//      of its LinkStatuses: the permanent MACs of its physical links, as "aa:bb:..";
//   5. Disks on maint-1 over the insecure dial;
//   6. a hung Version on prod-w-1 (control API fault): "ADDRESS did not answer within 1s
//   (Version)";
//   7. discovery Members on prod-cp-1: every node configured in prod now (control API), by
//      hostname, with its address, role and Identities node ID.
// Exit 0 when all pass, 1 on any mismatch, 2 when the lab cannot be read.
#include "common/doc/value.h"
#include "common/talos/certs.h"
#include "common/talos/client.h"
#include "common/talos/talosconfig.h"
#include "common/util/files.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

using namespace ichor;
using namespace ichor::talos;

namespace {

constexpr std::int64_t k_timeout_ms = 10000;

struct Lab {
    doc::Value sim;

    const doc::Value& node(const std::string& name) const {
        for (const auto& n : sim["nodes"]) {
            if (n["name"] == name) {
                return n;
            }
        }
        throw std::runtime_error("sim.json has no node " + name);
    }
    std::string talosconfig(const std::string& cluster) const {
        for (const auto& c : sim["clusters"]) {
            if (c["name"] == cluster) {
                return c["talosconfig"].get<std::string>();
            }
        }
        throw std::runtime_error("sim.json has no cluster " + cluster);
    }
    Address address(const std::string& name) const {
        return *parse_address(node(name)["address"].get<std::string>());
    }
};

size_t collect(char* data, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

// One request to the simulator's control API; returns the body.
std::string control(const Lab& lab, const char* method, const std::string& path,
                    const std::string& body = {}) {
    std::string url = lab.sim["control"].get<std::string>() + path;
    std::string out;
    CURL* c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    if (!body.empty()) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        throw std::runtime_error(std::string("control API ") + url + ": " + curl_easy_strerror(rc));
    }
    return out;
}

int g_failures = 0;

void report(bool ok, const std::string& what) {
    std::cout << (ok ? "ok:   " : "FAIL: ") << what << "\n";
    g_failures += ok ? 0 : 1;
}

template <class T> std::string describe(const Result<T>& r) {
    return r ? std::string("success") : r.error().code + ": " + r.error().message;
}

DialOptions prod_credentials(const Lab& lab) {
    auto cfg = load_talosconfig(lab.talosconfig("prod"), Environment{});
    if (!cfg) {
        throw std::runtime_error(cfg.error().message);
    }
    auto ctx = select_context(*cfg, "");
    if (!ctx) {
        throw std::runtime_error(ctx.error().message);
    }
    return mutual_tls(*ctx, k_timeout_ms);
}

void check_mutual_tls(const Lab& lab) {
    NodeClient c(lab.address("prod-cp-1"), prod_credentials(lab));
    auto v = c.version();
    std::string want = lab.node("prod-cp-1")["talosVersion"].get<std::string>();
    report(v && v->version().tag() == want,
           "Version over mTLS on prod-cp-1 = " + (v ? v->version().tag() : describe(v)) +
               " (want " + want + "), server fingerprint " + c.peer_fingerprint().value_or("?"));
}

void check_unknown_authority(const Lab& lab) {
    NodeClient c(lab.address("lab-b-cp-1"), prod_credentials(lab));
    auto v = c.version();
    report(!v && v.error().code == "UnknownAuthority",
           "prod credentials against lab-b-cp-1 fail with UnknownAuthority: " + describe(v));
}

void check_maintenance(const Lab& lab) {
    auto status = doc::parse_one(control(lab, "GET", "/nodes/maint-1"), "control API");
    std::string want = status ? doc::get_string(*status, "maintenanceFingerprint") : "";
    NodeClient open(lab.address("maint-1"), insecure({}, k_timeout_ms));
    auto v = open.version();
    std::string got = open.peer_fingerprint().value_or("");
    std::cout << "maint-1 certificate fingerprint: " << got << "\n";
    report(v.ok(), "insecure Version on maint-1 without a client certificate: " +
                       (v ? v->version().tag() : describe(v)));
    report(!got.empty() && got == want,
           "maint-1 fingerprint " + got + " equals the simulator's (siderolabs/crypto) " + want);

    NodeClient pinned(lab.address("maint-1"), insecure({want}, k_timeout_ms));
    auto p = pinned.version();
    report(p.ok(), "Version pinned to that fingerprint: " + describe(p));

    std::string other = *spki_fingerprint(prod_credentials(lab).ca_pem);
    NodeClient wrong(lab.address("maint-1"), insecure({other}, k_timeout_ms));
    auto w = wrong.version();
    report(!w && w.error().code == "FingerprintMismatch",
           "Version pinned to another fingerprint fails: " + describe(w));
}

void check_cosi_get(const Lab& lab) {
    NodeClient c(lab.address("prod-w-2"), prod_credentials(lab));
    auto r = c.cosi_get(kind::k_system_information);
    std::string want = lab.node("prod-w-2")["uuid"].get<std::string>();
    if (!r) {
        report(false, "COSI Get SystemInformations on prod-w-2: " + describe(r));
        return;
    }
    auto si = decode_spec<spec::SystemInformation>(*r);
    report(si && si->uuid() == want, "COSI Get SystemInformations on prod-w-2: uuid " +
                                         (si ? si->uuid() : describe(si)) + " (want " + want + ")");

    auto links = c.cosi_list(kind::k_link_statuses);
    std::vector<std::string> macs;
    for (const auto& l : links ? *links : std::vector<Resource>{}) {
        auto spec = decode_spec<spec::LinkStatus>(l);
        if (spec && is_physical(*spec)) {
            macs.push_back(format_mac(spec->permanent_addr()));
        }
    }
    auto want_macs = lab.node("prod-w-2")["macs"].get<std::vector<std::string>>();
    report(links && macs == want_macs, "COSI List LinkStatuses on prod-w-2: physical MACs " +
                                           doc::Value(macs).dump() + " (want " +
                                           doc::Value(want_macs).dump() + ")" +
                                           (links ? "" : ": " + describe(links)));
}

void check_maintenance_disks(const Lab& lab) {
    NodeClient c(lab.address("maint-1"), insecure({}, k_timeout_ms));
    auto disks = c.disks();
    std::vector<std::string> names;
    for (const auto& d : disks ? *disks : std::vector<storage::Disk>{}) {
        names.push_back(d.device_name());
    }
    report(disks && !names.empty(), "Disks on maint-1 (insecure): " + doc::Value(names).dump() +
                                        (disks ? "" : ": " + describe(disks)));
}

void check_timeout(const Lab& lab) {
    control(lab, "POST", "/nodes/prod-w-1/faults",
            R"({"method": "/machine.MachineService/Version", "kind": "hang", "count": 1})");
    auto opts = prod_credentials(lab);
    opts.call_timeout_ms = 1000;
    NodeClient c(lab.address("prod-w-1"), opts);
    auto v = c.version();
    control(lab, "DELETE", "/nodes/prod-w-1/faults");
    std::string want = lab.address("prod-w-1").text + " did not answer within 1s (Version)";
    report(!v && v.error().message == want && v.error().code == "Timeout",
           "hung Version on prod-w-1: " + describe(v));
}

void check_discovery_members(const Lab& lab) {
    auto live = doc::parse_one(control(lab, "GET", "/nodes"), "control API");
    if (!live) {
        throw std::runtime_error(live.error().message);
    }
    std::vector<std::string> want;
    for (const auto& n : *live) {
        if (doc::get_string(n, "cluster") == "prod" && doc::get_string(n, "mode") == "configured") {
            want.push_back(doc::get_string(n, "hostname") + " " + doc::get_string(n, "address") +
                           " " + doc::get_string(n, "role") + " " + doc::get_string(n, "nodeId"));
        }
    }
    std::sort(want.begin(), want.end());
    NodeClient c(lab.address("prod-cp-1"), prod_credentials(lab));
    auto members = c.discovery_members();
    std::vector<std::string> got;
    for (const auto& m : members ? *members : std::vector<DiscoveryMember>{}) {
        got.push_back(m.id + " " + (m.addresses.empty() ? "-" : m.addresses[0]) + " " +
                      m.machine_type + " " + m.node_id);
    }
    report(members && !got.empty() && got == want,
           "discovery Members on prod-cp-1: " + doc::Value(got).dump() + " (want " +
               doc::Value(want).dump() + ")" + (members ? "" : ": " + describe(members)));
}

} // namespace

int main(int argc, char** argv) {
    const char* env_state = std::getenv("ICHOR_LAB_STATE");
    std::string state = argc > 1 ? argv[1] : (env_state != nullptr ? env_state : "");
    if (state.empty()) {
        std::cerr << "usage: talos-smoke STATE_DIR (or set ICHOR_LAB_STATE)\n";
        return 2;
    }
    auto text = util::read_file(state + "/sim.json");
    auto sim = text ? doc::parse_one(*text, state + "/sim.json") : Result<doc::Value>(text.error());
    if (!sim) {
        std::cerr << "talos-smoke: " << sim.error().message << "\n";
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Lab lab{*sim};
    try {
        check_mutual_tls(lab);
        check_unknown_authority(lab);
        check_maintenance(lab);
        check_cosi_get(lab);
        check_maintenance_disks(lab);
        check_timeout(lab);
        check_discovery_members(lab);
    } catch (const std::exception& e) {
        std::cerr << "talos-smoke: " << e.what() << "\n";
        return 2;
    }
    std::cout << (g_failures == 0 ? "all checks passed\n" : "some checks failed\n");
    return g_failures == 0 ? 0 : 1;
}
