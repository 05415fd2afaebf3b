#include "common/drift/drift.h"
#include "common/drift/normalize.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {
std::vector<Value> docs(const std::string& yaml) {
    auto d = doc::parse_documents(yaml, "config");
    REQUIRE(d.ok());
    return *d;
}
// Facts compare whatever their key order.
nlohmann::json unordered(const Value& v) {
    return nlohmann::json::parse(v.dump());
}
const std::string k_pem = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----";
} // namespace

TEST_CASE("a v1.14 document and its v1alpha1 field are the same fact", "[drift][normalize]") {
    auto legacy = drift::normalize(docs(
        "version: v1alpha1\nmachine:\n  sysctls: {a: \"1\"}\n"
        "  features:\n    kubePrism: {enabled: true, port: 7445}\n"
        "  install: {disk: /dev/sda, image: img, wipe: false}\n"
        "cluster:\n  id: ID\n  clusterName: prod\n"
        "  controlPlane: {endpoint: https://e:6443}\n"
        "  ca: {crt: " +
        util::base64_encode(k_pem + "\n") +
        "}\n"
        "  network: {cni: {name: none}, podSubnets: [10.244.0.0/16]}\n"
        "  discovery: {enabled: true, registries: {kubernetes: {disabled: true}, service: {}}}\n"
        "  inlineManifests: [{name: x, contents: y}]\n"
        "---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n"));
    auto v114 = drift::normalize(docs(
        "version: v1alpha1\nmachine: {}\ncluster:\n  network: {cni: {name: none}}\n"
        "---\napiVersion: v1alpha1\nkind: SysctlConfig\nparams: {a: \"1\"}\n"
        "---\napiVersion: v1alpha1\nkind: KubePrismConfig\nport: 7445\n"
        "---\napiVersion: v1alpha1\nkind: UnattendedInstallConfig\n"
        "installer: {image: img}\nprovisioning: {diskSelector: {match: 'disk.dev_path == "
        "\"/dev/sda\"'}, wipe: false}\n"
        "---\napiVersion: v1alpha1\nkind: DiscoveryIdentityConfig\nclusterID: ID\n"
        "---\napiVersion: v1alpha1\nkind: KubeClusterConfig\nclusterName: prod\nendpoint: "
        "https://e:6443\n"
        "---\napiVersion: v1alpha1\nkind: KubeAPIServerCAConfig\nissuingCA:\n  cert: |-\n    " +
        util::join(util::split(k_pem, '\n'), "\n    ") +
        "\n"
        "---\napiVersion: v1alpha1\nkind: KubeNetworkConfig\npodSubnets: [10.244.0.0/16]\n"
        "---\napiVersion: v1alpha1\nkind: DiscoveryServiceConfig\nname: default\nendpoint: "
        "https://discovery.talos.dev/\n"
        "---\napiVersion: v1alpha1\nkind: KubeInlineManifestConfig\nname: x\nmanifest: y\n"
        "---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n"));
    CHECK(unordered(legacy) == unordered(v114));
    // A CA without its key (a worker's) is one of the accepted CAs, as Talos 1.14 writes it.
    CHECK(legacy["cluster"]["acceptedCAs"][0]["crt"] == k_pem);
    CHECK_FALSE(legacy["cluster"].contains("ca"));
    CHECK(doc::get_string(legacy, "cluster.discovery.registries.service.endpoint") ==
          "https://discovery.talos.dev/");
    CHECK(doc::find_path(legacy, "documents.HostnameConfig.auto") != nullptr);
}

TEST_CASE("registry mirrors: documents and v1alpha1 fields normalize alike", "[drift][normalize]") {
    auto legacy =
        drift::normalize(docs("version: v1alpha1\nmachine:\n  registries:\n    mirrors:\n"
                              "      docker.io: {endpoints: [https://m], overridePath: true}\n"));
    auto typed = drift::normalize(
        docs("version: v1alpha1\nmachine: {type: worker}\n---\napiVersion: v1alpha1\n"
             "kind: RegistryMirrorConfig\nname: docker.io\n"
             "endpoints: [{url: https://m, overridePath: true}]\n"));
    CHECK(legacy["machine"]["registries"] == typed["machine"]["registries"]);
}

TEST_CASE("empty values, empty secrets and a missing CNI", "[drift][normalize]") {
    auto f = drift::normalize(docs("version: v1alpha1\nmachine:\n  network: {}\n  certSANs: []\n"
                                   "  ca: {crt: x, key: \"\"}\ncluster:\n  proxy: {}\n"));
    CHECK(f.dump() ==
          R"({"machine":{"ca":{"crt":"x"}},"cluster":{"network":{"cni":{"name":"flannel"}}}})");
}

TEST_CASE("a document without fields of its own stays a fact", "[drift][normalize]") {
    // DHCPv4Config naming only its link, an unnamed document with nothing but its kind: each is
    // a setting (DHCP on that link), not an empty value to drop.
    auto f = drift::normalize(
        docs("version: v1alpha1\nmachine: {}\n---\napiVersion: v1alpha1\nkind: DHCPv4Config\n"
             "name: bond0\n---\napiVersion: v1alpha1\nkind: DHCPv6Config\nname: eth1\n"
             "clientIdentifier: mac\n"));
    CHECK(unordered(f) ==
          nlohmann::json::parse(R"({"documents":{"DHCPv4Config":{"bond0":{}},)"
                                R"("DHCPv6Config":{"eth1":{"clientIdentifier":"mac"}}}})"));
}

TEST_CASE("the Kubernetes discovery registry is a fact only where it is on", "[drift][normalize]") {
    // on unless disabled (machinery v1alpha1_discoveryconfig.go); Talos's generator and the render
    // write it disabled, so a node that runs it sees the adoption turn it off (class B)
    auto with = [](const std::string& registries) {
        return drift::normalize(
            docs("version: v1alpha1\ncluster:\n  discovery: {enabled: true" + registries + "}\n"));
    };
    const char* path = "cluster.discovery.registries.kubernetes.disabled";
    CHECK(doc::find_path(with(", registries: {kubernetes: {disabled: true}, service: {}}"), path) ==
          nullptr);
    for (const char* on :
         {"", ", registries: {service: {}}", ", registries: {kubernetes: {}, service: {}}",
          ", registries: {kubernetes: {disabled: false}}"}) {
        INFO(on);
        const Value f = with(on);
        const Value* v = doc::find_path(f, path);
        REQUIRE(v != nullptr);
        CHECK(*v == false);
    }
    // discovery off: no registry is in use
    auto off =
        drift::normalize(docs("version: v1alpha1\ncluster:\n  discovery: {enabled: false}\n"));
    CHECK(doc::find_path(off, path) == nullptr);
}

TEST_CASE("discovery off carries the service's endpoint too", "[drift][normalize]") {
    // issue 26's field trial (cozystack: discovery off, no endpoint written): turning discovery on
    // changes `enabled` alone, as the node's own dry run says; the endpoint is Talos's default on
    // both sides, not a second change
    auto off =
        drift::normalize(docs("version: v1alpha1\ncluster:\n  discovery: {enabled: false}\n"));
    auto on = drift::normalize(docs("version: v1alpha1\ncluster:\n  discovery: {enabled: true, "
                                    "registries: {kubernetes: {disabled: true}}}\n"));
    const char* path = "cluster.discovery.registries.service.endpoint";
    REQUIRE(doc::find_path(off, path) != nullptr);
    CHECK(*doc::find_path(off, path) == *doc::find_path(on, path));
    auto diff = drift::diff(off, on);
    REQUIRE(diff.size() == 1);
    CHECK(diff[0].dotted == "cluster.discovery.enabled");
}

TEST_CASE("a service registry's disabled: false written out is a fact", "[drift][normalize]") {
    // the node's configuration says it, so the render that does not is a change its node check
    // would see: a fact (class B, Discovery), not dropped
    auto f = drift::normalize(docs("version: v1alpha1\ncluster:\n  discovery: {enabled: true, "
                                   "registries: {kubernetes: {disabled: true}, service: "
                                   "{disabled: false}}}\n"));
    const Value* d = doc::find_path(f, "cluster.discovery.registries.service.disabled");
    REQUIRE(d != nullptr);
    CHECK(*d == false);
    auto unset = drift::normalize(docs("version: v1alpha1\ncluster:\n  discovery: {enabled: true, "
                                       "registries: {kubernetes: {disabled: true}}}\n"));
    CHECK(doc::find_path(unset, "cluster.discovery.registries.service.disabled") == nullptr);
}
