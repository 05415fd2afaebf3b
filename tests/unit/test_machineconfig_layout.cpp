#include "common/machineconfig/layout.h"
#include "common/machineconfig/machineconfig.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

using namespace ichor;
using doc::Value;
namespace layout = machineconfig::layout;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR);
const std::string k_pem = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----";

// The documents that hold the v1alpha1 fields of a generated configuration (what the former
// layout14 approximation moved): the to_documents cases below move these.
bool is_layout14(const layout::Document& d) {
    static const std::set<std::string_view> k_kinds = {
        "DiscoveryIdentityConfig",  "DiscoveryServiceConfig",
        "KubeClusterConfig",        "KubeAPIServerCAConfig",
        "KubeAggregatorCAConfig",   "KubeServiceAccountConfig",
        "KubeEtcdEncryptionConfig", "KubeNetworkConfig",
        "UnattendedInstallConfig",  "SysctlConfig",
        "KubePrismConfig"};
    return k_kinds.count(d.kind) != 0;
}
bool any(const layout::Document&) {
    return true;
}

// The v1alpha1 document Talos's generator writes for a control plane at contract 1.13 (the
// render oracle's data).
Value generated_cp() {
    auto text = util::read_file(k_dir + "/tests/golden/render/expected/cp-1.13.yaml");
    REQUIRE(text.ok());
    auto docs = doc::parse_documents(*text, "cp-1.13.yaml");
    REQUIRE(docs.ok());
    REQUIRE(docs->front().value("version", "") == "v1alpha1");
    return docs->front();
}

// The same, with the fields only the documents of a node carry: registries, kernel modules,
// inline manifests, an explicit flannel and a kube-proxy with arguments.
Value generated_cp_with_everything() {
    Value v = generated_cp();
    auto extra = doc::parse_one(R"(
machine:
  registries:
    mirrors:
      docker.io: {endpoints: [https://mirror.example, https://other.example], overridePath: true}
      ghcr.io: {endpoints: [https://ghcr.example], skipFallback: true}
    config:
      registry.example: {auth: {username: u, password: p}, tls: {insecureSkipVerify: true}}
  kernel:
    modules: [{name: br_netfilter}, {name: nf_conntrack, parameters: [hashsize=131072]}]
  sysctls: {net.core.somaxconn: "65535"}
cluster:
  network: {cni: {name: flannel}}
  proxy: {disabled: false, extraArgs: {proxy-mode: iptables}}
  inlineManifests: [{name: one, contents: "kind: Namespace"}]
  acceptedCAs: [{crt: )" + util::base64_encode(k_pem + "\n") +
                                    "}]\n",
                                "extra");
    REQUIRE(extra.ok());
    v.merge_patch(*extra);
    return v;
}

// Every leaf of a tree as path -> text; list items by index; a PEM given as base64 as its text.
void leaves(const Value& v, const std::string& path, std::map<std::string, std::string>& out) {
    if (v.is_object() || v.is_array()) {
        size_t i = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++i) {
            std::string key = v.is_object() ? it.key() : std::to_string(i);
            leaves(it.value(), path.empty() ? key : path + "." + key, out);
        }
        return;
    }
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (std::string pem = machineconfig::pem_from_field(text); pem.starts_with("-----BEGIN")) {
        text = std::string(util::trim(pem));
    }
    out[path] = text;
}

std::map<std::string, std::string> leaves(const Value& v) {
    std::map<std::string, std::string> out;
    leaves(v, {}, out);
    return out;
}

std::vector<std::string> kinds(const std::vector<Value>& docs) {
    std::vector<std::string> out;
    for (const auto& d : docs) {
        out.push_back(d.value("kind", ""));
    }
    return out;
}

// The first two keys of every leaf path.
std::set<std::string> sections(const Value& v) {
    std::set<std::string> out;
    for (const auto& [path, text] : leaves(v)) {
        out.insert(path.substr(0, path.find('.', path.find('.') + 1)));
    }
    return out;
}

// v1alpha1 back from what stayed and the documents, as normalization reads a node.
Value back_to_v1alpha1(const Value& stayed, const std::vector<Value>& docs) {
    Value v = stayed;
    for (const auto& d : docs) {
        REQUIRE(layout::to_v1alpha1(v, d));
    }
    return v;
}

// A v1alpha1 value of the codec's shape, for a row's path.
Value sample(const layout::Field& f) {
    switch (f.codec) {
    case layout::Codec::Pem:
    case layout::Codec::PemKey:
        return util::base64_encode(k_pem + "\n");
    case layout::Codec::PemList:
        return Value::array({Value{{"crt", util::base64_encode(k_pem + "\n")}}});
    case layout::Codec::DevPath:
        return "/dev/nvme0n1";
    case layout::Codec::Negated:
        return true;
    case layout::Codec::Mirror:
        return Value{{"endpoints", Value::array({"https://m.example"})}, {"overridePath", true}};
    default:
        return f.field.empty() ? Value{{"sample-key", "sample-value"}} : Value("sample");
    }
}

// Sets a v1alpha1 path of the table ("{name}" as `example`, "[]" as the first item).
void set_path(Value& root, std::string_view dotted, const Value& value) {
    Value* v = &root;
    for (auto key : util::split(dotted, '.')) {
        bool item = key.ends_with("[]");
        key = key == "{name}" ? "example" : key.substr(0, item ? key.size() - 2 : key.size());
        v = &(*v)[key];
        if (item) {
            if (!v->is_array()) {
                *v = Value::array({Value::object()});
            }
            v = &(*v)[0];
        }
    }
    *v = value;
}

const Value* get_path(const Value& root, std::string_view dotted) {
    Value copy = Value::object();
    const Value* v = &root;
    for (auto key : util::split(dotted, '.')) {
        bool item = key.ends_with("[]");
        key = key == "{name}" ? "example" : key.substr(0, item ? key.size() - 2 : key.size());
        if (!v->is_object() || !v->contains(key)) {
            return nullptr;
        }
        v = &(*v)[key];
        if (item) {
            if (!v->is_array() || v->empty()) {
                return nullptr;
            }
            v = &(*v)[0];
        }
    }
    return v;
}

} // namespace

TEST_CASE("the 1.14 layout of a generated control plane", "[machineconfig][layout]") {
    Value v = generated_cp();
    auto docs = layout::to_documents(v, is_layout14);
    // The documents and fields of docs/lab.md, in the lab's order.
    CHECK(kinds(docs) == std::vector<std::string>{
                             "DiscoveryIdentityConfig", "DiscoveryServiceConfig",
                             "KubeClusterConfig", "KubeAPIServerCAConfig", "KubeAggregatorCAConfig",
                             "KubeServiceAccountConfig", "KubeEtcdEncryptionConfig",
                             "KubeNetworkConfig", "UnattendedInstallConfig", "KubePrismConfig"});
    std::set<std::string> fields;
    for (const auto& d : docs) {
        for (const auto& [path, text] : leaves(d)) {
            fields.insert(d.value("kind", "") + ":" + path);
        }
    }
    CHECK(fields ==
          std::set<std::string>{
              "DiscoveryIdentityConfig:apiVersion",
              "DiscoveryIdentityConfig:kind",
              "DiscoveryIdentityConfig:clusterID",
              "DiscoveryIdentityConfig:clusterSecret",
              "DiscoveryServiceConfig:apiVersion",
              "DiscoveryServiceConfig:kind",
              "DiscoveryServiceConfig:name",
              "DiscoveryServiceConfig:endpoint",
              "KubeClusterConfig:apiVersion",
              "KubeClusterConfig:kind",
              "KubeClusterConfig:clusterName",
              "KubeClusterConfig:endpoint",
              "KubeAPIServerCAConfig:apiVersion",
              "KubeAPIServerCAConfig:kind",
              "KubeAPIServerCAConfig:issuingCA.cert",
              "KubeAPIServerCAConfig:issuingCA.key",
              "KubeAggregatorCAConfig:apiVersion",
              "KubeAggregatorCAConfig:kind",
              "KubeAggregatorCAConfig:issuingCA.cert",
              "KubeAggregatorCAConfig:issuingCA.key",
              "KubeServiceAccountConfig:apiVersion",
              "KubeServiceAccountConfig:kind",
              "KubeServiceAccountConfig:issuer.privateKey",
              "KubeEtcdEncryptionConfig:apiVersion",
              "KubeEtcdEncryptionConfig:kind",
              "KubeEtcdEncryptionConfig:config.resources.0.providers.0.secretbox.keys.0.name",
              "KubeEtcdEncryptionConfig:config.resources.0.providers.0.secretbox.keys.0."
              "secret",
              "KubeEtcdEncryptionConfig:config.resources.0.resources.0",
              "KubeNetworkConfig:apiVersion",
              "KubeNetworkConfig:kind",
              "KubeNetworkConfig:dnsDomain",
              "KubeNetworkConfig:podSubnets.0",
              "KubeNetworkConfig:serviceSubnets.0",
              "UnattendedInstallConfig:apiVersion",
              "UnattendedInstallConfig:kind",
              "UnattendedInstallConfig:installer.image",
              "UnattendedInstallConfig:provisioning.diskSelector.match",
              "UnattendedInstallConfig:provisioning.wipe",
              "KubePrismConfig:apiVersion",
              "KubePrismConfig:kind",
              "KubePrismConfig:port",
          });
    CHECK(docs[3]["issuingCA"]["cert"].get<std::string>().starts_with("-----BEGIN CERTIFICATE"));
    CHECK(docs[8]["provisioning"]["diskSelector"]["match"] == "disk.dev_path == \"/dev/sda\"");
    CHECK(docs[9]["port"] == 7445);
    // What stays in v1alpha1: the machine's identity and trust, the tokens, the etcd CA and what
    // no 1.14 document holds.
    CHECK(sections(v) ==
          std::set<std::string>{"version", "debug", "persist", "machine.type", "machine.token",
                                "machine.ca", "machine.kubelet", "machine.features",
                                "machine.nodeLabels", "cluster.network", "cluster.token",
                                "cluster.apiServer", "cluster.controllerManager", "cluster.proxy",
                                "cluster.scheduler", "cluster.etcd"});
    CHECK(v["cluster"]["network"] == Value{{"cni", {{"name", "none"}}}});
    CHECK_FALSE(v["machine"]["features"].contains("kubePrism"));
}

TEST_CASE("v1alpha1 to documents and back gives the same paths", "[machineconfig][layout]") {
    // An older cluster encrypts etcd with aescbc instead.
    Value aescbc = generated_cp_with_everything();
    aescbc["cluster"]["aescbcEncryptionSecret"] = aescbc["cluster"]["secretboxEncryptionSecret"];
    aescbc["cluster"].erase("secretboxEncryptionSecret");
    for (const Value& original : {generated_cp_with_everything(), aescbc}) {
        Value stayed = original;
        auto docs = layout::to_documents(stayed, any);
        // The documents only a node writes, as drift reads them (docs/drift-rules.md).
        auto by_kind = [&](const std::string& kind, const std::string& name = {}) {
            for (const auto& d : docs) {
                if (d.value("kind", "") == kind && (name.empty() || d.value("name", "") == name)) {
                    return d;
                }
            }
            return Value();
        };
        CHECK(by_kind("KubeProxyConfig") == Value{{"apiVersion", "v1alpha1"},
                                                  {"kind", "KubeProxyConfig"},
                                                  {"enabled", true},
                                                  {"image", "registry.k8s.io/kube-proxy:v1.34.4"},
                                                  {"extraArgs", {{"proxy-mode", "iptables"}}}});
        CHECK(by_kind("KubeFlannelCNIConfig").size() == 2);
        CHECK(by_kind("KubeInlineManifestConfig", "one")["manifest"] == "kind: Namespace");
        CHECK(by_kind("KernelModuleConfig", "nf_conntrack")["parameters"] ==
              Value::array({"hashsize=131072"}));
        CHECK(by_kind("RegistryMirrorConfig", "docker.io")["endpoints"][1] ==
              Value{{"url", "https://other.example"}, {"overridePath", true}});
        CHECK(by_kind("RegistryMirrorConfig", "ghcr.io")["skipFallback"] == true);
        CHECK(by_kind("RegistryAuthConfig", "registry.example")["username"] == "u");
        CHECK(by_kind("RegistryTLSConfig", "registry.example")["insecureSkipVerify"] == true);
        // Only what no document holds stays in v1alpha1 (Talos 1.14's KubeletConfig,
        // KubeNodeConfig, KubeAPIServerConfig, ... hold the rest).
        CHECK(sections(stayed) ==
              std::set<std::string>{"version", "debug", "persist", "machine.type", "machine.token",
                                    "machine.ca", "machine.kubelet", "machine.features",
                                    "cluster.token", "cluster.etcd"});
        auto before = leaves(original);
        auto after = leaves(back_to_v1alpha1(stayed, docs));
        std::set<std::string> lost;
        std::set<std::string> gained;
        for (const auto& [path, text] : before) {
            if (!after.contains(path)) {
                lost.insert(path);
            } else {
                INFO(path);
                CHECK(after[path] == text);
            }
        }
        for (const auto& [path, text] : after) {
            if (!before.contains(path)) {
                gained.insert(path + "=" + text);
            }
        }
        // What the 1.14 documents cannot hold, and the discovery service's endpoint written out.
        CHECK(lost == std::set<std::string>{"cluster.discovery.registries.kubernetes.disabled",
                                            "machine.install.grubUseUKICmdline"});
        CHECK(gained ==
              std::set<std::string>{
                  "cluster.discovery.registries.service.endpoint=https://discovery.talos.dev/"});
    }
}

TEST_CASE("every row of the table is reachable both ways", "[machineconfig][layout]") {
    for (const auto& r : layout::rows()) {
        const layout::Document& d = *r.document;
        const layout::Field& f = *r.field;
        INFO(d.kind << " " << f.field << " <-> " << f.v1alpha1);
        Value v1 = Value::object();
        set_path(v1, f.v1alpha1, sample(f));
        if (!d.due.empty() && get_path(v1, d.due) == nullptr) {
            set_path(v1, d.due, Value::object());
        }
        if (!d.implies.path.empty()) {
            set_path(v1, d.implies.path, doc::resolve_plain_scalar(d.implies.value));
        }
        Value stayed = v1;
        auto docs = layout::to_documents(stayed, any);
        if (f.codec == layout::Codec::Cel) {
            // Read only: v1alpha1 has no CEL selector, and an install with a diskSelector stays.
            CHECK(docs.empty());
            CHECK(stayed == v1);
            Value back = Value::object();
            REQUIRE(layout::to_v1alpha1(
                back,
                Value{{"kind", d.kind}, {"provisioning", {{"diskSelector", {{"match", "x"}}}}}}));
            CHECK(doc::get_string(back, f.v1alpha1) == "x");
            continue;
        }
        REQUIRE(kinds(docs) == std::vector<std::string>{std::string(d.kind)});
        const Value& out = docs.front();
        if (f.field.empty()) {
            CHECK(out.size() > 2);
        } else {
            CHECK(doc::find_path(out, f.field) != nullptr);
        }
        CHECK(get_path(stayed, f.v1alpha1) == nullptr);
        Value back = Value::object();
        REQUIRE(layout::to_v1alpha1(back, out));
        REQUIRE(get_path(back, f.v1alpha1) != nullptr);
        CHECK(leaves(*get_path(back, f.v1alpha1)) == leaves(sample(f)));
    }
}

TEST_CASE("a document without fields stands for its fact", "[machineconfig][layout]") {
    for (const auto& d : layout::documents()) {
        if (!d.fields.empty()) {
            continue;
        }
        INFO(d.kind);
        REQUIRE_FALSE(d.implies.path.empty());
        Value v1 = Value::object();
        set_path(v1, d.implies.path, doc::resolve_plain_scalar(d.implies.value));
        auto docs =
            layout::to_documents(v1, [](const layout::Document& x) { return x.fields.empty(); });
        REQUIRE(kinds(docs) == std::vector<std::string>{std::string(d.kind)});
        Value back = Value::object();
        REQUIRE(layout::to_v1alpha1(back, docs.front()));
        CHECK(doc::get_string(back, d.implies.path) == d.implies.value);
    }
}

TEST_CASE("what a document's presence and absence mean", "[machineconfig][layout]") {
    auto v1 = [](const char* yaml) {
        auto v = doc::parse_one(yaml, "v1alpha1");
        REQUIRE(v.ok());
        return *v;
    };
    // A disabled discovery service or KubePrism gives no document, and leaves v1alpha1.
    Value off =
        v1("cluster: {discovery: {enabled: true, registries: {service: {disabled: true}}}}\n"
           "machine: {features: {kubePrism: {enabled: false, port: 7445}}}\n");
    CHECK(layout::to_documents(off, is_layout14).empty());
    CHECK(off == v1("cluster: {}\nmachine: {}\n"));
    // Missing values are the fallbacks on both sides.
    Value on = v1("cluster: {discovery: {enabled: true}}\n"
                  "machine: {features: {kubePrism: {enabled: true}}}\n");
    auto docs = layout::to_documents(on, is_layout14);
    REQUIRE(docs.size() == 2);
    CHECK(docs[0]["endpoint"] == "https://discovery.talos.dev/");
    CHECK(docs[1]["port"] == 7445);
    Value back = Value::object();
    REQUIRE(layout::to_v1alpha1(back, Value{{"kind", "KubePrismConfig"}}));
    CHECK(back == v1("machine: {features: {kubePrism: {enabled: true, port: 7445}}}\n"));
    // An install with a v1alpha1 diskSelector stays whole.
    Value sel = v1("machine: {install: {diskSelector: {size: '> 10GB'}, image: img}}\n");
    CHECK(layout::to_documents(sel, is_layout14).empty());
    CHECK(sel["machine"]["install"].size() == 2);
    // A worker's CA has no key to write.
    Value worker = v1("cluster: {ca: {crt: Y3J0, key: ''}}\n");
    docs = layout::to_documents(worker, is_layout14);
    REQUIRE(docs.size() == 1);
    CHECK(docs[0]["issuingCA"] == Value{{"cert", "crt"}});
    // An unknown kind is not the table's.
    Value untouched = Value::object();
    CHECK_FALSE(layout::to_v1alpha1(untouched, Value{{"kind", "HostnameConfig"}, {"auto", "x"}}));
    CHECK(untouched == Value::object());
}

TEST_CASE("look-ups in both directions", "[machineconfig][layout]") {
    auto row = layout::home("cluster.controlPlane.endpoint");
    REQUIRE(row);
    CHECK(row->document->kind == "KubeClusterConfig");
    CHECK(row->field->field == "endpoint");
    CHECK_FALSE(layout::home("cluster.token"));
    CHECK(layout::v1alpha1_of("KubeNetworkConfig", "podSubnets") == "cluster.network.podSubnets");
    CHECK(layout::v1alpha1_of("KubeNetworkConfig", "nope").empty());

    auto named = layout::named_home({"machine", "registries", "config", "r.example", "tls", "ca"});
    REQUIRE(named);
    CHECK(named->row.document->kind == "RegistryTLSConfig");
    CHECK(named->name == "r.example");
    CHECK(layout::keys_of(*named->row.field, "x.io") ==
          std::vector<std::string>{"machine", "registries", "config", "x.io", "tls"});
    CHECK_FALSE(layout::named_home({"machine", "registries", "config", "r.example"}));
    // row_keys: the same split as keys_of with `{name}` in place, once for the process
    const auto& split = layout::row_keys(*named->row.field);
    CHECK(split == std::vector<std::string>{"machine", "registries", "config", "{name}", "tls"});
    CHECK(&layout::row_keys(*named->row.field) == &split);
    for (const auto& r : layout::rows()) {
        auto keys = layout::row_keys(*r.field);
        std::replace(keys.begin(), keys.end(), std::string("{name}"), std::string("n"));
        CHECK(keys == layout::keys_of(*r.field, "n"));
        CHECK_FALSE(keys.empty());
    }

    std::vector<Value> docs = {
        Value{{"kind", "KubeClusterConfig"}, {"endpoint", {{"url", "https://e:6443"}}}},
        Value{{"kind", "UnattendedInstallConfig"},
              {"provisioning", {{"diskSelector", {{"match", "disk.dev_path == \"/dev/vda\""}}}}}}};
    CHECK(layout::read(docs, "cluster.controlPlane.endpoint") == "https://e:6443");
    CHECK(layout::read(docs, "machine.install.disk") == "/dev/vda");
    CHECK(layout::read(docs, "machine.install.diskSelector.match").is_null());
    REQUIRE(layout::stored(docs, "machine.install.disk") != nullptr);
    CHECK(*layout::stored(docs, "machine.install.disk") == "disk.dev_path == \"/dev/vda\"");
    CHECK(layout::read(docs, "cluster.id").is_null());
}

TEST_CASE("docs/render.md lists every row of the table", "[machineconfig][layout]") {
    auto text = util::read_file(k_dir + "/docs/render.md");
    REQUIRE(text.ok());
    auto lines = util::split(*text, '\n');
    for (const auto& r : layout::rows()) {
        std::string kind = "`" + std::string(r.document->kind) + "`";
        std::string path = "`" + std::string(r.field->v1alpha1) + "`";
        INFO(kind << " " << path);
        CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.starts_with("| " + kind) && l.find(path) != std::string::npos;
        }));
    }
}
