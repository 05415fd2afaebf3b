#include "common/stages/trust.h"
#include "common/util/pem.h"
#include "common/util/strings.h"
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {
const std::string k_ca = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n";

bundle::Bundle make_bundle(const std::string& ca = k_ca) {
    std::string text =
        "cluster:\n  id: prod-id\n  secret: s\ncerts:\n  os:\n    crt: " + util::base64_encode(ca) +
        "\n    key: k\n";
    auto b = bundle::parse(text, "secrets.yaml");
    REQUIRE(b.ok());
    return *b;
}

Value inspection(const std::string& addr, const std::string& mode, const std::string& tls,
                 const std::string& cluster_id, const std::string& ca, const std::string& name) {
    Value v = Value::object();
    v["apiVersion"] = "adopt.ichor.maesh.dev/v1alpha1";
    v["kind"] = "Inspection";
    v["metadata"]["name"] = addr;
    v["spec"]["address"] = addr;
    v["spec"]["talosconfig"]["path"] = "/tc";
    v["status"]["mode"] = mode;
    v["status"]["tls"]["outcome"] = tls;
    if (!cluster_id.empty()) {
        v["status"]["facts"]["clusterID"] = cluster_id;
        v["status"]["facts"]["clusterName"] = name;
        v["status"]["facts"]["talosCA"] = ca;
    }
    return v;
}

std::string code_of(const Value& r) {
    return r["tags"]["ichor.maesh.dev/code"].get<std::string>();
}
} // namespace

TEST_CASE("trust verdicts", "[stages][trust]") {
    auto b = make_bundle();
    doc::ResourceList list;
    list.items.push_back(inspection("10.0.0.1", "configured", "verified", "prod-id", k_ca, "prod"));
    list.items.push_back(
        inspection("10.0.0.2", "configured", "verified", "other-id", "X", "lab-b"));
    list.items.push_back(inspection("10.0.0.3", "configured", "unknownAuthority", "", "", ""));
    list.items.push_back(inspection("10.0.0.4", "maintenance", "insecure", "", "", ""));
    list.items.push_back(inspection("10.0.0.5", "unreachable", "failed", "", "", ""));
    Value other = Value::object();
    other["apiVersion"] = "v1";
    other["kind"] = "ConfigMap";
    list.items.push_back(other);

    stages::Outcome out = stages::check_trust(list, {&b, "prod", "ichor-system"});
    CHECK(out.stopped == 4);
    CHECK_FALSE(out.error);
    CHECK(list.items[0]["status"]["trust"]["verdict"] == "Member");
    CHECK(list.items[1]["status"]["trust"]["verdict"] == "OtherCluster");
    CHECK(list.items[2]["status"]["trust"]["verdict"] == "UnknownAuthority");
    CHECK(list.items[3]["status"]["trust"]["verdict"] == "Maintenance");
    CHECK(list.items[4]["status"]["trust"]["verdict"] == "Unreachable");
    CHECK(list.items[5] == other);
    REQUIRE(list.results.size() == 4);
    CHECK(code_of(list.results[0]) == "OtherCluster");
    std::string m = list.results[0]["message"];
    CHECK(m.find("10.0.0.2: belongs to cluster \"lab-b\", not to \"prod\"") == 0);
    CHECK(m.find("kubectl ichor reclaim 10.0.0.2 --talosconfig /tc --cluster prod") !=
          std::string::npos);
    CHECK(m.find("--add-machine") != std::string::npos);
    std::string u = list.results[1]["message"];
    CHECK(u.find("--talosconfig is the wrong one") != std::string::npos);
    CHECK(u.find("x509") == std::string::npos);
    CHECK(list.results[2]["message"].get<std::string>().find("discovery and approval") !=
          std::string::npos);
}

TEST_CASE("same cluster ID but another CA is not a member", "[stages][trust]") {
    auto b = make_bundle();
    doc::ResourceList list;
    list.items.push_back(
        inspection("10.0.0.9", "configured", "verified", "prod-id",
                   "-----BEGIN CERTIFICATE-----\nWFla\n-----END CERTIFICATE-----\n", "prod"));
    CHECK(stages::check_trust(list, {&b, "prod", "ichor-system"}).stopped == 1);
    CHECK(list.items[0]["status"]["trust"]["talosCA"] == false);
    CHECK(list.items[0]["status"]["trust"]["clusterID"] == true);
}

TEST_CASE("a rotation under way refuses the bundle Secret", "[bundle]") {
    Value secret = Value::object();
    secret["metadata"]["namespace"] = "ichor-system";
    secret["metadata"]["name"] = "prod-secrets";
    secret["data"]["bundle.yaml"] = util::base64_encode("cluster: {id: x}\n");
    secret["data"]["rotation.yaml"] = util::base64_encode("x: y\n");
    auto r = bundle::from_secret(secret, "bundle.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "RotationInProgress");
    CHECK(r.error().kind == ErrorKind::Findings);
}

TEST_CASE("a refusal folds the node's own findings from inspect into one", "[stages][trust]") {
    auto b = make_bundle();
    doc::ResourceList list;
    list.items.push_back(inspection("10.0.0.3", "configured", "unknownAuthority", "", "", ""));
    list.items.push_back(inspection("10.0.0.4", "configured", "verified", "prod-id", k_ca, "prod"));
    auto from_inspect = [](const std::string& node, const std::string& code, doc::Severity sev) {
        Value tags = {{"ichor.maesh.dev/node", node}, {"ichor.maesh.dev/stage", "inspect"}};
        doc::ResourceList one;
        one.add_result(sev, node + ": said by inspect", code, nullptr, tags);
        return one.results[0];
    };
    list.results.push_back(from_inspect("10.0.0.3", "UnknownAuthority", doc::Severity::Error));
    list.results.push_back(from_inspect("10.0.0.4", "PermissionDenied", doc::Severity::Warning));
    list.results.push_back(from_inspect("10.0.0.3", "Timings", doc::Severity::Info));

    stages::Outcome out = stages::check_trust(list, {&b, "prod", "ichor-system"});
    CHECK(out.stopped == 1);
    REQUIRE(list.results.size() == 3);
    // The refusal takes the place of inspect's finding of the same cause...
    CHECK(code_of(list.results[0]) == "UnknownAuthority");
    CHECK(list.results[0]["tags"]["ichor.maesh.dev/stage"] == "trustcheck");
    CHECK(list.results[0]["tags"]["ichor.maesh.dev/folded"] == "inspect: UnknownAuthority");
    CHECK(list.results[0]["message"].get<std::string>().find("hint: ") != std::string::npos);
    // ... and another node's finding, or an unrelated info, stays as it was.
    CHECK(code_of(list.results[1]) == "PermissionDenied");
    CHECK(code_of(list.results[2]) == "Timings");
}

TEST_CASE("through an endpoint the verified handshake is the endpoint's: the configuration judges",
          "[stages][trust]") {
    auto b = make_bundle(ichor::talos::fixtures::k_ca_crt);
    auto bundle_fp = util::certificate_fingerprint(b.os_ca_pem());
    REQUIRE(bundle_fp);
    // No talosCA read (a reader), the talosconfig's CA the bundle's, the handshake verified:
    // direct, the handshake proves the CA; through an endpoint it proves only the endpoint's.
    auto reader = [&](bool via) {
        Value v = inspection("10.0.0.7", "configured", "verified", "prod-id", "", "prod");
        v["status"]["facts"].erase("talosCA");
        v["spec"]["talosconfig"]["caFingerprint"] = *bundle_fp;
        if (via) {
            v["spec"]["endpoint"] = "10.0.0.1";
        }
        return v;
    };
    doc::ResourceList list;
    list.items.push_back(reader(false));
    list.items.push_back(reader(true));
    list.items.push_back(inspection("10.0.0.8", "configured", "verified", "prod-id",
                                    ichor::talos::fixtures::k_ca_crt, "prod"));
    list.items[2]["spec"]["endpoint"] = "10.0.0.1";
    stages::check_trust(list, {&b, "prod", "ichor-system"});
    CHECK(list.items[0]["status"]["trust"]["talosCA"] == true);
    CHECK(list.items[1]["status"]["trust"]["talosCA"] == false);
    CHECK(list.items[1]["status"]["trust"]["verdict"] != "Member");
    // Its own configuration naming the bundle's CA: a member, through the endpoint too.
    CHECK(list.items[2]["status"]["trust"]["verdict"] == "Member");
}
