#include "common/cni/helm_record.h"
#include "test_cni_support.h"

using namespace ichor;
using cni_test::Value;

TEST_CASE("a release record reads back its chart and values", "[cni][helm]") {
    Value values = cni_test::yaml("hubble: {relay: {enabled: true}}\noperator: {replicas: 1}\n");
    auto secret = cni_test::release_secret(
        cni_test::release_json("cilium", 3, "deployed", "cilium", "1.19.6", values));
    auto rel = cni::read_release_secret(secret);
    REQUIRE(rel.ok());
    CHECK(rel->secret_name == "sh.helm.release.v1.cilium.v3");
    CHECK(rel->name == "cilium");
    CHECK(rel->namespace_name == "kube-system");
    CHECK(rel->revision == 3);
    CHECK(rel->status == "deployed");
    CHECK(rel->chart_name == "cilium");
    CHECK(rel->chart_version == "1.19.6");
    CHECK(rel->config == values);
    CHECK(rel->has_values());
}

TEST_CASE("a release without values has an empty config", "[cni][helm]") {
    for (const Value& config : {Value(), Value::object()}) {
        auto rel = cni::read_release_secret(cni_test::release_secret(
            cni_test::release_json("cilium", 1, "deployed", "cilium", "1.19.6", config)));
        REQUIRE(rel.ok());
        CHECK(rel->config == Value::object());
        CHECK_FALSE(rel->has_values());
    }
}

TEST_CASE("a record from before Helm gzipped is read", "[cni][helm]") {
    Value r = cni_test::release_json("cilium", 1, "deployed", "cilium", "1.14.0", Value::object());
    auto rel = cni::read_release_secret(cni_test::release_secret(r, util::base64_encode(r.dump())));
    REQUIRE(rel.ok());
    CHECK(rel->chart_version == "1.14.0");
}

TEST_CASE("a record that inflates past the limit is refused", "[cni][helm]") {
    // 32 MiB of spaces inside the JSON compress to about 32 KiB.
    Value r = cni_test::release_json("cilium", 1, "deployed", "cilium", "1.19.6", Value::object());
    std::string json = r.dump();
    json.insert(1, std::string(32u << 20, ' '));
    auto secret = cni_test::release_secret(r, util::base64_encode(cni_test::gzip(json)));
    auto rel = cni::read_release_secret(secret);
    REQUIRE_FALSE(rel.ok());
    CHECK(rel.error().kind == ErrorKind::Config);
    CHECK(rel.error().code == "InputLimit");
    CHECK(rel.error().message == "Secret kube-system/sh.helm.release.v1.cilium.v1: the release "
                                 "inflates past its limit (limit 16777216 bytes)");
    // A smaller limit refuses an ordinary record too: the limit is what decides.
    cni::RecordLimits small;
    small.max_inflated_bytes = 64;
    auto ordinary = cni::read_release_secret(cni_test::release_secret(r), small);
    REQUIRE_FALSE(ordinary.ok());
    CHECK(ordinary.error().code == "InputLimit");
    CHECK(cni::read_release_secret(cni_test::release_secret(r)).ok());
}

TEST_CASE("an encoded field past the Secret size limit is refused before decoding", "[cni][helm]") {
    cni::RecordLimits small;
    small.max_encoded_bytes = 16;
    Value r = cni_test::release_json("cilium", 1, "deployed", "cilium", "1.19.6", Value::object());
    auto rel = cni::read_release_secret(cni_test::release_secret(r), small);
    REQUIRE_FALSE(rel.ok());
    CHECK(rel.error().code == "InputLimit");
}

TEST_CASE("a record that is not a Helm release is refused", "[cni][helm]") {
    auto refuse = [](const Value& secret) {
        auto rel = cni::read_release_secret(secret);
        REQUIRE_FALSE(rel.ok());
        CHECK(rel.error().kind == ErrorKind::Config);
        return rel.error().message;
    };
    Value r = cni_test::release_json("cilium", 1, "deployed", "cilium", "1.19.6", Value::object());
    Value not_release = Value{{"name", "cilium"}, {"hello", "world"}};
    CHECK(refuse(cni_test::release_secret(
              r, util::base64_encode(cni_test::gzip(not_release.dump())))) ==
          "Secret kube-system/sh.helm.release.v1.cilium.v1: not a Helm release (no name, version "
          "or chart.metadata)");
    CHECK(refuse(cni_test::release_secret(r, util::base64_encode("\x1f\x8b\x08garbage"))) ==
          "Secret kube-system/sh.helm.release.v1.cilium.v1: gzip: unknown header flags set");
    std::string gz = cni_test::gzip(r.dump());
    CHECK(refuse(cni_test::release_secret(r, util::base64_encode(gz.substr(0, gz.size() / 2)))) ==
          "Secret kube-system/sh.helm.release.v1.cilium.v1: gzip: truncated stream");
    Value opaque = cni_test::release_secret(r);
    opaque["type"] = "Opaque";
    CHECK(refuse(opaque) == "Secret kube-system/sh.helm.release.v1.cilium.v1: not a Helm release "
                            "record (type is not helm.sh/release.v1)");
    Value bad64 = cni_test::release_secret(r);
    bad64["data"]["release"] = "!!!";
    CHECK(refuse(bad64) == "Secret kube-system/sh.helm.release.v1.cilium.v1: data.release is not "
                           "base64");
    Value scalar_config = r;
    scalar_config["config"] = "x";
    CHECK(refuse(cni_test::release_secret(scalar_config)) ==
          "Secret kube-system/sh.helm.release.v1.cilium.v1: the release's config (its values) is "
          "not a map");
}

TEST_CASE("the current release is the highest deployed revision of the chart", "[cni][helm]") {
    auto rec = [](int rev, const std::string& status, const std::string& chart = "cilium") {
        return cni_test::release_secret(
            cni_test::release_json(chart == "cilium" ? "cilium" : "other", rev, status, chart,
                                   "1.19." + std::to_string(rev), Value{{"rev", rev}}));
    };
    std::vector<Value> secrets{rec(1, "superseded"), rec(2, "deployed"), rec(3, "failed"),
                               rec(9, "deployed", "ingress-nginx"),
                               Value{{"kind", "Secret"}, {"type", "Opaque"}}};
    auto cur = cni::current_release(secrets, "cilium");
    REQUIRE(cur.ok());
    REQUIRE(cur->has_value());
    CHECK((*cur)->revision == 2);
    auto none = cni::current_release({rec(9, "deployed", "ingress-nginx")}, "cilium");
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    auto undeployed = cni::current_release({rec(1, "superseded"), rec(4, "failed")}, "cilium");
    REQUIRE(undeployed.ok());
    CHECK((*undeployed)->revision == 4);
}

TEST_CASE("a record written by Helm's storage code in the lab's apiserver", "[cni][helm]") {
    auto o = cni_test::lab_helm_cluster();
    REQUIRE(o.secrets.size() == 2);
    auto v1 = cni::read_release_secret(o.secrets[0]);
    REQUIRE(v1.ok());
    CHECK(v1->status == "superseded");
    auto cur = cni::current_release(o.secrets, "cilium");
    REQUIRE(cur.ok());
    REQUIRE(cur->has_value());
    CHECK((*cur)->revision == 2);
    CHECK((*cur)->status == "deployed");
    CHECK((*cur)->chart_version == "1.19.6");
    CHECK((*cur)->config == cni_test::yaml("hubble: {relay: {enabled: true}}"));
}

TEST_CASE("a record whose text is not JSON is refused without the YAML reader", "[cni][helm]") {
    auto yaml = cni::decode_release(util::base64_encode("name: cilium\nversion: 1\n"), "record");
    REQUIRE_FALSE(yaml.ok());
    CHECK(yaml.error().message == "record: not a Helm release (not a JSON object)");
    // The input tests/fuzz/fuzz_helm_record timed out on in the YAML reader.
    auto fuzz = cni::decode_release(std::string("\v\v") + std::string(103, 'L'), "record");
    REQUIRE_FALSE(fuzz.ok());
    CHECK(fuzz.error().code == "HelmRecord");
}
