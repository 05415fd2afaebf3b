// The secrets bundle (common/bundle/bundle.h): secrets.yaml read and written, its secrets listed
// for digests and leak checks, recovered from a control plane's configuration, and read from the
// cluster's Secret. The data is tests/golden/render: a bundle and the configurations Talos's own
// generator rendered from it, so recovering from them must give the same bundle back.
#include "common/bundle/bundle.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/files.h"
#include "common/util/strings.h"
#include "test_kube_support.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <string>
#include <vector>

using namespace ichor;
using doc::Value;
using ichor::kube::testing::TempDir;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";

std::string read(const std::string& path) {
    auto t = util::read_file(path);
    REQUIRE(t.ok());
    return *t;
}

bundle::Bundle golden_bundle() {
    auto b = bundle::parse(read(k_dir + "/secrets.yaml"), "secrets.yaml");
    REQUIRE(b.ok());
    return *b;
}

machineconfig::Config golden_config(const std::string& name) {
    auto c = machineconfig::parse(read(k_dir + "/expected/" + name + ".yaml"), name);
    REQUIRE(c.ok());
    return *c;
}

// secrets.yaml with one line replaced (found by its start).
std::string edited(const std::string& line_start, const std::string& replacement) {
    std::string text = read(k_dir + "/secrets.yaml");
    auto pos = text.find(line_start);
    REQUIRE(pos != std::string::npos);
    auto end = text.find('\n', pos);
    return text.replace(pos, end - pos, replacement);
}

// Every string scalar of a document, depth first.
void strings_in(const Value& v, std::vector<std::string>& out) {
    if (v.is_string()) {
        out.push_back(v.get<std::string>());
    }
    if (v.is_structured()) {
        for (const auto& child : v) {
            strings_in(child, out);
        }
    }
}

bool any_contains(const std::vector<std::string>& strings, const std::string& needle) {
    for (const auto& s : strings) {
        if (s.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

Value secret_with(const Value& data) {
    return Value{{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "prod-secrets"}, {"namespace", "ichor-system"}}},
                 {"data", data}};
}

} // namespace

TEST_CASE("secrets.yaml parses into every field of the bundle", "[bundle]") {
    auto b = golden_bundle();
    CHECK(b.cluster_id == "QNW70VSaEFvzlN69M6y7wgGPU1VNhoxUIsBQWtTUT50=");
    CHECK(b.cluster_secret == "CxvLaAarWLprwnhXjhdkbpUFd+KaOmm2hlcZDlShtto=");
    CHECK(b.bootstrap_token == "l72r3v.rena21fzqb9k2c31");
    CHECK(b.secretbox_encryption_secret == "AugIK6bz/XZwsbyMFqF73M5eI3KsGJgAJnaH9qdMJXI=");
    CHECK(b.aescbc_encryption_secret.empty());
    CHECK(b.trustd_token == "s8a5ni.qjzqcuasztiqgula");
    // The PEM material stays base64 of PEM, as talosctl writes it.
    for (const auto* ck : {&b.etcd, &b.k8s, &b.k8s_aggregator, &b.os}) {
        CHECK(util::base64_decode(ck->crt)->starts_with("-----BEGIN CERTIFICATE-----\n"));
        CHECK(util::base64_decode(ck->key)->find(" PRIVATE KEY-----\n") != std::string::npos);
    }
    CHECK(b.k8s_service_account.crt.empty());
    CHECK(util::base64_decode(b.k8s_service_account.key)
              ->starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
    CHECK(b.os_ca_pem() == *util::base64_decode(b.os.crt));
    CHECK(util::base64_decode(b.os.key)->starts_with("-----BEGIN ED25519 PRIVATE KEY-----\n"));
}

TEST_CASE("a bundle without its cluster ID or Talos API CA is refused, naming the field",
          "[bundle]") {
    auto no_id = bundle::parse(edited("    id: ", "    other: x"), "prod.yaml");
    REQUIRE_FALSE(no_id.ok());
    CHECK(no_id.error().kind == ErrorKind::Config);
    CHECK(no_id.error().message == "prod.yaml: the secrets bundle has no cluster.id");
    CHECK(no_id.error().hint ==
          "give the bundle written by talosctl gen secrets or kubectl ichor adopt");
    CHECK(no_id.error().code == "BadBundle");

    std::string text = read(k_dir + "/secrets.yaml");
    auto no_os = bundle::parse(text.substr(0, text.find("    os:")), "prod.yaml");
    REQUIRE_FALSE(no_os.ok());
    CHECK(no_os.error().message == "prod.yaml: the secrets bundle has no certs.os.crt");

    std::string not_pem = edited("        crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJQekN",
                                 "        crt: " + util::base64_encode("not a certificate"));
    auto bad_os = bundle::parse(not_pem, "prod.yaml");
    REQUIRE_FALSE(bad_os.ok());
    CHECK(bad_os.error().kind == ErrorKind::Config);
    CHECK(bad_os.error().message == "prod.yaml: certs.os.crt is not base64 of a PEM certificate");
    CHECK(bad_os.error().code == "BadBundle");
}

TEST_CASE("a bundle that is not a map, or not YAML, is a config error", "[bundle]") {
    auto scalar = bundle::parse("just text\n", "prod.yaml");
    REQUIRE_FALSE(scalar.ok());
    CHECK(scalar.error().kind == ErrorKind::Config);
    CHECK(scalar.error().message == "prod.yaml: not a secrets bundle");
    CHECK(scalar.error().code == "BadBundle");

    auto broken = bundle::parse("cluster: [unclosed\n", "prod.yaml");
    REQUIRE_FALSE(broken.ok());
    CHECK(broken.error().kind == ErrorKind::Config); // the document model says Usage
    CHECK(broken.error().message ==
          "prod.yaml:2:1: malformed YAML: end of sequence flow not found");
}

TEST_CASE("to_yaml writes talosctl's layout and reads back the same bundle", "[bundle]") {
    auto b = golden_bundle();
    // The bundle has no aescbc secret, so the document is secrets.yaml's, key for key in its
    // order (the emitter indents by two where talosctl indents by four).
    auto file = doc::parse_one(read(k_dir + "/secrets.yaml"), "secrets.yaml");
    REQUIRE(file.ok());
    CHECK(bundle::to_yaml(b) == doc::to_yaml(*file));
    CHECK(bundle::to_yaml(b).starts_with(
        "cluster:\n  id: QNW70VSaEFvzlN69M6y7wgGPU1VNhoxUIsBQWtTUT50=\n"
        "  secret: "));

    b.aescbc_encryption_secret = "aescbc";
    b.secretbox_encryption_secret.clear();
    auto again = bundle::parse(bundle::to_yaml(b), "again");
    REQUIRE(again.ok());
    CHECK(again->aescbc_encryption_secret == "aescbc");
    CHECK(again->secretbox_encryption_secret.empty());
    CHECK(bundle::to_yaml(*again) == bundle::to_yaml(b));
}

TEST_CASE("a recovered bundle is written 0600 and never over an existing file", "[bundle]") {
    // What trustcheck --recover-secrets does with the bundle (common/stages/sources.cpp).
    TempDir t;
    std::string path = t.path() + "/secrets.yaml";
    auto b = golden_bundle();
    REQUIRE(util::write_private_file(path, bundle::to_yaml(b)).ok());
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto back = bundle::parse(read(path), path);
    REQUIRE(back.ok());
    CHECK(bundle::to_yaml(*back) == bundle::to_yaml(b));

    auto twice = util::write_private_file(path, bundle::to_yaml(b));
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.error().message == path + " already exists; it is never overwritten");
}

TEST_CASE("secret_values lists every secret of the bundle and nothing public", "[bundle]") {
    auto b = golden_bundle();
    b.aescbc_encryption_secret = "aescbc-secret";
    std::vector<std::string> expected = {b.cluster_secret,
                                         b.bootstrap_token,
                                         b.secretbox_encryption_secret,
                                         b.aescbc_encryption_secret,
                                         b.trustd_token,
                                         b.etcd.key,
                                         b.k8s.key,
                                         b.k8s_aggregator.key,
                                         b.k8s_service_account.key,
                                         b.os.key};
    CHECK(b.secret_values() == expected);
    for (const auto& v : b.secret_values()) {
        CHECK(v != b.cluster_id);
        CHECK(v != b.os.crt);
    }
    // An absent secret is not listed as an empty string.
    CHECK(golden_bundle().secret_values().size() == 9);
}

TEST_CASE("a control plane's configuration holds every secret of the bundle only as its digest",
          "[bundle]") {
    auto b = golden_bundle();
    for (const char* name : {"cp-1.13", "cp-1.14"}) {
        INFO(name);
        auto cfg = golden_config(name);
        std::vector<std::string> raw;
        std::vector<std::string> digested;
        for (const auto& d : cfg.documents) {
            strings_in(d, raw);
            strings_in(machineconfig::digest_secrets(d), digested);
        }
        for (const auto& secret : b.secret_values()) {
            // The 1.14 documents carry the Kubernetes CA keys as PEM, not as the bundle's base64
            // of it (trimmed here: the PEM is found whatever its final newline).
            std::string pem = std::string(util::trim(util::base64_decode(secret).value_or("")));
            bool is_pem = pem.starts_with("-----BEGIN ");
            bool in_raw = any_contains(raw, secret) || (is_pem && any_contains(raw, pem));
            CHECK(in_raw);
            CHECK_FALSE(any_contains(digested, secret));
            CHECK_FALSE((is_pem && any_contains(digested, pem)));
        }
        for (const auto* s : {&b.cluster_secret, &b.bootstrap_token, &b.trustd_token}) {
            CHECK(any_contains(digested, util::sha256_digest(*s)));
        }
    }
    auto cfg = golden_config("cp-1.13");
    std::vector<std::string> digested;
    for (const auto& d : cfg.documents) {
        strings_in(machineconfig::digest_secrets(d), digested);
    }
    for (const auto* key :
         {&b.etcd.key, &b.k8s.key, &b.k8s_aggregator.key, &b.k8s_service_account.key, &b.os.key,
          &b.secretbox_encryption_secret}) {
        CHECK(any_contains(digested, util::sha256_digest(*key)));
    }
}

TEST_CASE("the bundle is recovered from a control plane's configuration", "[bundle]") {
    auto b = golden_bundle();
    for (const char* name : {"cp-1.13", "cp-old-contract"}) {
        INFO(name);
        auto recovered = bundle::recover_from_config(golden_config(name), name);
        REQUIRE(recovered.ok());
        CHECK(bundle::to_yaml(*recovered) == bundle::to_yaml(b));
    }
}

TEST_CASE("the bundle is recovered from a control plane of Talos's own contract 1.14", "[bundle]") {
    // expected/cp-1.14: machinery v1.14.1's generator, the Kubernetes CAs in
    // KubeAPIServerCAConfig, KubeAggregatorCAConfig and KubeServiceAccountConfig as PEM with its
    // final newline, the secretbox secret under the key name "key2".
    auto r = bundle::recover_from_config(golden_config("cp-1.14"), "cp-1.14");
    REQUIRE(r.ok());
    CHECK(bundle::to_yaml(*r) == bundle::to_yaml(golden_bundle()));
    CHECK(r->k8s_service_account.crt.empty());
}

TEST_CASE("a worker's configuration cannot give the bundle back", "[bundle]") {
    auto r = bundle::recover_from_config(golden_config("w-1.13"), "10.5.0.3");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::Config);
    CHECK(r.error().message == "10.5.0.3 is a worker whose configuration has no CA keys; "
                               "recovering the secrets needs a control plane");
    CHECK(r.error().hint ==
          "kubectl ichor trustcheck --recover-secrets --recover-from CONTROL-PLANE-ADDRESS ...");
    CHECK(r.error().code == "NotControlPlane");

    machineconfig::Config typed_only{
        {Value{{"apiVersion", "v1alpha1"}, {"kind", "HostnameConfig"}}}};
    auto none = bundle::recover_from_config(typed_only, "10.5.0.3");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message == "10.5.0.3: the configuration has no v1alpha1 document");
    CHECK(none.error().code == "BadConfig");
}

TEST_CASE("the bundle is read from the cluster's Secret", "[bundle]") {
    std::string text = read(k_dir + "/secrets.yaml");
    auto b = bundle::from_secret(secret_with({{"bundle", util::base64_encode(text)}}), "bundle");
    REQUIRE(b.ok());
    CHECK(bundle::to_yaml(*b) == bundle::to_yaml(golden_bundle()));
    CHECK(b->cluster_id == "QNW70VSaEFvzlN69M6y7wgGPU1VNhoxUIsBQWtTUT50=");
}

TEST_CASE("a Secret without the bundle, or with a rotation under way, is refused", "[bundle]") {
    std::string text = read(k_dir + "/secrets.yaml");

    auto rotating = bundle::from_secret(
        secret_with({{"bundle", util::base64_encode(text)}, {"rotation.yaml", "eA=="}}), "bundle");
    REQUIRE_FALSE(rotating.ok());
    CHECK(rotating.error().kind == ErrorKind::Findings);
    CHECK(rotating.error().message ==
          "Secret ichor-system/prod-secrets holds rotation.yaml: a CA rotation is under way, and "
          "the nodes trust other CAs until it ends; nothing was written");
    CHECK(rotating.error().hint == "finish the rotation first, then run this again");
    CHECK(rotating.error().code == "RotationInProgress");

    auto missing = bundle::from_secret(secret_with({{"other", "eA=="}}), "bundle");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().kind == ErrorKind::Config);
    CHECK(missing.error().message == "Secret ichor-system/prod-secrets has no key \"bundle\"");
    CHECK(missing.error().hint ==
          "kubectl get secret -n ichor-system prod-secrets -o jsonpath='{.data}'");
    CHECK(missing.error().code == "BadBundle");

    auto not_b64 = bundle::from_secret(secret_with({{"bundle", "%%%"}}), "bundle");
    REQUIRE_FALSE(not_b64.ok());
    CHECK(not_b64.error().message == "Secret ichor-system/prod-secrets: bundle is not base64");

    auto not_bundle =
        bundle::from_secret(secret_with({{"bundle", util::base64_encode("a: b\n")}}), "bundle");
    REQUIRE_FALSE(not_bundle.ok());
    CHECK(not_bundle.error().message ==
          "Secret ichor-system/prod-secrets: the secrets bundle has no cluster.id");
}
