// Credentials a capture carries outside its patch's text: captured as digests, referenced by the
// patch, resolved by the render, filled by hold apply from the node's own configuration.
#include "common/drift/drift.h"
#include "common/machineconfig/machineconfig.h"
#include "common/render/render.h"
#include "common/stages/credentials.h"
#include "common/util/strings.h"
#include "test_plan_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {

// The render's golden cluster "prod" and its bundle (test_plan_support.h).
struct World {
    test::PlanFixture fx;
    bundle::Bundle& bundle = fx.bundle;
    render::ClusterSpec cluster = *render::parse_cluster(fx.cluster);
};

constexpr const char* k_node_patch = R"(apiVersion: v1alpha1
kind: RegistryAuthConfig
name: ghcr.io
username: robot
password: s3cret-registry-password
---
apiVersion: v1alpha1
kind: WireguardConfig
name: wg0
privateKey: c2VjcmV0LXdpcmVndWFyZC1rZXktMTIzNDU2Nzg5MA==
listenPort: 51820
)";

// The machine-layer TalosConfigPatch of `machine` holding `text`, as the plan writes it.
Value machine_patch(const std::string& machine, const std::string& text) {
    Value patch = Value::object();
    patch["apiVersion"] = "ichor.maesh.dev/v1alpha1";
    patch["kind"] = "TalosConfigPatch";
    patch["metadata"] = Value{{"name", machine + "-adopted"}, {"namespace", "ichor-system"}};
    patch["spec"] = Value{{"cluster", "prod"},
                          {"layer", "machine"},
                          {"machine", machine},
                          {"order", 0},
                          {"patch", text}};
    return patch;
}

} // namespace

TEST_CASE("a credential is captured as a reference, never as text", "[stages][credentials]") {
    World w;
    render::Input in{&w.cluster, &w.bundle, "worker", "prod-w-1", {"/dev/sda", "img", false},
                     "1.13",     {}};
    auto rendered = render::render(in);
    REQUIRE(rendered.ok());
    std::vector<Value> raw = *rendered;
    REQUIRE(render::apply_patch_text(raw, k_node_patch, "node").ok());
    const std::string raw_text = doc::to_yaml_stream(raw);
    auto live = machineconfig::digest_secrets(raw);

    auto rerender = [&](const std::string& text) -> Result<std::vector<Value>> {
        std::vector<Value> docs = *rendered;
        if (auto st = render::apply_patch_text(docs, text, "capture"); !st) {
            return st.error();
        }
        return docs;
    };
    auto a = drift::analyze(live, *rendered, drift::Context{false, "cilium", {}, 13}, rerender);
    CHECK(a.capture_error.empty());
    int credentials = 0;
    for (const auto& f : a.findings) {
        INFO(f.change.dotted << " " << f.verdict.code);
        CHECK(f.verdict.cls == drift::Class::A);
        credentials += f.verdict.code == "Credential";
    }
    CHECK(credentials == 2);
    REQUIRE(a.capture_secrets.size() == 2);
    CHECK(a.capture.find("s3cret-registry-password") == std::string::npos);
    CHECK(a.capture.find("sha256:") == std::string::npos);
    CHECK(a.capture.find("c2VjcmV0") == std::string::npos);
    CHECK(a.capture.find("listenPort: 51820") != std::string::npos);

    // The patch references a Secret; the plan's Secret has digests, never values.
    Value patch = machine_patch("prod-w-1", a.capture);
    Value secret = stages::attach_credentials(patch, a.capture_secrets, {"10.0.0.21"});
    REQUIRE(stages::is_credentials_secret(secret));
    CHECK(secret["metadata"]["name"] == "prod-w-1-adopted-credentials");
    CHECK_FALSE(secret.contains("data"));
    CHECK(secret.dump().find("s3cret") == std::string::npos);
    REQUIRE(patch["spec"]["secretValues"].size() == 2);

    // Rendered by digest (the plan, the zero-drift check): the node's digested configuration.
    in.patches = {patch};
    auto by_digest = render::render(in);
    REQUIRE(by_digest.ok());
    CHECK(drift::diff(drift::normalize(live), drift::normalize(*by_digest)).empty());

    // hold apply: the values from the node's configuration, checked against the digests.
    auto filled = stages::fill_credentials(secret, {{"10.0.0.21", raw_text}});
    REQUIRE(filled.ok());
    int found = 0;
    for (auto it = (*filled)["data"].begin(); it != (*filled)["data"].end(); ++it) {
        auto v = util::base64_decode(it.value().get<std::string>());
        REQUIRE(v);
        found += *v == "s3cret-registry-password" ||
                 *v == "c2VjcmV0LXdpcmVndWFyZC1rZXktMTIzNDU2Nzg5MA==";
    }
    CHECK(found == 2);
    // a node whose value changed since the plan: refused
    std::string changed = raw_text;
    changed.replace(changed.find("s3cret-registry-password"), 6, "other!");
    auto stale = stages::fill_credentials(secret, {{"10.0.0.21", changed}});
    REQUIRE_FALSE(stale.ok());
    CHECK(stale.error().code == "CredentialChanged");
    // another node's configuration is not searched
    CHECK_FALSE(stages::fill_credentials(secret, {{"10.0.0.99", raw_text}}).ok());

    // The node check: the values from the node, so the node is sent what Ichor renders.
    in.secrets = stages::lookup_in_config(in.patches, raw_text);
    auto real = render::render(in);
    REQUIRE(real.ok());
    CHECK(doc::to_yaml_stream(*real).find("s3cret-registry-password") != std::string::npos);
    CHECK(
        drift::diff(drift::normalize(live), drift::normalize(machineconfig::digest_secrets(*real)))
            .empty());

    // By digest again after the render with the values: render keeps a parsed patch for the next
    // render of the same text, and the values went into that one render alone.
    in.secrets = {};
    auto again = render::render(in);
    REQUIRE(again.ok());
    CHECK(doc::to_yaml_stream(*again).find("s3cret-registry-password") == std::string::npos);
    CHECK(doc::to_yaml_stream(*again) == doc::to_yaml_stream(*by_digest));
}

TEST_CASE("a Secret without the key a patch names is an error of the render",
          "[stages][credentials]") {
    World w;
    Value patch = Value::object();
    patch["metadata"]["name"] = "p";
    patch["spec"] = Value{{"cluster", "prod"},
                          {"layer", "cluster"},
                          {"order", 0},
                          {"patch", "apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: r\n"
                                    "username: u\n"}};
    patch["spec"]["secretValues"] =
        Value::array({Value{{"secretRef", Value{{"name", "p-credentials"}, {"key", "k"}}},
                            {"kind", "RegistryAuthConfig"},
                            {"name", "r"},
                            {"path", Value::array({"password"})},
                            {"digest", util::sha256_digest("x")}}});
    render::Input in{&w.cluster, &w.bundle, "worker", "m", {"/dev/sda", "img", false},
                     "1.13",     {patch}};
    in.secrets = [](const std::string&, const std::string&) -> std::optional<std::string> {
        return std::nullopt;
    };
    auto r = render::render(in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "SecretValueMissing");
    CHECK(r.error().message.find("Secret p-credentials has no key k") != std::string::npos);
    // a path into a document the patch does not have
    patch["spec"]["secretValues"][0]["name"] = "other";
    in.patches = {patch};
    in.secrets = {};
    auto r2 = render::render(in);
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().code == "SecretValueMissing");
}

TEST_CASE("a manifest with a DaemonSet and a Secret is carried whole as a credential",
          "[stages][credentials]") {
    // A CNI or agent manifest with its own certificates: the Inspection keeps its text readable
    // (detection reads it) with the Secret's values digested; the capture carries it as one
    // credential, by the digest of that form, and the node's own text is what is filled.
    World w;
    render::Input in{&w.cluster, &w.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.13",     {}};
    auto rendered = render::render(in);
    REQUIRE(rendered.ok());
    std::vector<Value> raw = *rendered;
    const std::string manifest =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: shipper-tls\ndata:\n  tls.key: "
        "c2hpcHBlci1wcml2YXRlLWtleQ==\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  "
        "name: log-shipper\n";
    Value patch_doc = Value::object();
    patch_doc["cluster"]["inlineManifests"] =
        Value::array({Value{{"name", "log-shipper"}, {"contents", manifest}}});
    REQUIRE(render::apply_patch_text(raw, doc::to_yaml_stream({patch_doc}), "node").ok());
    const std::string raw_text = doc::to_yaml_stream(raw);
    auto live = machineconfig::digest_secrets(raw);
    REQUIRE(doc::to_yaml_stream(live).find("c2hpcHBlci1w") == std::string::npos);
    REQUIRE(doc::to_yaml_stream(live).find("name: log-shipper") != std::string::npos);

    auto rerender = [&](const std::string& text) -> Result<std::vector<Value>> {
        std::vector<Value> docs = *rendered;
        if (auto st = render::apply_patch_text(docs, text, "capture"); !st) {
            return st.error();
        }
        return docs;
    };
    auto a = drift::analyze(live, *rendered, drift::Context{false, "cilium", {}, 13}, rerender);
    CHECK(a.capture_error.empty());
    for (const auto& f : a.findings) {
        INFO(f.change.dotted << " " << f.verdict.code);
        CHECK(f.verdict.cls == drift::Class::A);
    }
    REQUIRE(a.capture_secrets.size() == 1);
    CHECK(a.capture.find("c2hpcHBlci1w") == std::string::npos);
    CHECK(a.capture.find("sha256:") == std::string::npos);
    CHECK(a.capture.find("log-shipper") != std::string::npos);

    Value patch = machine_patch("prod-cp-1", a.capture);
    Value secret = stages::attach_credentials(patch, a.capture_secrets, {"10.0.0.11"});
    CHECK(secret.dump().find("c2hpcHBlci1w") == std::string::npos);
    in.patches = {patch};
    auto by_digest = render::render(in);
    REQUIRE(by_digest.ok());
    CHECK(drift::diff(drift::normalize(live), drift::normalize(*by_digest)).empty());

    auto filled = stages::fill_credentials(secret, {{"10.0.0.11", raw_text}});
    REQUIRE(filled.ok());
    REQUIRE((*filled)["data"].size() == 1);
    auto v = util::base64_decode((*filled)["data"].begin().value().get<std::string>());
    REQUIRE(v);
    CHECK(*v == manifest);
    // the Secret's value changed on the node since the plan: refused
    std::string changed = raw_text;
    changed.replace(changed.find("c2hpcHBlci1w"), 4, "b3Ro");
    CHECK_FALSE(stages::fill_credentials(secret, {{"10.0.0.11", changed}}).ok());

    in.secrets = stages::lookup_in_config(in.patches, raw_text);
    auto real = render::render(in);
    REQUIRE(real.ok());
    CHECK(doc::to_yaml_stream(*real).find("c2hpcHBlci1wcml2YXRlLWtleQ==") != std::string::npos);
    CHECK(
        drift::diff(drift::normalize(live), drift::normalize(machineconfig::digest_secrets(*real)))
            .empty());
}
