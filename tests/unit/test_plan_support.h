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

// A CA certificate of another cluster (public; base64 of PEM, as v1alpha1 holds it): the class C
// example, a CA no patch can carry, in cluster.acceptedCAs.
inline const std::string k_other_ca =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJxekNDQVZHZ0F3SUJBZ0lVUXBWRHUxdnQxNHJBRlV2N1JXbzJQZT"
    "NKRTk4d0NnWUlLb1pJemowRUF3SXcKS2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsY2kxamJIVnpkR1Z5TVE0d0RBWURWUVFE"
    "REFWMFlXeHZjekFnRncweQpOakV5TURJd05UUTVNVEZhR0E4eU1USTJNVEV3T0RBMU5Ea3hNVm93S2pFWU1CWUdBMVVFQ2"
    "d3UFlXNXZkR2hsCmNpMWpiSFZ6ZEdWeU1RNHdEQVlEVlFRRERBVjBZV3h2Y3pCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000"
    "OUF3RUgKQTBJQUJPRXRxNERvalZtM1J0OHFEdmlkNW9SOFdXK1ZIUUwxK1JzZzI4VVpJekhnc2Q3a3d2ZzVTbE5VWnJqSg"
    "p1V2RZb2RiYSt0SHB4TmU3QW1vdmZiSm4rNmVqVXpCUk1CMEdBMVVkRGdRV0JCVExaZXVManp2RDdydFFSV2Y2CnVhNjZs"
    "YVREdkRBZkJnTlZIU01FR0RBV2dCVExaZXVManp2RDdydFFSV2Y2dWE2NmxhVER2REFQQmdOVkhSTUIKQWY4RUJUQURBUU"
    "gvTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFEN2FRWStTS0RCbkhUZmptZFpYclFBN2ovRApoSDNpbjJwMVlVSmd3cFlP"
    "NUFJZ1pRUDFnSU1sRnVhbXk3cXBOSnpUWkh4U0hoMkcxNFI4NGJEQ0hRa3Q4d0k9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS"
    "0tLS0K";

inline std::string read_fixture(const std::string& path) {
    auto t = util::read_file(path);
    REQUIRE(t.ok());
    return *t;
}

// A Kubernetes Node of `host`, Ready, its kubelet v1.34.4.
inline doc::Value ready_node(const std::string& host) {
    doc::Value n = doc::Value::object();
    n["apiVersion"] = "v1";
    n["kind"] = "Node";
    n["metadata"]["name"] = host;
    n["status"]["conditions"] =
        doc::Value::array({doc::Value{{"type", "Ready"}, {"status", "True"}}});
    n["status"]["nodeInfo"]["kubeletVersion"] = "v1.34.4";
    return n;
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
