#include "common/render/patch.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {

std::vector<Value> config(const std::string& yaml) {
    auto d = doc::parse_documents(yaml, "config");
    REQUIRE(d.ok());
    return *d;
}

Status patch_with(std::vector<Value>& docs, const std::string& patch) {
    return render::apply_patch_text(docs, patch, "TalosConfigPatch p");
}

const std::string k_base = R"(version: v1alpha1
machine:
  type: worker
  certSANs: [a.example]
  sysctls: {net.core.somaxconn: "1024", vm.swappiness: "60"}
  kernel:
    modules: [{name: br_netfilter}, {name: nvme_tcp}]
  install: {disk: /dev/sda, image: img, wipe: false}
cluster:
  network:
    podSubnets: [10.244.0.0/16]
  apiServer:
    extraArgs: {a: "1", b: "2"}
    admissionControl:
      - name: PodSecurity
        configuration: {x: 1}
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints: [{url: https://m1}]
---
apiVersion: v1alpha1
kind: HostnameConfig
auto: stable
)";

} // namespace

TEST_CASE("strategic merge: maps merge, lists append, replace lists replace", "[render][patch]") {
    auto docs = config(k_base);
    REQUIRE(patch_with(docs, R"(machine:
  certSANs: [b.example]
  sysctls: {net.core.somaxconn: "65535", kernel.pid_max: "10"}
  install: {image: "", wipe: true}
cluster:
  network:
    podSubnets: [10.100.0.0/16]
  apiServer:
    extraArgs: {b: "3"}
    admissionControl:
      - name: PodSecurity
        configuration: {y: 2}
      - name: Other
)")
                .ok());
    const Value& m = docs[0]["machine"];
    CHECK(m["certSANs"] == Value::array({"a.example", "b.example"}));
    CHECK(m["sysctls"]["net.core.somaxconn"] == "65535");
    CHECK(m["sysctls"]["vm.swappiness"] == "60");
    CHECK(m["sysctls"]["kernel.pid_max"] == "10");
    CHECK(m["install"]["image"] == "img"); // a zero value does not replace
    CHECK(m["install"]["wipe"] == true);   // a boolean always does
    const Value& c = docs[0]["cluster"];
    CHECK(c["network"]["podSubnets"] == Value::array({"10.100.0.0/16"}));
    CHECK(c["apiServer"]["extraArgs"] == Value{{"a", "1"}, {"b", "3"}});
    REQUIRE(c["apiServer"]["admissionControl"].size() == 2);
    CHECK(c["apiServer"]["admissionControl"][0]["configuration"] == Value{{"x", 1}, {"y", 2}});
}

TEST_CASE("strategic merge: typed documents merge by identity or are appended", "[render][patch]") {
    auto docs = config(k_base);
    REQUIRE(patch_with(docs, R"(apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints: [{url: https://m2}]
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: ghcr.io
endpoints: [{url: https://g}]
)")
                .ok());
    REQUIRE(docs.size() == 4);
    CHECK(docs[1]["endpoints"].size() == 2);
    CHECK(render::document_id(docs[3]) == "v1alpha1/RegistryMirrorConfig/ghcr.io");
}

TEST_CASE("$patch: delete removes keys, list items and documents, delete then set",
          "[render][patch]") {
    auto docs = config(k_base);
    REQUIRE(patch_with(docs, R"(machine:
  sysctls:
    vm.swappiness:
      $patch: delete
  kernel:
    modules:
      - name: nvme_tcp
        $patch: delete
  certSANs:
    $patch: delete
---
apiVersion: v1alpha1
kind: HostnameConfig
$patch: delete
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
$patch: delete
---
machine:
  certSANs: [only.example]
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints: [{url: https://only}]
)")
                .ok());
    const Value& m = docs[0]["machine"];
    CHECK_FALSE(m["sysctls"].contains("vm.swappiness"));
    CHECK(m["kernel"]["modules"] == Value::array({Value{{"name", "br_netfilter"}}}));
    CHECK(m["certSANs"] == Value::array({"only.example"}));
    REQUIRE(docs.size() == 2);
    CHECK(docs[1]["endpoints"] == Value::array({Value{{"url", "https://only"}}}));
}

TEST_CASE("a patch of the wrong type names the path", "[render][patch]") {
    auto docs = config(k_base);
    auto st = patch_with(docs, "machine:\n  sysctls: [a]\n");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == "PatchDoesNotApply");
    CHECK(st.error().kind == ErrorKind::Findings);
    CHECK(st.error().message == "machine.sysctls: a list where the configuration has a mapping");

    auto fresh = config("version: v1alpha1\nmachine:\n  type: worker\n");
    auto st2 = patch_with(fresh, "machine:\n  certSANs: {a: b}\n");
    REQUIRE_FALSE(st2.ok());
    CHECK(st2.error().message == "machine.certSANs: a mapping where the configuration has a list");

    auto st3 = patch_with(docs, "machine: [sysctls");
    REQUIRE_FALSE(st3.ok());
    CHECK(st3.error().message.starts_with("TalosConfigPatch p:"));

    auto st4 = patch_with(
        docs, "machine:\n  kernel:\n    modules:\n      - name: nope\n        $patch: delete\n");
    REQUIRE_FALSE(st4.ok());
    CHECK(st4.error().message.find("machine.kernel.modules") != std::string::npos);
}

TEST_CASE("JSON 6902 applies to a one-document configuration only", "[render][patch]") {
    auto docs = config(k_base);
    const std::string ops = "- op: add\n  path: /machine/sysctls/x\n  value: \"1\"\n";
    auto st = patch_with(docs, ops);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message ==
          "JSON6902 patches are not supported for multi-document machine configuration");

    auto one = config("version: v1alpha1\nmachine:\n  sysctls: {}\n");
    REQUIRE(patch_with(one, ops).ok());
    CHECK(one[0]["machine"]["sysctls"]["x"] == "1");
    auto bad = patch_with(one, "- op: remove\n  path: /machine/nothing\n");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "PatchDoesNotApply");
}

TEST_CASE("one patch may name a document more than once, the documents apply in order",
          "[render][patch]") {
    auto docs = config(k_base);
    const size_t before = docs.size();
    REQUIRE(patch_with(docs, R"(apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints:
  $patch: delete
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints: [{url: https://m2}]
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
skipFallback: true
)")
                .ok());
    REQUIRE(docs.size() == before);
    CHECK(docs[1]["endpoints"] == Value::array({Value{{"url", "https://m2"}}}));
    CHECK(docs[1]["skipFallback"] == true);
}

TEST_CASE("lists with a Merge method in Talos's types merge by their key", "[render][patch]") {
    auto docs = config(R"(apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: foo
configFiles: [{content: hello, mountPath: /etc/foo}]
---
apiVersion: v1alpha1
kind: ImageVerificationConfig
rules: [{image: "registry.k8s.io/*", deny: true, skip: false}]
)");
    REQUIRE(patch_with(docs, R"(apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: foo
configFiles: [{content: bye, mountPath: /etc/foo}, {content: x, mountPath: /etc/bar}]
---
apiVersion: v1alpha1
kind: ImageVerificationConfig
rules: [{image: "registry.k8s.io/*", skip: true}]
)")
                .ok());
    CHECK(docs[0]["configFiles"] ==
          Value::array({Value{{"content", "bye"}, {"mountPath", "/etc/foo"}},
                        Value{{"content", "x"}, {"mountPath", "/etc/bar"}}}));
    // ImageVerificationRules.Merge puts the patch's rule in place of the one with its pattern.
    CHECK(docs[1]["rules"] ==
          Value::array({Value{{"image", "registry.k8s.io/*"}, {"skip", true}}}));
}

TEST_CASE("an inline manifest loses its leading newlines, a delete of a missing document is "
          "skipped",
          "[render][patch]") {
    auto docs = config(k_base);
    const size_t before = docs.size();
    REQUIRE(patch_with(docs, "cluster:\n  inlineManifests:\n    - name: m\n      contents: |\n\n"
                             "        a: b\n---\napiVersion: v1alpha1\nkind: KubeFlannelCNIConfig\n"
                             "$patch: delete\n")
                .ok());
    CHECK(docs[0]["cluster"]["inlineManifests"][0]["contents"] == "a: b\n");
    CHECK(docs.size() == before);
}
