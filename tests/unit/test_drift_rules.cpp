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
    CHECK(verdict("machine.sysctlsx").code == "Unrepresentable"); // a path, not a prefix of text
    CHECK(verdict("machine.install.extraKernelArgs").cls == drift::Class::A);
    CHECK(verdict("machine.install.disk").cls == drift::Class::Ignored);
    CHECK(verdict("machine.registries.mirrors.docker.io.endpoints").code == "RegistryMirror");
    CHECK(verdict("machine.registries.mirrors.docker.io.endpoints", {true, "cilium"}).code ==
          "Registries");
    CHECK(verdict("machine.registries.config.r.tls.insecureSkipVerify").cls == drift::Class::A);
    CHECK(verdict("cluster.network.cni.name").cls == drift::Class::B);
    CHECK(verdict("cluster.network.cni.name", {false, "unmanaged"}).cls == drift::Class::A);
    CHECK(verdict("cluster.proxy.disabled").code == "KubeProxy");
    CHECK(verdict("machine.kubelet.extraArgs.max-pods").code == "Unrepresentable");
    CHECK(verdict("machine.kubelet.extraArgs.max-pods").cls == drift::Class::C);
    drift::Change secret;
    secret.dotted = "machine.sysctls.x";
    secret.secret = true;
    CHECK(drift::classify(secret, {}).code == "SecretDiffers");
}

TEST_CASE("an inline manifest is class C, but the taken-over Cilium's is class B",
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
    // another manifest beside it, or not the one the takeover named: blocks the machine
    CHECK(drift::classify(change(doc::Value::array({manifest("cilium"), manifest("x")})), takeover)
              .code == "InlineManifests");
    CHECK(drift::classify(change(doc::Value::array({manifest("x")})), takeover).cls ==
          drift::Class::C);
    // no takeover recorded, or the CNI unmanaged: class C as before
    CHECK(drift::classify(only, {}).code == "InlineManifests");
    CHECK(drift::classify(only, {false, "unmanaged", {"cilium"}}).code == "InlineManifests");
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
