// Drift of a node against a render: no false drift across layouts and contracts, the classes,
// the capture and its verification. Live configurations are Talos's generator output from
// tests/golden/render/expected/, digested as an Inspection carries them.
#include "common/drift/drift.h"
#include "common/machineconfig/machineconfig.h"
#include "common/render/render.h"
#include "common/util/files.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

using namespace ichor;
using doc::Value;

namespace {

const std::string k_dir = std::string(ICHOR_SOURCE_DIR) + "/tests/golden/render";

std::string read(const std::string& path) {
    auto t = util::read_file(path);
    REQUIRE(t.ok());
    return *t;
}

struct Fixture {
    Value cases;
    bundle::Bundle bundle;
    std::map<std::string, Value> patches;

    Fixture() {
        auto c = doc::parse_one(read(k_dir + "/cases.yaml"), "cases.yaml");
        REQUIRE(c.ok());
        cases = *c;
        auto b = bundle::parse(read(k_dir + "/secrets.yaml"), "secrets.yaml");
        REQUIRE(b.ok());
        bundle = *b;
        for (const auto& p : cases["patches"]) {
            patches[p["metadata"]["name"].get<std::string>()] = p;
        }
    }

    // The configuration of a golden case as the node holds it, secrets in the clear.
    std::vector<Value> plain(const std::string& name) {
        auto d = doc::parse_documents(read(k_dir + "/expected/" + name + ".yaml"), name);
        REQUIRE(d.ok());
        return *d;
    }

    // The live configuration of a golden case, as inspect reports it.
    std::vector<Value> live(const std::string& name) {
        return machineconfig::digest_secrets(plain(name));
    }

    render::ClusterSpec cluster(const std::string& key) {
        auto c = render::parse_cluster(cases["clusters"][key]);
        REQUIRE(c.ok());
        return *c;
    }
};

drift::Rerender rerender_of(const render::Input& in) {
    return [in](const std::string& patch) {
        render::Input again = in;
        Value p = Value::object();
        p["metadata"]["name"] = "capture";
        p["spec"] = Value{{"cluster", in.cluster->name},
                          {"layer", "machine"},
                          {"machine", in.machine},
                          {"order", 1000},
                          {"patch", patch}};
        again.patches.push_back(p);
        return render::render(again);
    };
}

drift::Analysis analyze(const std::vector<Value>& live, const render::Input& in,
                        const drift::Context& ctx = {}) {
    auto r = render::render(in);
    REQUIRE(r.ok());
    return drift::analyze(live, *r, ctx, rerender_of(in));
}

std::map<std::string, std::string> classes(const drift::Analysis& a) {
    std::map<std::string, std::string> out;
    for (const auto& f : a.findings) {
        out[f.change.dotted] = std::string(drift::class_name(f.verdict.cls)) + ":" + f.verdict.code;
    }
    return out;
}

} // namespace

TEST_CASE("a node of another layout with the same facts has no drift", "[drift]") {
    Fixture fx;
    auto prod = fx.cluster("prod");
    for (auto [live, role, contract] :
         {std::tuple{"cp-1.12", "controlplane", "1.13"},
          std::tuple{"cp-1.13", "controlplane", "1.12"}, std::tuple{"w-1.12", "worker", "1.13"}}) {
        INFO(live << " against " << contract);
        render::Input in{&prod,    &fx.bundle, role, "m", {"/dev/sda", "other-image", false},
                         contract, {}};
        auto a = analyze(fx.live(live), in);
        CHECK(classes(a).empty());
        CHECK(a.capture.empty());
    }
}

TEST_CASE("a node Talos configured at contract 1.14 against the render at 1.14 has no drift",
          "[drift]") {
    // expected/<case> at 1.14 is Talos's own generator and configpatcher (machinery v1.14.1), so
    // the live node is what Talos itself writes, patches included; the render must give nothing
    // to list, capture or block, whatever the node's install fields.
    Fixture fx;
    struct Case {
        const char* live;
        const char* cluster;
        const char* role;
        std::vector<const char*> patches;
    };
    const std::vector<const char*> layered = {"w1-late",        "cluster-subnets", "role-cp",
                                              "role-worker",    "other-cluster",   "w1-early",
                                              "cluster-sysctls"};
    for (const auto& c : std::vector<Case>{
             {"cp-1.14", "prod", "controlplane", {}},
             {"w-1.14", "prod", "worker", {}},
             {"w-1.14-mirrors", "mirrors", "worker", {}},
             {"cp-1.14-unmanaged", "unmanaged", "controlplane", {}},
             {"cp-1.14-nocni", "nocni", "controlplane", {}},
             {"w-1.14-patched", "prod", "worker", layered},
             {"cp-1.14-patched", "prod", "controlplane", layered},
             {"w-1.14-mirror-patches",
              "mirrors",
              "worker",
              {"mirror-doc", "mirrors-delete-then-set"}},
         }) {
        INFO(c.live);
        auto cluster = fx.cluster(c.cluster);
        const char* machine = std::string(c.role) == "worker" ? "prod-w-1" : "prod-cp-1";
        render::Input in{&cluster, &fx.bundle, c.role, machine, {"/dev/sda", "other-image", false},
                         "1.14",   {}};
        for (const char* n : c.patches) {
            in.patches.push_back(fx.patches[n]);
        }
        drift::Context ctx{!cluster.registry_mirrors.is_null(), cluster.cni_preset};
        auto a = analyze(fx.live(c.live), in, ctx);
        CHECK(classes(a).empty());
        CHECK(a.capture.empty());
    }
}

TEST_CASE("at contract 1.14 a capture goes into the document Talos holds the fact in", "[drift]") {
    // Talos 1.14 refuses v1alpha1's cluster.network or cluster.apiServer beside KubeNetworkConfig
    // or KubeAPIServerConfig (their V1Alpha1ConflictValidate), so the capture patches those
    // documents; a fact no rendered document holds (a sysctl) stays in v1alpha1.
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("cp-1.14");
    REQUIRE(render::apply_patch_text(live, R"(apiVersion: v1alpha1
kind: KubeNetworkConfig
podSubnets: [10.100.0.0/16]
---
apiVersion: v1alpha1
kind: KubeAPIServerConfig
certExtraSANs: [api.example.com]
---
machine:
  sysctls: {net.core.somaxconn: "65535"}
)",
                                     "node")
                .ok());
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.14", {}};
    auto a = analyze(live, in);
    CHECK(classes(a) ==
          std::map<std::string, std::string>{{"cluster.network.podSubnets", "A:PodSubnets"},
                                             {"cluster.apiServer.certSANs", "A:APIServerCertSANs"},
                                             {"machine.sysctls.net.core.somaxconn", "A:Sysctl"}});
    CHECK(a.capture_error.empty());
    auto capture = doc::parse_documents(a.capture, "capture");
    REQUIRE(capture.ok());
    std::set<std::string> kinds;
    for (const auto& d : *capture) {
        if (d.contains("kind")) {
            kinds.insert(d["kind"].get<std::string>());
        } else {
            CHECK_FALSE(doc::find_path(d, "cluster.network"));
            CHECK_FALSE(doc::find_path(d, "cluster.apiServer"));
        }
    }
    CHECK(kinds == std::set<std::string>{"KubeAPIServerConfig", "KubeNetworkConfig"});
    // Rendered again with the capture: the v1alpha1 document holds neither section.
    auto again = rerender_of(in)(a.capture);
    REQUIRE(again.ok());
    CHECK_FALSE(doc::find_path((*again)[0], "cluster.network"));
    CHECK_FALSE(doc::find_path((*again)[0], "cluster.apiServer"));
    const Value* sysctls = doc::find_path((*again)[0], "machine.sysctls");
    REQUIRE(sysctls != nullptr);
    CHECK(sysctls->contains("net.core.somaxconn"));
}

TEST_CASE("a node of Talos's own contract 1.14 differs only by contract defaults", "[drift]") {
    // Against a render at 1.12 or 1.13, the documents Talos 1.14 writes either hold a v1alpha1
    // field (the layout table) or are a default of the contract, which is captured (class A,
    // ContractDefault): nothing blocks, and the capture keeps the node as it is.
    Fixture fx;
    auto prod = fx.cluster("prod");
    for (auto [live, role, contract] :
         {std::tuple{"cp-1.14", "controlplane", "1.13"}, std::tuple{"w-1.14", "worker", "1.13"},
          std::tuple{"cp-1.14", "controlplane", "1.12"}, std::tuple{"w-1.14", "worker", "1.12"}}) {
        INFO(live << " (Talos 1.14) against " << contract);
        render::Input in{&prod,    &fx.bundle, role, "m", {"/dev/sda", "other-image", false},
                         contract, {}};
        auto a = analyze(fx.live(live), in, drift::Context{false, "cilium", {}, 14});
        CHECK_FALSE(classes(a).empty());
        for (const auto& [path, cls] : classes(a)) {
            INFO(path << " " << cls);
            // Talos 1.14 writes KubeProxyConfig on control planes only; a worker rendered with
            // kube-proxy off (preset cilium) lists that for consent, as any worker without it.
            bool worker_proxy = std::string(role) == "worker" && path == "cluster.proxy.disabled" &&
                                cls == "B:KubeProxy";
            CHECK((cls == "A:ContractDefault" || cls == "A:Captured" || cls.starts_with("-:") ||
                   worker_proxy));
        }
        CHECK_FALSE(a.capture.empty());
        CHECK(a.capture_error.empty());
    }
}

TEST_CASE("a 1.13-contract node running Talos 1.14 is never given a 1.14 default", "[drift]") {
    // The render at 1.14 writes SecurityProfileConfig, FilesystemTrimConfig and the other
    // documents of Talos's own contract 1.14; a node generated at 1.13 has none of them, so the
    // capture deletes each whole, and rendering again gives the node back.
    Fixture fx;
    auto prod = fx.cluster("prod");
    render::Input in{&prod,  &fx.bundle, "controlplane", "m", {"/dev/sda", "other-image", false},
                     "1.14", {}};
    auto a = analyze(fx.live("cp-1.13"), in, drift::Context{false, "cilium", {}, 14});
    CHECK(a.capture_error.empty());
    for (const auto& [path, cls] : classes(a)) {
        INFO(path << " " << cls);
        CHECK_FALSE(cls.starts_with("C:"));
    }
    CHECK(a.capture.find("kind: SecurityProfileConfig\n$patch: delete") != std::string::npos);
}

TEST_CASE("documents of the 1.12 network layout are captured whole, by name", "[drift]") {
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("cp-1.13");
    for (const char* text : {R"(apiVersion: v1alpha1
kind: BondConfig
name: bond0
links: [eth0, eth1]
bondMode: 802.3ad
lacpRate: fast
)",
                             R"(apiVersion: v1alpha1
kind: VLANConfig
name: bond0.20
vlanID: 20
parent: bond0
addresses: [{address: 10.20.0.11/24}]
)",
                             R"(apiVersion: v1alpha1
kind: Layer2VIPConfig
name: 10.20.0.10
link: bond0.20
)",
                             R"(apiVersion: v1alpha1
kind: LinkAliasConfig
name: uplink
selector:
  match: mac(link.permanent_addr) == "02:00:00:00:00:01"
)"}) {
        auto d = doc::parse_one(text, "doc");
        REQUIRE(d.ok());
        live.push_back(*d);
    }
    live[0]["cluster"]["etcd"]["extraArgs"] = Value{{"listen-metrics-urls", "http://0.0.0.0:2381"}};
    render::Input in{&prod, &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "",    {}};
    auto a = analyze(live, in, drift::Context{false, "cilium", {}, 13});
    auto c = classes(a);
    CHECK(c["documents.BondConfig.bond0.bondMode"] == "A:Captured");
    CHECK(c["documents.BondConfig.bond0.links"] == "A:Captured");
    CHECK(c["documents.VLANConfig.bond0.20.parent"] == "A:Captured");
    CHECK(c["documents.Layer2VIPConfig.10.20.0.10.link"] == "A:Captured");
    CHECK(c["cluster.etcd.extraArgs.listen-metrics-urls"] == "A:Captured");
    CHECK(a.capture_error.empty());
    for (const auto& [path, cls] : c) {
        INFO(path);
        CHECK(cls.starts_with("A:"));
    }
    CHECK(a.capture.find("kind: BondConfig\nname: bond0\n") != std::string::npos);
    CHECK(a.capture.find("name: bond0.20") != std::string::npos);
    CHECK(a.capture.find("selector:") != std::string::npos);

    // The same documents on a Talos that does not load one of them: that one blocks.
    live.push_back(*doc::parse_one("apiVersion: v1alpha1\nkind: VethConfig\nname: veth0\n"
                                   "peer: {name: veth1}\n",
                                   "doc"));
    auto old = classes(analyze(live, in, drift::Context{false, "cilium", {}, 13}));
    CHECK(old["documents.VethConfig.veth0.peer.name"] == "C:UnknownDocument");
    CHECK(classes(analyze(
              live, in,
              drift::Context{false, "cilium", {}, 14}))["documents.VethConfig.veth0.peer.name"] ==
          "A:Captured");
}

TEST_CASE("a node made without Ichor's settings shows class B, captured class A", "[drift]") {
    Fixture fx;
    auto prod = fx.cluster("prod");
    // The node: the generator's worker with flannel and kube-proxy (unmanaged), plus sysctls, SANs,
    // kernel modules, subnets and a mirror that the cluster does not set.
    auto u = fx.cluster("unmanaged");
    u.cluster_name = "prod";
    u.endpoint = prod.endpoint;
    render::Input node{&u, &fx.bundle, "worker", "x", {"/dev/sda", "img", false}, "1.13", {}};
    auto node_docs = render::render(node);
    REQUIRE(node_docs.ok());
    REQUIRE(render::apply_patch_text(*node_docs, R"(machine:
  sysctls: {net.core.somaxconn: "65535"}
  certSANs: [talos.example.com]
  kernel:
    modules: [{name: br_netfilter}]
  install:
    extraKernelArgs: [console=ttyS0]
cluster:
  network:
    podSubnets: [10.100.0.0/16]
---
apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: docker.io
endpoints: [{url: "https://mirror.local"}]
)",
                                     "node")
                .ok());
    render::Input in{&prod, &fx.bundle, "worker", "prod-w-2", {"/dev/sda", "img", false}, "", {}};
    auto a = analyze(machineconfig::digest_secrets(*node_docs), in);
    auto c = classes(a);
    CHECK(c["cluster.network.cni.name"] == "B:CNI");
    CHECK(c["cluster.proxy.disabled"] == "B:KubeProxy");
    CHECK(c["machine.sysctls.net.core.somaxconn"] == "A:Sysctl");
    CHECK(c["machine.certSANs"] == "A:TalosAPICertSANs");
    CHECK(c["machine.kernel.modules"] == "A:KernelModules");
    CHECK(c["machine.install.extraKernelArgs"] == "A:InstallExtraKernelArgs");
    CHECK(c["cluster.network.podSubnets"] == "A:PodSubnets");
    CHECK(c["machine.registries.mirrors.docker.io.endpoints"] == "A:RegistryMirror");
    CHECK(c.size() == 8);
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find("$patch") != std::string::npos);
    CHECK(a.capture.find("kind: RegistryMirrorConfig") != std::string::npos);

    // The same mirror under a cluster that sets spec.registries: Ichor's, with consent.
    auto m = fx.cluster("mirrors");
    m.cluster_name = "prod";
    m.endpoint = prod.endpoint;
    render::Input in2{&m, &fx.bundle, "worker", "prod-w-2", {"/dev/sda", "img", false}, "", {}};
    auto a2 = analyze(machineconfig::digest_secrets(*node_docs), in2, {true, "cilium"});
    auto c2 = classes(a2);
    CHECK(c2["machine.registries.mirrors.docker.io.endpoints"] == "B:Registries");
    CHECK(c2["machine.registries.mirrors.ghcr.io.endpoints"] == "B:Registries");
    for (const auto& f : a2.findings) {
        if (f.verdict.code == "Registries") {
            CHECK(f.verdict.hint.find("add the cluster's mirrors to the node's configuration") !=
                  std::string::npos);
            CHECK(f.verdict.hint.find(
                      "set spec.registries of TalosCluster {cluster} to the node's") !=
                  std::string::npos);
        }
    }
}

TEST_CASE("settings outside every rule are captured; secrets and CAs block the machine",
          "[drift]") {
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("cp-1.13");
    live[0]["machine"]["kubelet"]["extraArgs"] = Value{{"max-pods", "250"}};
    live[0]["cluster"]["secret"] = "sha256:" + std::string(64, '0');
    live[0]["cluster"]["inlineManifests"] =
        Value::array({Value{{"name", "rbac"}, {"contents", "x"}}});
    live[0]["cluster"]["etcd"]["ca"]["crt"] = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==";
    live.push_back(*doc::parse_one("apiVersion: v1alpha1\nkind: FancyConfig\nx: 1\n", "doc"));
    render::Input in{&prod, &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "",    {}};
    auto a = analyze(live, in);
    auto c = classes(a);
    CHECK(c["machine.kubelet.extraArgs.max-pods"] == "A:Captured");
    CHECK(c["cluster.secret"] == "C:SecretDiffers");
    CHECK(c["cluster.inlineManifests"] == "A:InlineManifests");
    CHECK(c["cluster.etcd.ca.crt"] == "C:CADiffers");
    CHECK(c["documents.FancyConfig.x"] == "C:UnknownDocument");
    CHECK(c.size() == 5);
    for (const auto& f : a.findings) {
        if (f.change.dotted == "cluster.secret") {
            CHECK(f.change.proposed == util::sha256_digest(fx.bundle.cluster_secret));
        }
        if (f.change.dotted == "cluster.inlineManifests") {
            CHECK(f.verdict.hint.find("upgrade-k8s") != std::string::npos);
        }
    }
}

TEST_CASE("a capture that does not round-trip is class C", "[drift]") {
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("w-1.13");
    live[0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    render::Input in{&prod, &fx.bundle, "worker", "prod-w-1", {"/dev/sda", "img", false}, "", {}};
    auto r = render::render(in);
    REQUIRE(r.ok());
    auto ignore_patch = [&](const std::string&) { return render::render(in); };
    auto a = drift::analyze(live, *r, {}, ignore_patch);
    REQUIRE(a.findings.size() == 1);
    CHECK(a.findings[0].verdict.code == "CaptureDoesNotRoundTrip");
    CHECK(a.findings[0].verdict.cls == drift::Class::C);

    auto failing = [](const std::string&) -> Result<std::vector<Value>> {
        return make_error(ErrorKind::Findings, "boom", "", "PatchDoesNotApply");
    };
    auto b = drift::analyze(live, *r, {}, failing);
    REQUIRE(b.findings.size() == 1);
    CHECK(b.findings[0].verdict.code == "CaptureDoesNotRoundTrip");
    CHECK(b.findings[0].verdict.hint.find("boom") != std::string::npos);
}

TEST_CASE("a removed sysctl and a removed mirror are deleted by the capture", "[drift]") {
    Fixture fx;
    auto m = fx.cluster("mirrors");
    m.registry_mirrors = Value(); // the cluster sets none; the render has a patch with a mirror
    render::Input in{&m, &fx.bundle, "worker", "m-w-1", {"/dev/sda", "img", false}, "", {}};
    Value p = fx.patches["mirror-doc"];
    p["spec"]["cluster"] = "mirrors";
    in.patches.push_back(p);
    auto rendered = render::render(in);
    REQUIRE(rendered.ok());
    auto live = machineconfig::digest_secrets(*rendered);
    live.erase(std::remove_if(live.begin(), live.end(),
                              [](const Value& d) { return d.value("name", "") == "quay.io"; }),
               live.end());
    auto a = analyze(live, in);
    auto c = classes(a);
    CHECK(c["machine.registries.mirrors.quay.io.endpoints"] == "A:RegistryMirror");
    CHECK(a.capture_error.empty());
    CHECK(a.capture ==
          "apiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: quay.io\n$patch: delete\n");
}

TEST_CASE("a 1.14 node without admission plugins: the capture deletes the rendered documents",
          "[drift]") {
    // A hand-written 1.14 base has no PodSecurity admission; the render at 1.14 holds it as a
    // KubeAdmissionControlConfig document, not in v1alpha1, so deleting the v1alpha1 list (which
    // the render does not have) fails and every capture of the node stops round-tripping.
    Fixture fx;
    auto prod = fx.cluster("prod");
    std::vector<Value> live;
    for (auto& d : fx.live("cp-1.14")) {
        if (d.value("kind", "") != "KubeAdmissionControlConfig") {
            live.push_back(d);
        }
    }
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.14", {}};
    auto a = analyze(live, in);
    CHECK(classes(a) == std::map<std::string, std::string>{
                            {"cluster.apiServer.admissionControl", "A:ContractDefault"}});
    CHECK(a.capture_error.empty());
    auto capture = doc::parse_documents(a.capture, "capture");
    REQUIRE(capture.ok());
    bool deleted = false;
    for (const auto& d : *capture) {
        CHECK_FALSE(doc::find_path(d, "cluster.apiServer"));
        deleted =
            deleted || (d.value("kind", "") == "KubeAdmissionControlConfig" &&
                        d.value("name", "") == "PodSecurity" && d.value("$patch", "") == "delete");
    }
    CHECK(deleted);
    auto again = rerender_of(in)(a.capture);
    REQUIRE(again.ok());
    for (const auto& d : *again) {
        CHECK(d.value("kind", "") != "KubeAdmissionControlConfig");
    }
}

TEST_CASE("a v1alpha1 fact goes into a document only where the render has no v1alpha1 home",
          "[drift]") {
    // A 1.13 node keeps host DNS in v1alpha1 and its search domains in a ResolverConfig document.
    // The render at 1.13 holds machine.features.hostDNS in v1alpha1: a capture into
    // ResolverConfig.hostDNS beside it is refused by Talos (".machine.features.hostDNS is
    // already set in v1alpha1 config").
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("cp-1.13");
    live[0]["machine"]["features"]["hostDNS"]["resolveMemberNames"] = true;
    live.push_back(*doc::parse_one(
        "apiVersion: v1alpha1\nkind: ResolverConfig\nsearchDomains:\n  disableDefault: true\n",
        "doc"));
    render::Input in{&prod, &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "",    {}};
    auto a = analyze(live, in, drift::Context{false, "cilium", {}, 13});
    CHECK(a.capture_error.empty());
    auto capture = doc::parse_documents(a.capture, "capture");
    REQUIRE(capture.ok());
    bool in_v1alpha1 = false;
    for (const auto& d : *capture) {
        if (d.value("kind", "") == "ResolverConfig") {
            CHECK_FALSE(d.contains("hostDNS"));
        }
        in_v1alpha1 =
            in_v1alpha1 || (!d.contains("kind") &&
                            doc::find_path(d, "machine.features.hostDNS.resolveMemberNames"));
    }
    CHECK(in_v1alpha1);
    auto again = rerender_of(in)(a.capture);
    REQUIRE(again.ok());
    for (const auto& d : *again) {
        if (d.value("kind", "") == "ResolverConfig") {
            CHECK_FALSE(d.contains("hostDNS"));
        }
    }
}

TEST_CASE("a document that is only its name is a setting, captured", "[drift]") {
    // DHCPv4Config naming only its link turns DHCP on for it; dropped as an empty mapping, the
    // adoption would take the node's address away.
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto live = fx.live("cp-1.13");
    live.push_back(
        *doc::parse_one("apiVersion: v1alpha1\nkind: DHCPv4Config\nname: bond0\n", "doc"));
    render::Input in{&prod, &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "",    {}};
    auto a = analyze(live, in, drift::Context{false, "cilium", {}, 13});
    CHECK(classes(a) ==
          std::map<std::string, std::string>{{"documents.DHCPv4Config.bond0", "A:Captured"}});
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find("kind: DHCPv4Config\nname: bond0") != std::string::npos);
}

TEST_CASE("an EncryptionConfiguration of its owner's form is captured whole, its secret carried",
          "[drift]") {
    // Talos's own example (machinery v1.14.1 config/types/k8s/etcd_encryption.go), and the
    // clusters that copy it, keep an identity provider after the key: the bundle's secret is in
    // it, the form is the owner's. It is captured as the node has it, the render's form deleted
    // first (Talos's merge appends lists), its secret carried as a credential, never as text.
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = fx.plain("cp-1.14");
    Value* providers = nullptr;
    for (auto& d : node) {
        if (d.value("kind", "") == "KubeEtcdEncryptionConfig") {
            providers = &d["config"]["resources"][0]["providers"];
        }
    }
    REQUIRE(providers != nullptr);
    providers->push_back(Value{{"identity", Value::object()}});
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.14", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    REQUIRE_FALSE(a.findings.empty());
    for (const auto& f : a.findings) {
        INFO(f.change.dotted << " " << f.verdict.code);
        CHECK(f.verdict.cls == drift::Class::A);
        CHECK(f.change.dotted.starts_with("documents.KubeEtcdEncryptionConfig.config"));
    }
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find(fx.bundle.secretbox_encryption_secret) == std::string::npos);
    CHECK(a.capture.find("identity") != std::string::npos);
    CHECK(a.capture.find("$patch: delete") != std::string::npos);
    REQUIRE(a.capture_secrets.size() == 1);
    CHECK(a.capture_secrets[0].kind == "KubeEtcdEncryptionConfig");
    CHECK(a.capture_secrets[0].digest ==
          util::sha256_digest(fx.bundle.secretbox_encryption_secret));
    CHECK(a.capture_secrets[0].path == std::vector<std::string>{"config", "resources", "0",
                                                                "providers", "0", "secretbox",
                                                                "keys", "0", "secret"});

    // The same form around a secret that is not the bundle's: the machine is blocked.
    (*providers)[0]["secretbox"]["keys"][0]["secret"] = "b3RoZXItc2VjcmV0LW9mLTMyLWJ5dGVzLWxvbmc=";
    auto b = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(b)["cluster.secretboxEncryptionSecret"] == "C:SecretDiffers");
}

TEST_CASE("a node that runs the Kubernetes discovery registry lists turning it off", "[drift]") {
    // on unless disabled; the render writes it disabled: a change of Ichor's setting, class B
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = fx.plain("cp-1.13");
    node[0]["cluster"]["discovery"]["registries"]["kubernetes"]["disabled"] = false;
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.13", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(a) == std::map<std::string, std::string>{
                            {"cluster.discovery.registries.kubernetes.disabled", "B:Discovery"}});
    CHECK(a.capture.empty());
}

TEST_CASE("a v1alpha1 node that names its disk by a selector alone keeps the selector", "[drift]") {
    // Talos refuses an install with neither a disk nor a selector (machinery
    // v1alpha1_validation.go): where the TalosMachine has no disk, the node's selector is captured;
    // beside a disk it stays the node's, never drift
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = fx.plain("w-1.13");
    node[0]["machine"]["install"].erase("disk");
    node[0]["machine"]["install"]["diskSelector"] = Value{{"model", "QEMU NVMe*"}};
    render::Input in{&prod, &fx.bundle, "worker", "prod-w-1", {"", "img", false}, "1.13", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(a) == std::map<std::string, std::string>{
                            {"machine.install.diskSelector.model", "A:InstallDiskSelector"}});
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find("QEMU NVMe*") != std::string::npos);
    in.install.disk = "/dev/sda";
    CHECK(classes(analyze(machineconfig::digest_secrets(node), in)).empty());
}

namespace {

// The node's documents without those of `kind`.
std::vector<Value> without_kind(std::vector<Value> docs, const std::string& kind) {
    docs.erase(std::remove_if(docs.begin(), docs.end(),
                              [&](const Value& d) { return d.value("kind", "") == kind; }),
               docs.end());
    return docs;
}

bool has_kind(const std::vector<Value>& docs, const std::string& kind) {
    return std::any_of(docs.begin(), docs.end(),
                       [&](const Value& d) { return d.value("kind", "") == kind; });
}

} // namespace

TEST_CASE("a setting the node holds in v1alpha1 and the render in a document keeps the node's "
          "layout",
          "[drift]") {
    // The same facts in another layout are no drift, but the node's dry run would show the
    // setting leave v1alpha1 for the rendered document: the capture deletes the render's document
    // and sets the node's v1alpha1 values, so the node is given back its own layout.
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = without_kind(fx.plain("cp-1.14"), "KubeNetworkConfig");
    node[0]["cluster"]["network"] = Value{{"dnsDomain", "cluster.local"},
                                          {"podSubnets", Value::array({"10.244.0.0/16"})},
                                          {"serviceSubnets", Value::array({"10.96.0.0/12"})}};
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.14", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(a) == std::map<std::string, std::string>{{"cluster.network", "A:Layout"}});
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find("kind: KubeNetworkConfig\n$patch: delete") != std::string::npos);
    auto again = rerender_of(in)(a.capture);
    REQUIRE(again.ok());
    CHECK_FALSE(has_kind(*again, "KubeNetworkConfig"));
    const Value* network = doc::find_path((*again)[0], "cluster.network");
    REQUIRE(network != nullptr);
    CHECK(*network == node[0]["cluster"]["network"]);
    // Nothing else moved: the render with the capture holds the node's documents, in its layout.
    CHECK(drift::layout_moves(machineconfig::digest_secrets(node), *again, {}, {}).empty());
}

TEST_CASE("Ichor's own settings in another layout are listed for consent, never captured",
          "[drift]") {
    // The bundle's CAs (KubeAPIServerCAConfig at 1.14) and the cluster's mirrors
    // (RegistryMirrorConfig) held in v1alpha1: a patch holding them would undo Ichor's next change
    // of them, so the render's layout stays, listed as class B (the node check names the same
    // paths), and nothing is captured.
    Fixture fx;
    auto prod = fx.cluster("prod");
    for (auto [live, role] :
         {std::pair{"cp-1.14", "controlplane"}, std::pair{"w-1.14", "worker"}}) {
        INFO(live);
        const bool cp = std::string(role) == "controlplane";
        auto node = without_kind(fx.plain(live), "KubeAPIServerCAConfig");
        node[0]["cluster"]["ca"] =
            Value{{"crt", fx.bundle.k8s.crt}, {"key", cp ? fx.bundle.k8s.key : std::string()}};
        render::Input in{&prod, &fx.bundle, role, "m", {"/dev/sda", "img", false}, "1.14", {}};
        auto a = analyze(machineconfig::digest_secrets(node), in);
        CHECK(classes(a) == std::map<std::string, std::string>{{"cluster.ca", "B:Layout"}});
        CHECK(a.capture.empty());
    }
    auto mirrors = fx.cluster("mirrors");
    auto node = without_kind(fx.plain("w-1.13-mirrors"), "RegistryMirrorConfig");
    node[0]["machine"]["registries"]["mirrors"] = mirrors.registry_mirrors;
    render::Input in{&mirrors, &fx.bundle, "worker", "m", {"/dev/sda", "img", false}, "", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in, drift::Context{true, "cilium"});
    CHECK(classes(a) ==
          std::map<std::string, std::string>{{"machine.registries.mirrors.docker.io", "B:Layout"},
                                             {"machine.registries.mirrors.ghcr.io", "B:Layout"}});
    CHECK(a.capture.empty());
}

TEST_CASE("the cluster's name and endpoint in v1alpha1 on a 1.14 node: one move per field",
          "[drift]") {
    // issue 26's field trial (the onedr0p family at contract 1.14 keeps cluster.clusterName and
    // cluster.controlPlane.endpoint in v1alpha1; the render writes KubeClusterConfig): a document
    // of several plain fields has each field as a home, listed for consent since Ichor owns both
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = without_kind(fx.plain("cp-1.14"), "KubeClusterConfig");
    auto typed = fx.plain("cp-1.14");
    std::string name;
    std::string endpoint;
    for (const auto& d : typed) {
        if (d.value("kind", "") == "KubeClusterConfig") {
            name = d.value("clusterName", "");
            endpoint = d.value("endpoint", "");
        }
    }
    REQUIRE_FALSE(name.empty());
    node[0]["cluster"]["clusterName"] = name;
    node[0]["cluster"]["controlPlane"]["endpoint"] = endpoint;
    render::Input in{&prod,  &fx.bundle, "controlplane", "prod-cp-1", {"/dev/sda", "img", false},
                     "1.14", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(a) ==
          std::map<std::string, std::string>{{"cluster.clusterName", "B:Layout"},
                                             {"cluster.controlPlane.endpoint", "B:Layout"}});
    CHECK(a.capture.empty());
    // a different endpoint is a change of its value, not a move
    node[0]["cluster"]["controlPlane"]["endpoint"] = "https://elsewhere:6443";
    CHECK(classes(analyze(machineconfig::digest_secrets(node), in)) ==
          std::map<std::string, std::string>{{"cluster.controlPlane.endpoint", "B:Endpoint"}});
}

TEST_CASE("a 1.14 node that selects its disk by a CEL match keeps its selector", "[drift]") {
    // A match that is not a device path gives the TalosMachine no disk, and the render no
    // UnattendedInstallConfig: the node's selector is captured into that document (Talos needs
    // one to install); beside a disk it stays the node's, never drift
    Fixture fx;
    auto prod = fx.cluster("prod");
    auto node = fx.plain("w-1.14");
    bool set = false;
    for (auto& d : node) {
        if (d.value("kind", "") == "UnattendedInstallConfig") {
            d["provisioning"]["diskSelector"]["match"] = "disk.transport == \"nvme\"";
            set = true;
        }
    }
    REQUIRE(set);
    render::Input in{&prod, &fx.bundle, "worker", "prod-w-1", {"", "img", false}, "1.14", {}};
    auto a = analyze(machineconfig::digest_secrets(node), in);
    CHECK(classes(a) == std::map<std::string, std::string>{
                            {"machine.install.diskSelector.match", "A:InstallDiskSelector"},
                            {"machine.install.image", "A:InstallDiskSelector"},
                            {"machine.install.wipe", "A:InstallDiskSelector"}});
    CHECK(a.capture_error.empty());
    CHECK(a.capture.find("kind: UnattendedInstallConfig") != std::string::npos);
    CHECK(a.capture.find("ghcr.io/siderolabs/installer:v1.14.0") != std::string::npos);
    auto again = rerender_of(in)(a.capture);
    REQUIRE(again.ok());
    const Value* match = nullptr;
    for (const auto& d : *again) {
        if (d.value("kind", "") == "UnattendedInstallConfig") {
            match = doc::find_path(d, "provisioning.diskSelector.match");
        }
    }
    REQUIRE(match != nullptr);
    CHECK(*match == "disk.transport == \"nvme\"");
    in.install.disk = "/dev/sda";
    CHECK(classes(analyze(machineconfig::digest_secrets(node), in)).empty());
}

TEST_CASE("what analyze worked from is the render's facts and every change, as computed alone",
          "[drift]") {
    // The whole cluster's layering takes these instead of rendering and diffing each machine
    // again (plan_cluster.cpp, planned_work): they must be what that would compute.
    Fixture fx;
    auto prod = fx.cluster("prod");
    render::Input in{&prod, &fx.bundle, "worker", "prod-w-1", {"/dev/sda", "img", false}, "", {}};
    auto r = render::render(in);
    REQUIRE(r.ok());
    auto with_drift = fx.live("w-1.13");
    with_drift[0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}}; // class A: a capture
    with_drift[0]["machine"]["kubelet"]["extraArgs"] = Value{{"v", "4"}};
    drift::Context ctx;
    ctx.talos_minor = 13;
    ctx.install_disk_rendered = false; // analyze sets it from the render
    for (const auto& live : {fx.live("w-1.13"), with_drift}) {
        drift::Worked w;
        auto a = drift::analyze(live, *r, ctx, rerender_of(in), &w);
        const Value facts = drift::normalize(*r);
        CHECK(w.rendered_facts == facts);
        drift::Context want = ctx;
        want.install_disk_rendered = drift::renders_install_disk(facts);
        CHECK(w.context.install_disk_rendered == want.install_disk_rendered);
        CHECK(w.context.talos_minor == 13);
        std::vector<drift::Change> changes = drift::diff(drift::normalize(live), facts);
        for (auto& m : drift::layout_moves(live, *r, changes, want)) {
            changes.push_back(std::move(m));
        }
        REQUIRE(w.changes.size() == changes.size());
        for (std::size_t i = 0; i < changes.size(); ++i) {
            CHECK(w.changes[i].dotted == changes[i].dotted);
            CHECK(w.changes[i].current == changes[i].current);
            CHECK(w.changes[i].proposed == changes[i].proposed);
        }
        // the live facts given, as the whole cluster's plan has them: the same analysis
        const Value live_facts = drift::normalize(live);
        drift::Worked w2;
        auto b = drift::analyze(live, *r, ctx, rerender_of(in), &w2, &live_facts);
        CHECK(b.capture == a.capture);
        CHECK(classes(b) == classes(a));
        CHECK(w2.changes.size() == w.changes.size());
        // the findings are the changes that are not Ignored, the capture there when one is due
        CHECK(a.findings.size() <= w.changes.size());
        CHECK(a.capture.empty() ==
              (live.size() == fx.live("w-1.13").size() && live[0] == fx.live("w-1.13")[0]));
    }
    // The facts given are the ones compared: they are read, not computed again from `live`.
    const Value drifted = drift::normalize(with_drift);
    auto given = drift::analyze(fx.live("w-1.13"), *r, ctx, rerender_of(in), nullptr, &drifted);
    CHECK(classes(given).count("machine.sysctls.vm.swappiness") == 1);
}
