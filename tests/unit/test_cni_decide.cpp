#include "common/cni/decide.h"
#include "common/cni/preflight.h"
#include "common/cni/values.h"
#include "test_cni_support.h"

#include <algorithm>

using namespace ichor;
using cni_test::Value;

namespace {

cni::Detection detected(cni::Cni c, const std::string& name) {
    cni::Detection d;
    d.cni = c;
    d.name = name;
    return d;
}

cni::Detection cilium(const Value* record_values = nullptr) {
    cni::Detection d = detected(cni::Cni::Cilium, "cilium");
    d.ipam_mode = "kubernetes";
    d.namespace_name = "kube-system";
    d.install = cni::CiliumInstall::InlineManifest;
    d.manifests = {"cilium"};
    if (record_values != nullptr) {
        cni::HelmRelease r;
        r.secret_name = "sh.helm.release.v1.cilium.v1";
        r.config = *record_values;
        d.release = r;
        d.install = cni::CiliumInstall::HelmRecord;
        d.manifests.clear();
    }
    return d;
}

cni::CniFlags with_values(const std::string& yaml) {
    auto v = cni::read_values(yaml, "values.yaml");
    REQUIRE(v.ok());
    return {false, true, *v};
}

} // namespace

TEST_CASE("the non-Cilium refusal, word for word", "[cni][decide]") {
    auto plan = cni::decide(detected(cni::Cni::Flannel, "flannel"), {});
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().kind == ErrorKind::Findings);
    CHECK(plan.error().code == "CniNotCilium");
    CHECK(plan.error().message ==
          "cni: the cluster's CNI is flannel, not Cilium: rerun with --cni-unmanaged to adopt the "
          "cluster and leave its CNI as it is. Ichor does not migrate a CNI. To have Ichor manage "
          "Cilium you need a cluster whose CNI is Cilium with ipam.mode: kubernetes, or none; see "
          "the adopt guide, 'Moving from flannel'.");
    CHECK(plan.error().hint == "rerun with --cni-unmanaged");
    for (auto c : {cni::Cni::Calico, cni::Cni::Other, cni::Cni::Several}) {
        auto p = cni::decide(detected(c, "x"), {});
        REQUIRE_FALSE(p.ok());
        CHECK(p.error().message.find(std::string(cni::k_no_migration)) != std::string::npos);
    }
}

TEST_CASE("unmanaged: any CNI, no values", "[cni][decide]") {
    auto plan = cni::decide(detected(cni::Cni::Calico, "calico"), {true, false, {}});
    REQUIRE(plan.ok());
    CHECK(plan->action == cni::CniAction::Unmanaged);
    CHECK(plan->preset == "unmanaged");
    auto refused = cni::decide(cilium(), {true, true, Value::object()});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().kind == ErrorKind::Usage);
    CHECK(refused.error().message == "--cilium-values cannot be used with --cni-unmanaged: Ichor "
                                     "renders no Cilium for an unmanaged CNI");
    auto non_cilium = cni::decide(detected(cni::Cni::Flannel, "flannel"), with_values("a: 1"));
    REQUIRE_FALSE(non_cilium.ok());
    CHECK(non_cilium.error().code == "CiliumValuesNotCilium");
}

TEST_CASE("a release record that carries values refuses --cilium-values", "[cni][decide]") {
    Value record = cni_test::yaml("hubble: {relay: {enabled: true}}");
    auto refused = cni::decide(cilium(&record), with_values("hubble: {relay: {enabled: true}}"));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message ==
          "the existing release already carries values; drop --cilium-values or remove them from "
          "the plan");
    auto plan = cni::decide(cilium(&record), {});
    REQUIRE(plan.ok());
    CHECK(plan->action == cni::CniAction::Takeover);
    CHECK(plan->source == cni::ValuesSource::Record);
    CHECK(plan->values == record);
}

TEST_CASE("a release record without values takes --cilium-values", "[cni][decide]") {
    Value empty = Value::object();
    auto plan = cni::decide(cilium(&empty), with_values("operator: {replicas: 1}"));
    REQUIRE(plan.ok());
    CHECK(plan->source == cni::ValuesSource::Flag);
    CHECK(plan->values == cni_test::yaml("operator: {replicas: 1}"));
}

TEST_CASE("none given: Ichor's defaults", "[cni][decide]") {
    auto plan = cni::decide(cilium(), {});
    REQUIRE(plan.ok());
    CHECK(plan->source == cni::ValuesSource::None);
    CHECK(plan->values == Value::object());
    REQUIRE(plan->notes.size() == 2);
    CHECK(plan->notes[0] == "the takeover restarts the Cilium agents (the only step of the "
                            "adoption that restarts anything)");
    CHECK(plan->notes[1].find("Talos manifest cilium") != std::string::npos);
}

TEST_CASE("the flag's values reach the preflight through the plan", "[cni][decide]") {
    auto objects = cni_test::guide_cluster();
    objects.deployments.push_back(cni_test::yaml("apiVersion: apps/v1\nkind: Deployment\nmetadata: "
                                                 "{name: hubble-relay, namespace: kube-system}\n"));
    auto d = cni::detect(objects, {});
    REQUIRE(d.ok());
    auto live = cni::live_cilium(objects, d->namespace_name);
    auto none = cni::decide(*d, {});
    REQUIRE(none.ok());
    CHECK(cni::preflight(live, none->values).differences.size() == 1);
    auto plan = cni::decide(*d, with_values("hubble: {relay: {enabled: true}}"));
    REQUIRE(plan.ok());
    CHECK(cni::preflight(live, plan->values).empty());
    CHECK(cni::split_owned(plan->values).values ==
          cni_test::yaml("hubble: {relay: {enabled: true}}"));
}

TEST_CASE("no CNI: Ichor installs its Cilium", "[cni][decide]") {
    auto plan =
        cni::decide(detected(cni::Cni::None, "none"), with_values("operator: {replicas: 1}"));
    REQUIRE(plan.ok());
    CHECK(plan->action == cni::CniAction::Install);
    CHECK(plan->preset == "cilium");
    CHECK(plan->source == cni::ValuesSource::Flag);
}

TEST_CASE("a cluster-pool Cilium is refused before values are looked at", "[cni][decide]") {
    auto d = cilium();
    d.ipam_mode = "cluster-pool";
    auto plan = cni::decide(d, with_values("operator: {replicas: 1}"));
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().code == "CiliumIPAM");
}

TEST_CASE("the lab's helm install: the record's values, refused flag, no difference",
          "[cni][decide]") {
    auto objects = cni_test::lab_helm_cluster();
    auto d = cni::detect(objects, {});
    REQUIRE(d.ok());
    CHECK(d->cni == cni::Cni::Cilium);
    CHECK(d->install == cni::CiliumInstall::HelmRecord);
    CHECK(d->ipam_mode == "kubernetes");
    auto refused = cni::decide(*d, with_values("hubble: {relay: {enabled: true}}"));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message == std::string(cni::k_release_has_values));
    auto plan = cni::decide(*d, {});
    REQUIRE(plan.ok());
    CHECK(plan->source == cni::ValuesSource::Record);
    auto live = cni::live_cilium(objects, d->namespace_name);
    auto p = cni::preflight(live, plan->values);
    for (const auto& diff : p.differences) {
        UNSCOPED_INFO(cni::describe(diff));
    }
    CHECK(p.empty());
    // Ichor's defaults alone would turn the relay off.
    auto defaults = cni::preflight(live, Value::object());
    REQUIRE(defaults.differences.size() == 1);
    CHECK(defaults.differences[0].path == "hubble.relay.enabled");
}

TEST_CASE("a takeover of an inline-manifest Cilium removes the manifest, class B",
          "[cni][decide]") {
    cni::Detection d = cilium();
    d.inline_manifests = {"cilium"};
    d.manifests.push_back("https://example.org/cilium.yaml");
    auto p = cni::decide(d, {});
    REQUIRE(p.ok());
    CHECK(p->inline_manifests == std::vector<std::string>{"cilium"});
    auto has = [&](const std::string& text) {
        return std::any_of(p->notes.begin(), p->notes.end(),
                           [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    CHECK(has("restarts the Cilium agents"));
    CHECK(has("the Talos inline manifest cilium delivers Cilium and the next talosctl upgrade-k8s "
              "would apply it again"));
    CHECK(has("class B, CiliumInlineManifest"));
    CHECK(has("the Talos manifest https://example.org/cilium.yaml delivers Cilium"));

    auto u = cni::decide(d, {true, false, Value()}); // unmanaged: nothing removed
    REQUIRE(u.ok());
    CHECK(u->inline_manifests.empty());
}

TEST_CASE("flannel's CNI file left on Talos 1.13 nodes: refused, saying what to do",
          "[cni][decide]") {
    cni::Detection d = detected(cni::Cni::Other, "none, with flannel's CNI configuration left");
    d.leftover_nodes = {"home-cp-1", "home-w-1"};
    auto p = cni::decide(d, {});
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().code == "CniLeftoverConfig");
    CHECK(p.error().kind == ErrorKind::Findings);
    CHECK(p.error().message.find("2 Node(s) that flannel ran on are Ready (home-cp-1, home-w-1)") !=
          std::string::npos);
    CHECK(p.error().message.find("/etc/cni/net.d/10-flannel.conflist survived the reboot") !=
          std::string::npos);
    CHECK(p.error().message.find("'Moving from flannel'") != std::string::npos);
    CHECK(p.error().hint.find("rm /host/etc/cni/net.d/10-flannel.conflist") != std::string::npos);
    CHECK_FALSE(cni::decide(d, with_values("hubble: {relay: {enabled: true}}")).ok());
    // --cni-unmanaged still leaves the cluster as it is
    auto u = cni::decide(d, {true, false, Value()});
    REQUIRE(u.ok());
    CHECK(u->preset == "unmanaged");
}
