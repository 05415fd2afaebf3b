// The fields of the Inspection format (common/inspection/fields.h): the same as docs/stream.md
// shows, and put()/find()/put_facts() as the writer relies on them.
#include "common/inspection/fields.h"
#include "common/util/files.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace ichor;
using doc::Value;
namespace f = inspection::field;

namespace {

// The YAML of the first ```yaml block after `marker` in docs/stream.md.
Value docs_block(const std::string& marker) {
    auto text = util::read_file(std::string(ICHOR_SOURCE_DIR) + "/docs/stream.md");
    REQUIRE(text.ok());
    auto at = text->find(marker);
    REQUIRE(at != std::string::npos);
    auto start = text->find("```yaml\n", at);
    REQUIRE(start != std::string::npos);
    start += 8;
    auto end = text->find("```", start);
    auto parsed = doc::parse_one(text->substr(start, end - start), "docs/stream.md");
    REQUIRE(parsed.ok());
    return *parsed;
}

// Every key path of the example: `leaves` the ones whose value is not a mapping (lists stop the
// walk: their records are compared by key), `all` the mappings too.
void walk(const Value& v, const std::string& prefix, std::set<std::string>& leaves,
          std::set<std::string>& all) {
    for (auto it = v.begin(); it != v.end(); ++it) {
        std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        all.insert(path);
        if (it.value().is_object()) {
            walk(it.value(), path, leaves, all);
        } else {
            leaves.insert(path);
        }
    }
}

// The keys of the records of a list of the example ("..." stands for more of them).
std::set<std::string> record_keys(const Value& example, inspection::Path list) {
    std::set<std::string> keys;
    const Value* l = inspection::find(example, list);
    REQUIRE(l != nullptr);
    for (const auto& rec : *l) {
        if (!rec.is_object()) {
            continue; // "..."
        }
        for (auto it = rec.begin(); it != rec.end(); ++it) {
            if (it.key() != "...") {
                keys.insert(it.key());
            }
        }
    }
    return keys;
}

Value docs_example() {
    Value example = docs_block("## Inspection");
    example["status"]["trust"] = docs_block("adds `status.trust`")["trust"];
    return example;
}

} // namespace

TEST_CASE("fields.h names the fields docs/stream.md shows, and only those",
          "[inspection][fields]") {
    const Value example = docs_example();
    std::set<std::string> leaves;
    std::set<std::string> all;
    walk(example, "", leaves, all);
    std::set<std::string> named;
    for (const auto& p : inspection::all_paths()) {
        INFO(p.dotted);
        CHECK(all.count(std::string(p.dotted)) == 1);
        CHECK(named.insert(std::string(p.dotted)).second); // named once
    }
    for (const auto& leaf : leaves) {
        INFO(leaf);
        CHECK(named.count(leaf) == 1);
    }
}

TEST_CASE("the records of the lists have the keys docs/stream.md shows", "[inspection][fields]") {
    const Value example = docs_example();
    using S = std::set<std::string>;
    CHECK(record_keys(example, f::k_etcd_members) ==
          S{f::member::k_id, f::member::k_hostname, f::member::k_peer_urls,
            f::member::k_client_urls, f::member::k_learner});
    CHECK(record_keys(example, f::k_volumes) ==
          S{f::volume::k_id, f::volume::k_phase, f::volume::k_location});
    CHECK(record_keys(example, f::k_disks) ==
          S{f::disk::k_name, f::disk::k_dev_path, f::disk::k_size, f::disk::k_model,
            f::disk::k_serial, f::disk::k_wwid, f::disk::k_modalias, f::disk::k_uuid,
            f::disk::k_bus_path, f::disk::k_transport, f::disk::k_rotational, f::disk::k_cdrom,
            f::disk::k_readonly});
    CHECK(record_keys(example, f::k_links) ==
          S{f::link::k_name, f::link::k_permanent_addr, f::link::k_hardware_addr});
    CHECK(record_keys(example, f::k_timings) ==
          S{f::timing::k_call, f::timing::k_ms, f::timing::k_ok});
    CHECK(inspection::find(example, f::k_kind)->get<std::string>() == f::k_inspection);
}

TEST_CASE("put makes the path in writing order and keeps a key in its place",
          "[inspection][fields]") {
    Value item = Value::object();
    inspection::put(item, f::k_tls_outcome) = "insecure";
    inspection::put(item, f::k_mode) = "maintenance";
    inspection::put(item, f::k_tls_fingerprint) = "FP";
    CHECK(item.dump() ==
          R"({"status":{"tls":{"outcome":"insecure","fingerprint":"FP"},"mode":"maintenance"}})");
    inspection::put(item, f::k_tls_outcome) = "pinned";
    CHECK(item.dump() ==
          R"({"status":{"tls":{"outcome":"pinned","fingerprint":"FP"},"mode":"maintenance"}})");
    REQUIRE(inspection::find(item, f::k_tls_fingerprint) != nullptr);
    CHECK(*inspection::find(item, f::k_tls_fingerprint) == "FP");
    CHECK(inspection::find(item, f::k_uuid) == nullptr);
    CHECK(inspection::find(item, f::k_talos_version) == nullptr);
    CHECK(inspection::find(Value("text"), f::k_mode) == nullptr);
}

TEST_CASE("put_facts lays the facts out in order, the optional ones only when set",
          "[inspection][fields]") {
    machineconfig::Facts facts;
    facts.cluster_id = "CID";
    facts.role = "worker";
    facts.install.disk = "/dev/vda";
    facts.kinds = {"HostnameConfig"};
    Value item = Value::object();
    inspection::put(item, f::k_mode) = "configured";
    inspection::put_facts(item, facts);
    CHECK(item["status"]["facts"].dump() ==
          R"({"clusterID":"CID","clusterName":"","endpoint":"","role":"worker","talosCA":"",)"
          R"("install":{"disk":"/dev/vda","image":"","wipe":false},"layout":"",)"
          R"("documents":["HostnameConfig"],"versionContract":""})");

    facts.accepted_ca_pems = {"PEM2"};
    facts.install.disk_selector = "disk.size > 1";
    inspection::put(item, f::k_trust_verdict) = "Member";
    inspection::put_facts(item, facts); // again: replaces the facts in their place
    CHECK(item["status"].begin().key() == "mode");
    CHECK(std::next(item["status"].begin()).key() == "facts");
    CHECK(item["status"]["facts"]["acceptedCAs"] == Value::array({"PEM2"}));
    CHECK(item["status"]["facts"]["install"].dump() ==
          R"({"disk":"/dev/vda","image":"","wipe":false,"diskSelector":"disk.size > 1"})");
    CHECK(std::next(item["status"]["facts"].begin(), 5).key() == "acceptedCAs");
}
