#include "common/drift/rules.h"
#include "common/util/files.h"

#include <catch2/catch.hpp>

#include <set>

using namespace ichor;

namespace {
drift::Verdict verdict(const std::string& dotted, drift::Context ctx = {}) {
    drift::Change c;
    c.dotted = dotted;
    return drift::classify(c, ctx);
}
} // namespace

TEST_CASE("the rules table", "[drift][rules]") {
    CHECK(verdict("machine.sysctls.net.core.somaxconn").code == "Sysctl");
    CHECK(verdict("machine.sysctlsx").code == "Captured"); // a path, not a prefix of text
    CHECK(verdict("machine.install.extraKernelArgs").cls == drift::Class::A);
    CHECK(verdict("machine.install.disk").cls == drift::Class::Ignored);
    CHECK(verdict("machine.registries.mirrors.docker.io.endpoints").code == "RegistryMirror");
    CHECK(verdict("machine.registries.mirrors.docker.io.endpoints", {true, "cilium"}).code ==
          "Registries");
    CHECK(verdict("machine.registries.config.r.tls.insecureSkipVerify").cls == drift::Class::A);
    CHECK(verdict("cluster.network.cni.name").cls == drift::Class::B);
    CHECK(verdict("cluster.network.cni.name", {false, "unmanaged"}).cls == drift::Class::A);
    CHECK(verdict("cluster.proxy.disabled").code == "KubeProxy");
    // Class A is the default: every setting Ichor does not own is captured.
    CHECK(verdict("machine.kubelet.extraArgs.max-pods").code == "Captured");
    CHECK(verdict("machine.kubelet.extraArgs.max-pods").cls == drift::Class::A);
    CHECK(verdict("cluster.etcd.extraArgs.listen-metrics-urls").cls == drift::Class::A);
    CHECK(verdict("machine.nodeLabels.node.kubernetes.io/exclude-from-external-load-balancers")
              .code == "ContractDefault");
    // What a patch cannot carry: the cluster's CAs and bundle values.
    CHECK(verdict("cluster.acceptedCAs").code == "CADiffers");
    CHECK(verdict("machine.ca.crt").code == "CADiffers");
    CHECK(verdict("cluster.serviceAccount.key").cls == drift::Class::C);
    CHECK(verdict("cluster.id").code == "BundleDiffers");
    drift::Change secret;
    secret.dotted = "machine.sysctls.x";
    secret.secret = true;
    CHECK(drift::classify(secret, {}).code == "SecretDiffers");
    // A credential the render does not carry is captured into a Secret; a bundle secret is not.
    drift::Change auth;
    auth.dotted = "machine.registries.config.ghcr.io.auth.password";
    auth.secret = true;
    auth.current = "sha256:" + std::string(64, 'a');
    CHECK(drift::classify(auth, {}).code == "Credential");
    CHECK(drift::classify(auth, {}).cls == drift::Class::A);
    auth.proposed = "sha256:" + std::string(64, 'b');
    CHECK(drift::classify(auth, {}).code == "SecretDiffers");
    drift::Change token;
    token.dotted = "machine.token";
    token.secret = true;
    token.current = "sha256:" + std::string(64, 'a');
    CHECK(drift::classify(token, {}).code == "SecretDiffers");
    // An encryption secret: the node's EncryptionConfiguration may hold the bundle's secret in
    // a form Talos does not write (an identity provider after it); the hint says so instead of
    // calling it another cluster's secret.
    drift::Change encryption;
    encryption.dotted = "cluster.secretboxEncryptionSecret";
    encryption.secret = true;
    encryption.current = "sha256:" + std::string(64, 'a');
    encryption.proposed = "sha256:" + std::string(64, 'b');
    auto v = drift::classify(encryption, {});
    CHECK(v.code == "SecretDiffers");
    CHECK(v.cls == drift::Class::C);
    CHECK(v.hint.find("identity") != std::string::npos);
    CHECK(v.hint.find("KubeEtcdEncryptionConfig") != std::string::npos);
}

TEST_CASE("a document kind Talos does not load at the node's version blocks", "[drift][rules]") {
    drift::Change c;
    c.path = {"documents", "KubeletConfig", "image"};
    c.dotted = "documents.KubeletConfig.image";
    CHECK(drift::classify(c, {false, "cilium", {}, 13}).code == "UnknownDocument");
    CHECK(drift::classify(c, {false, "cilium", {}, 14}).cls == drift::Class::A);
    c.path = {"documents", "BondConfig", "bond0", "links"};
    c.dotted = "documents.BondConfig.bond0.links";
    CHECK(drift::classify(c, {false, "cilium", {}, 12}).code == "Captured");
    c.path = {"documents", "FancyConfig", "x"};
    c.dotted = "documents.FancyConfig.x";
    CHECK(drift::classify(c, {}).code == "UnknownDocument");
    CHECK(drift::classify(c, {}).cls == drift::Class::C);
}

TEST_CASE("an inline manifest is captured, but the taken-over Cilium's is class B",
          "[drift][rules]") {
    auto manifest = [](const std::string& name) {
        return doc::Value{{"name", name}, {"contents", "kind: DaemonSet"}};
    };
    auto change = [&](doc::Value current, doc::Value proposed = {}) {
        drift::Change c;
        c.path = {"cluster", "inlineManifests"};
        c.dotted = "cluster.inlineManifests";
        c.current = std::move(current);
        c.proposed = std::move(proposed);
        return c;
    };
    const drift::Context takeover{false, "cilium", {"cilium"}};
    auto only = change(doc::Value::array({manifest("cilium")}));
    auto v = drift::classify(only, takeover);
    CHECK(v.cls == drift::Class::B);
    CHECK(v.code == "CiliumInlineManifest");
    CHECK(v.hint.find("next talosctl upgrade-k8s") != std::string::npos);
    CHECK(v.hint.find("spec.cni.cilium.inlineManifests") != std::string::npos);
    // another manifest beside it: one list cannot be kept and removed, the machine is blocked
    CHECK(drift::classify(change(doc::Value::array({manifest("cilium"), manifest("x")})), takeover)
              .code == "InlineManifests");
    CHECK(drift::classify(change(doc::Value::array({manifest("cilium"), manifest("x")})), takeover)
              .cls == drift::Class::C);
    // not the one the takeover named: captured, Talos keeps applying it
    CHECK(drift::classify(change(doc::Value::array({manifest("x")})), takeover).cls ==
          drift::Class::A);
    // no takeover recorded, or the CNI unmanaged: captured
    CHECK(drift::classify(only, {}).code == "InlineManifests");
    CHECK(drift::classify(only, {}).cls == drift::Class::A);
    CHECK(drift::classify(only, {false, "unmanaged", {"cilium"}}).cls == drift::Class::A);
    // the render adding a manifest is not a removal
    CHECK(drift::classify(
              change(doc::Value::array({manifest("cilium")}), doc::Value::array({manifest("y")})),
              takeover)
              .cls == drift::Class::C);
    // the render keeping another manifest the node has, removing only Cilium's: B
    CHECK(drift::classify(change(doc::Value::array({manifest("cilium"), manifest("x")}),
                                 doc::Value::array({manifest("x")})),
                          takeover)
              .cls == drift::Class::B);
}

TEST_CASE("every rule has a code, and B and C rules a hint", "[drift][rules]") {
    for (const auto& r : drift::rules()) {
        INFO(r.path);
        CHECK_FALSE(r.code.empty());
        if (r.cls == drift::Class::B || r.cls == drift::Class::C) {
            CHECK_FALSE(r.hint.empty());
        }
    }
}

TEST_CASE("docs/drift-rules.md lists the table as it is", "[drift][rules]") {
    auto text = util::read_file(std::string(ICHOR_SOURCE_DIR) + "/docs/drift-rules.md");
    REQUIRE(text.ok());
    auto when = [](drift::When w) -> std::string {
        switch (w) {
        case drift::When::Always:
            return "always";
        case drift::When::RegistriesSet:
            return "spec.registries set";
        case drift::When::RegistriesUnset:
            return "spec.registries not set";
        case drift::When::CniManaged:
            return "preset cilium or none";
        case drift::When::CniUnmanaged:
            return "preset unmanaged";
        case drift::When::CiliumManifests:
            return "preset cilium, only spec.cni.cilium.inlineManifests removed";
        case drift::When::CiliumMixed:
            return "preset cilium, spec.cni.cilium.inlineManifests beside others";
        case drift::When::NoInstallDisk:
            return "the render has no install disk";
        case drift::When::NoInstallDocument:
            return "the render has no install disk and does not set it";
        }
        return {};
    };
    for (const auto& r : drift::rules()) {
        std::string row = "| `" + std::string(r.path) + "` | " + when(r.when) + " | " +
                          std::string(drift::class_name(r.cls)) + " | `" + std::string(r.code) +
                          "` |";
        INFO(row);
        CHECK(text->find(row) != std::string::npos);
    }
}

TEST_CASE("a layout move takes its class from whose setting it is", "[drift][rules]") {
    // docs/drift-rules.md, "Layout moves": Ichor's own (class B or C at the path) for consent,
    // any other captured in the node's layout; before the secret and CA rules either way
    drift::Change c;
    c.layout = "KubeAPIServerCAConfig";
    c.path = {"cluster", "ca"};
    c.dotted = "cluster.ca";
    c.current = "v1alpha1";
    c.proposed = "KubeAPIServerCAConfig";
    CHECK(drift::classify(c, {}).code == "Layout");
    CHECK(drift::classify(c, {}).cls == drift::Class::B);
    c.dotted = "machine.registries.mirrors.docker.io";
    CHECK(drift::classify(c, {true, "cilium"}).cls == drift::Class::B);
    CHECK(drift::classify(c, {false, "cilium"}).cls == drift::Class::A);
    c.dotted = "cluster.network";
    CHECK(drift::classify(c, {}).cls == drift::Class::A);
    c.layout.clear();
    CHECK(drift::classify(c, {}).code == "Captured");
}
