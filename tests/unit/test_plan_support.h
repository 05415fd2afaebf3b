// The plan fixture shared by the tests of the stages that plan (test_stages_plan.cpp) and of the
// hold's zero-drift check (test_stages_hold.cpp): the TalosCluster "prod" and its secrets bundle
// of the render's golden data (tests/golden/render), and Inspections as trustcheck leaves them,
// each carrying one of the golden configurations.
#pragma once

#include "common/bundle/bundle.h"
#include "common/inspection/fields.h"
#include "common/machineconfig/machineconfig.h"
#include "common/stages/plan.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace ichor::test {

inline const std::string k_render_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";

inline std::string read_fixture(const std::string& path) {
    auto t = util::read_file(path);
    REQUIRE(t.ok());
    return *t;
}

struct PlanFixture {
    doc::Value cluster;
    bundle::Bundle bundle;

    PlanFixture() {
        auto c = doc::parse_one(read_fixture(k_render_dir + "/cases.yaml"), "cases.yaml");
        REQUIRE(c.ok());
        cluster = (*c)["clusters"]["prod"];
        auto b = bundle::parse(read_fixture(k_render_dir + "/secrets.yaml"), "secrets.yaml");
        REQUIRE(b.ok());
        bundle = *b;
    }

    // The bytes of the golden configuration `config`, as a node would return them.
    static std::string raw_config(const std::string& config) {
        return read_fixture(k_render_dir + "/expected/" + config + ".yaml");
    }

    // An Inspection as trustcheck leaves it, for the golden configuration `config`.
    doc::Value inspection(const std::string& address, const std::string& hostname,
                          const std::string& config, const std::string& talos = "v1.13.9") {
        const std::string text = raw_config(config);
        auto docs = doc::parse_documents(text, config);
        REQUIRE(docs.ok());
        machineconfig::Config cfg{*docs};
        auto facts = machineconfig::extract_facts(cfg);
        doc::Value v = doc::Value::object();
        v["apiVersion"] = std::string(doc::k_adopt_api);
        v["kind"] = "Inspection";
        v["metadata"]["name"] = address;
        v["spec"]["address"] = address;
        v["spec"]["port"] = 50000;
        v["status"]["mode"] = "configured";
        v["status"]["talosVersion"] = talos;
        v["status"]["identity"] = doc::Value{{"uuid", "UUID-" + hostname},
                                             {"serial", "S"},
                                             {"macs", doc::Value::array({"02:00:00:00:00:01"})},
                                             {"hostname", hostname}};
        inspection::put_facts(v, facts);
        v["status"]["config"] = machineconfig::digest_secrets(*docs);
        v["status"]["configDigest"] = util::sha256_digest(text);
        v["status"]["trust"] = doc::Value{
            {"verdict", "Member"}, {"cluster", "prod"}, {"clusterID", true}, {"talosCA", true}};
        return v;
    }

    stages::Outcome run(doc::ResourceList& list, std::vector<doc::Value> machines = {},
                        std::vector<doc::Value> patches = {}, bool add_machine = false) {
        return stages::plan(list, {"prod", "ichor-system", add_machine, &cluster, &bundle,
                                   std::move(patches), std::move(machines)});
    }
};

} // namespace ichor::test
