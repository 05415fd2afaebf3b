#include "common/machineconfig/machineconfig.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ichor;
using ichor::doc::Value;

namespace {
const std::string k_ca_pem = "-----BEGIN CERTIFICATE-----\nMIIBTEST\n-----END CERTIFICATE-----\n";

std::string legacy_config() {
    return "version: v1alpha1\n"
           "machine:\n"
           "  type: worker\n"
           "  token: abcdef.0123456789abcdef\n"
           "  ca:\n"
           "    crt: " +
           util::base64_encode(k_ca_pem) +
           "\n"
           "    key: \"\"\n"
           "  install:\n"
           "    disk: /dev/sda\n"
           "    image: ghcr.io/siderolabs/installer:v1.13.9\n"
           "    wipe: false\n"
           "  sysctls:\n"
           "    net.core.somaxconn: \"65535\"\n"
           "cluster:\n"
           "  id: Y2x1c3Rlci1pZA\n"
           "  secret: c2VjcmV0LXZhbHVl\n"
           "  clusterName: prod\n"
           "  controlPlane:\n"
           "    endpoint: https://127.0.0.11:6443\n"
           "  token: ghijkl.0123456789abcdef\n"
           "  ca:\n"
           "    crt: Y3J0\n"
           "    key: a2V5LXZhbHVl\n"
           "---\n"
           "apiVersion: v1alpha1\n"
           "kind: HostnameConfig\n"
           "auto: stable\n";
}

std::string v114_config() {
    return "version: v1alpha1\n"
           "machine:\n"
           "  type: controlplane\n"
           "  token: abcdef.0123456789abcdef\n"
           "  ca:\n"
           "    crt: " +
           util::base64_encode(k_ca_pem) +
           "\n"
           "    key: c2VjcmV0\n"
           "cluster:\n"
           "  token: ghijkl.0123456789abcdef\n"
           "---\n"
           "apiVersion: v1alpha1\n"
           "kind: DiscoveryIdentityConfig\n"
           "clusterID: Y2x1c3Rlci1pZA\n"
           "clusterSecret: c2VjcmV0LXZhbHVl\n"
           "---\n"
           "apiVersion: v1alpha1\n"
           "kind: KubeClusterConfig\n"
           "clusterName: prod\n"
           "endpoint: https://127.0.0.11:6443\n"
           "---\n"
           "apiVersion: v1alpha1\n"
           "kind: KubeAPIServerCAConfig\n"
           "issuingCA:\n"
           "  cert: |\n"
           "    -----BEGIN CERTIFICATE-----\n"
           "    MIIB\n"
           "    -----END CERTIFICATE-----\n"
           "  key: |\n"
           "    -----BEGIN EC PRIVATE KEY-----\n"
           "    MHcC\n"
           "    -----END EC PRIVATE KEY-----\n"
           "---\n"
           "apiVersion: v1alpha1\n"
           "kind: UnattendedInstallConfig\n"
           "installer:\n"
           "  image: ghcr.io/siderolabs/installer:v1.14.0\n"
           "provisioning:\n"
           "  diskSelector:\n"
           "    match: disk.dev_path == \"/dev/vda\"\n"
           "  wipe: true\n";
}
} // namespace

TEST_CASE("facts from a v1alpha1 configuration with typed documents", "[machineconfig]") {
    auto c = machineconfig::parse(legacy_config(), "node");
    REQUIRE(c.ok());
    auto f = machineconfig::extract_facts(*c);
    CHECK(f.layout == "multi-document");
    CHECK(f.cluster_id == "Y2x1c3Rlci1pZA");
    CHECK(f.cluster_name == "prod");
    CHECK(f.endpoint == "https://127.0.0.11:6443");
    CHECK(f.role == "worker");
    CHECK(f.talos_ca_pem == k_ca_pem);
    CHECK(f.install.disk == "/dev/sda");
    CHECK(f.install.image == "ghcr.io/siderolabs/installer:v1.13.9");
    CHECK_FALSE(f.install.wipe);
    CHECK(f.version_contract == "1.12+");
}

TEST_CASE("facts: install fields Talos's encoder writes as null count as absent",
          "[machineconfig]") {
    // A hand-written configuration without install.wipe, patched with talosctl patch mc: Talos's
    // encoder writes the unset *bool as null (tests/lab/scenarios/real-handwritten.yaml).
    std::string text = legacy_config();
    text.replace(text.find("    wipe: false\n"), 16, "    wipe: null\n");
    text.replace(text.find("    image: ghcr.io/siderolabs/installer:v1.13.9\n"), 48,
                 "    image: null\n");
    auto c = machineconfig::parse(text, "node");
    REQUIRE(c.ok());
    auto f = machineconfig::extract_facts(*c);
    CHECK(f.install.disk == "/dev/sda");
    CHECK(f.install.image.empty());
    CHECK_FALSE(f.install.wipe);
}

TEST_CASE("facts from the v1.14 documents", "[machineconfig]") {
    auto c = machineconfig::parse(v114_config(), "node");
    REQUIRE(c.ok());
    auto f = machineconfig::extract_facts(*c);
    CHECK(f.layout == "v1.14");
    CHECK(f.version_contract == "1.14");
    CHECK(f.cluster_id == "Y2x1c3Rlci1pZA");
    CHECK(f.cluster_name == "prod");
    CHECK(f.endpoint == "https://127.0.0.11:6443");
    CHECK(f.role == "controlplane");
    CHECK(f.talos_ca_pem == k_ca_pem);
    CHECK(f.install.image == "ghcr.io/siderolabs/installer:v1.14.0");
    CHECK(f.install.wipe);
    CHECK(f.install.disk_selector == "disk.dev_path == \"/dev/vda\"");
}

TEST_CASE("no secret value survives digesting", "[machineconfig]") {
    for (const auto& text : {legacy_config(), v114_config()}) {
        auto c = machineconfig::parse(text, "node");
        REQUIRE(c.ok());
        auto digested = machineconfig::digest_secrets(c->documents);
        std::string out = doc::to_yaml_stream(digested);
        for (const char* secret : {"abcdef.0123456789abcdef", "ghijkl.0123456789abcdef",
                                   "c2VjcmV0LXZhbHVl", "a2V5LXZhbHVl", "PRIVATE KEY", "c2VjcmV0"}) {
            INFO(secret);
            CHECK(out.find(secret) == std::string::npos);
        }
        // Digests are stable and idempotent; non-secrets stay.
        CHECK(out.find(util::sha256_digest("abcdef.0123456789abcdef")) != std::string::npos);
        CHECK(machineconfig::digest_secrets(digested) == digested);
        CHECK(out.find("Y2x1c3Rlci1pZA") != std::string::npos);
        // The in-place form, which the inspection uses, gives the same documents.
        auto moved = c->documents;
        CHECK(machineconfig::digest_secrets(std::move(moved)) == digested);
    }
}

TEST_CASE("an EncryptionConfiguration keeps its form, its keys' secrets digested",
          "[machineconfig]") {
    // as Talos's own redaction (machinery v1.14.1 config/types/k8s/etcd_encryption.go): the
    // owner's form (an identity provider) stays comparable; given as text, it is one secret
    auto d = doc::parse_one(R"({"apiVersion":"v1alpha1","kind":"KubeEtcdEncryptionConfig",
        "config":{"resources":[{"resources":["secrets"],"providers":[
        {"secretbox":{"keys":[{"name":"key2","secret":"c2VjcmV0LW9uZQ=="}]}},
        {"identity":{}}]}]}})",
                            "doc");
    REQUIRE(d.ok());
    Value out = machineconfig::digest_secrets(*d);
    const Value& p = out["config"]["resources"][0]["providers"];
    CHECK(p[0]["secretbox"]["keys"][0]["secret"] == util::sha256_digest("c2VjcmV0LW9uZQ=="));
    CHECK(p[0]["secretbox"]["keys"][0]["name"] == "key2");
    CHECK(p[1] == Value{{"identity", Value::object()}});
    Value text = *d;
    text["config"] = doc::to_yaml(text["config"]);
    Value digested = machineconfig::digest_secrets(text);
    CHECK(digested["config"] == util::sha256_digest(text["config"].get<std::string>()));
}

TEST_CASE("a VIP's cloud API token is a secret, digested", "[machineconfig]") {
    // issue 26's field trial (hcloud-talos/terraform-hcloud-talos): the Hetzner Cloud token of a
    // control plane's VIP (v1alpha1 vip.hcloud.apiToken; vip.equinixMetal.apiToken likewise) was
    // printed by the plan and written into a patch's text
    auto d = doc::parse_one(R"({"machine":{"network":{"interfaces":[{"interface":"eth1",
        "vip":{"ip":"10.0.64.100","hcloud":{"apiToken":"aGNsb3VkLXRva2Vu"}}}]}}})",
                            "doc");
    REQUIRE(d.ok());
    Value out = machineconfig::digest_secrets(*d);
    const Value& vip = out["machine"]["network"]["interfaces"][0]["vip"];
    CHECK(vip["hcloud"]["apiToken"] == util::sha256_digest("aGNsb3VkLXRva2Vu"));
    CHECK(vip["ip"] == "10.0.64.100");
}

TEST_CASE("sha256_digest is SHA-256 in hex, the same on every call", "[machineconfig]") {
    // FIPS 180-2's test vectors: the implementation is fetched once and reused.
    for (int i = 0; i < 2; ++i) {
        CHECK(util::sha256_digest("abc") ==
              "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        CHECK(util::sha256_digest("") ==
              "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}

TEST_CASE("malformed configurations are usage errors", "[machineconfig]") {
    CHECK_FALSE(machineconfig::parse("", "n").ok());
    CHECK_FALSE(machineconfig::parse("- a\n- b\n", "n").ok());
    auto bad = machineconfig::parse("machine: [\n", "n");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().kind == ErrorKind::Usage);
}

TEST_CASE("a CNI's manifest keeps its text with its Secrets' values digested",
          "[machineconfig][secrets]") {
    const std::string cni =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: hubble-server-certs\ntype: "
        "kubernetes.io/tls\ndata:\n  ca.crt: Q0FDRVJU\n  tls.key: S0VZUEVN\n\n  # rotated by helm\n"
        "stringData:\n  token: |\n    line-one\n\n    line-two\nimmutable: true\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: flow}\ndata: {password: cHc=}\n---\n"
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: cilium\nspec:\n  "
        "template:\n    metadata:\n      labels: {k8s-app: cilium}\n    data: not-a-secret\n";
    REQUIRE(machineconfig::partly_secret_manifest(cni));
    CHECK_FALSE(machineconfig::partly_secret_manifest("kind: DaemonSet\n"));
    CHECK_FALSE(machineconfig::partly_secret_manifest("kind: Secret\n"));
    const std::string d = machineconfig::digest_manifest_secrets(cni);
    INFO(d);
    for (const auto* secret : {"Q0FDRVJU", "S0VZUEVN", "line-one", "line-two", "cHc="}) {
        CHECK(d.find(secret) == std::string::npos);
    }
    CHECK(d.find("  tls.key: " + util::sha256_digest("S0VZUEVN") + "\n") != std::string::npos);
    CHECK(d.find("  token: " + util::sha256_digest("|\n    line-one\n\n    line-two\n") + "\n") !=
          std::string::npos);
    CHECK(d.find("data: " + util::sha256_digest("{password: cHc=}") + "\n") != std::string::npos);
    // everything else as it was: the Secret's other fields, comments, the DaemonSet whole
    CHECK(d.find("type: kubernetes.io/tls\ndata:\n") != std::string::npos);
    CHECK(d.find("  # rotated by helm\n") != std::string::npos);
    CHECK(d.find("immutable: true\n---\n") != std::string::npos);
    CHECK(d.ends_with(cni.substr(cni.find("apiVersion: apps/v1"))));
    CHECK(std::count(d.begin(), d.end(), '\n') == std::count(cni.begin(), cni.end(), '\n') - 3);
    CHECK(machineconfig::digest_manifest_secrets(d) == d); // idempotent

    // In an Inspection: the manifest stays readable (the CNI's detection reads it), its Secrets
    // not.
    doc::Value v1 = doc::Value::object();
    v1["cluster"]["inlineManifests"] =
        doc::Value::array({doc::Value{{"name", "cilium"}, {"contents", cni}}});
    auto out = machineconfig::digest_secrets(v1);
    CHECK(out["cluster"]["inlineManifests"][0]["contents"] == d);
    doc::Value m14{{"apiVersion", "v1alpha1"},
                   {"kind", "KubeInlineManifestConfig"},
                   {"name", "cilium"},
                   {"manifest", cni}};
    CHECK(machineconfig::digest_secrets(m14)["manifest"] == d);
}

TEST_CASE("an inline manifest with a Secret and a secret environment entry are digested whole",
          "[machineconfig][secrets]") {
    const std::string secret_manifest =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: oidc\nstringData:\n  client-secret: s\n";
    const std::string cni_manifest =
        "kind: Secret\n---\nkind: DaemonSet\nmetadata: {name: cilium}\n";
    doc::Value v1 = doc::Value::object();
    v1["cluster"]["inlineManifests"] =
        doc::Value::array({doc::Value{{"name", "oidc"}, {"contents", secret_manifest}},
                           doc::Value{{"name", "rbac"}, {"contents", "kind: ClusterRole\n"}},
                           doc::Value{{"name", "cilium"}, {"contents", cni_manifest}}});
    doc::Value ext = doc::Value{
        {"apiVersion", "v1alpha1"},
        {"kind", "ExtensionServiceConfig"},
        {"name", "tailscale"},
        {"environment", doc::Value::array({"TS_AUTHKEY=tskey-x", "TS_ROUTES=10.0.0.0/8"})}};
    auto d = machineconfig::digest_secrets(std::vector<doc::Value>{v1, ext});
    const auto& im = d[0]["cluster"]["inlineManifests"];
    CHECK(im[0]["contents"] == util::sha256_digest(secret_manifest));
    CHECK(im[1]["contents"] == "kind: ClusterRole\n");
    CHECK(im[2]["contents"] == cni_manifest); // read to detect the CNI
    CHECK(d[1]["environment"][0] == util::sha256_digest("TS_AUTHKEY=tskey-x"));
    CHECK(d[1]["environment"][1] == "TS_ROUTES=10.0.0.0/8");
    CHECK(machineconfig::digest_secrets(d) == d); // idempotent

    // A secret key over a structure: each value digested, so each can be carried.
    doc::Value reg = doc::Value::object();
    reg["machine"]["registries"]["config"]["ghcr.io"]["auth"] =
        doc::Value{{"username", "robot"}, {"password", "pw"}};
    auto r = machineconfig::digest_secrets(reg);
    const auto& auth = r["machine"]["registries"]["config"]["ghcr.io"]["auth"];
    CHECK(auth["username"] == util::sha256_digest("robot"));
    CHECK(auth["password"] == util::sha256_digest("pw"));
}
