// The plan stage (common/stages/plan.h) that kubectl ichor drift runs: Inspections in, the
// objects to create and the drift as results out.
#include "common/cli/errors.h"
#include "common/inspection/fields.h"
#include "common/machineconfig/machineconfig.h"
#include "common/render/render.h"
#include "common/stages/plan.h"
#include "common/util/files.h"
#include "test_plan_support.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;

namespace {

// A CA certificate of another cluster (public, base64 of PEM as v1alpha1 holds it).
const std::string k_other_ca =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJxekNDQVZHZ0F3SUJBZ0lVUXBWRHUxdnQxNHJBRlV2N1JXbzJQZT"
    "NKRTk4d0NnWUlLb1pJemowRUF3SXcKS2pFWU1CWUdBMVVFQ2d3UFlXNXZkR2hsY2kxamJIVnpkR1Z5TVE0d0RBWURWUVFE"
    "REFWMFlXeHZjekFnRncweQpOakV5TURJd05UUTVNVEZhR0E4eU1USTJNVEV3T0RBMU5Ea3hNVm93S2pFWU1CWUdBMVVFQ2"
    "d3UFlXNXZkR2hsCmNpMWpiSFZ6ZEdWeU1RNHdEQVlEVlFRRERBVjBZV3h2Y3pCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000"
    "OUF3RUgKQTBJQUJPRXRxNERvalZtM1J0OHFEdmlkNW9SOFdXK1ZIUUwxK1JzZzI4VVpJekhnc2Q3a3d2ZzVTbE5VWnJqSg"
    "p1V2RZb2RiYSt0SHB4TmU3QW1vdmZiSm4rNmVqVXpCUk1CMEdBMVVkRGdRV0JCVExaZXVManp2RDdydFFSV2Y2CnVhNjZs"
    "YVREdkRBZkJnTlZIU01FR0RBV2dCVExaZXVManp2RDdydFFSV2Y2dWE2NmxhVER2REFQQmdOVkhSTUIKQWY4RUJUQURBUU"
    "gvTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFEN2FRWStTS0RCbkhUZmptZFpYclFBN2ovRApoSDNpbjJwMVlVSmd3cFlP"
    "NUFJZ1pRUDFnSU1sRnVhbXk3cXBOSnpUWkh4U0hoMkcxNFI4NGJEQ0hRa3Q4d0k9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS"
    "0tLS0K";

using Fixture = test::PlanFixture;

std::vector<std::string> codes(const doc::ResourceList& l) {
    std::vector<std::string> out;
    for (const auto& r : l.results) {
        out.push_back(r["tags"].value("ichor.maesh.dev/code", ""));
    }
    return out;
}

const Value* item(const doc::ResourceList& l, const std::string& kind) {
    for (const auto& i : l.items) {
        if (i.value("kind", "") == kind) {
            return &i;
        }
    }
    return nullptr;
}

} // namespace

TEST_CASE("a node equal to the render: a held, approved TalosMachine and no patch",
          "[drift][plan]") {
    Fixture fx;
    // A node Talos itself configured at contract 1.14 (Talos's own 1.14 documents) against the
    // cluster's render at 1.14: nothing to list.
    fx.cluster["spec"]["versionContract"] = "1.14";
    doc::ResourceList list;
    list.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.14", "v1.14.1"));
    auto s = fx.run(list);
    REQUIRE_FALSE(s.error);
    CHECK(s.done == 1);
    CHECK(cli::exit_code(s) == 0);
    REQUIRE(list.items.size() == 3); // the Inspection stays; the PlanBasis and the machine
    REQUIRE(item(list, "PlanBasis") != nullptr);
    const Value* m = item(list, "TalosMachine");
    REQUIRE(m != nullptr);
    CHECK(doc::get_string(*m, "metadata.name") == "prod-w-2");
    CHECK((*m)["metadata"]["labels"]["ichor.maesh.dev/cluster"] == "prod");
    CHECK((*m)["metadata"]["annotations"]["ichor.maesh.dev/hold-apply"] == "true");
    CHECK((*m)["spec"]["approval"] == "Approved");
    CHECK((*m)["spec"]["role"] == "worker");
    CHECK((*m)["spec"]["install"] == Value{{"disk", "/dev/nvme0n1"},
                                           {"image", "ghcr.io/siderolabs/installer:v1.14.0"},
                                           {"wipe", true}});
    CHECK(item(list, "TalosConfigPatch") == nullptr);
    CHECK(codes(list) == std::vector<std::string>{"Plan"});
    INFO(stages::plan_table(list, false));
    CHECK(stages::plan_table(list, false).find("prod-w-2   worker   10.0.0.21   /dev/nvme0n1") !=
          std::string::npos);
}

TEST_CASE("class A drift becomes the machine's patch, class C blocks", "[drift][plan]") {
    Fixture fx;
    doc::ResourceList list;
    Value a = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    a["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    Value c = fx.inspection("10.0.0.22", "prod-w-3", "w-1.13");
    // another cluster's Kubernetes CA accepted beside the bundle's: no patch can carry a CA
    c["status"]["config"][0]["cluster"]["acceptedCAs"] =
        Value::array({Value{{"crt", test::k_other_ca}}});
    list.items.push_back(a);
    list.items.push_back(c);
    auto s = fx.run(list);
    REQUIRE_FALSE(s.error);
    CHECK(s.done == 1);
    CHECK(s.stopped == 1);
    CHECK(cli::exit_code(s) == 5);
    const Value* p = item(list, "TalosConfigPatch");
    REQUIRE(p != nullptr);
    CHECK((*p)["metadata"]["name"] == "prod-w-2-adopted");
    CHECK((*p)["spec"]["layer"] == "machine");
    CHECK((*p)["spec"]["machine"] == "prod-w-2");
    CHECK((*p)["spec"]["patch"] == "machine:\n  sysctls:\n    vm.swappiness: \"1\"\n");
    bool blocked = false;
    for (const auto& r : list.results) {
        if (r["tags"].value("ichor.maesh.dev/code", "") == "CADiffers") {
            blocked = true;
            CHECK(r["severity"] == "error");
            CHECK(r["field"]["path"] == "cluster.acceptedCAs");
            CHECK(r["field"]["currentValue"].size() == 2);
            CHECK(r["field"]["proposedValue"].size() == 1);
            CHECK(r["tags"]["ichor.maesh.dev/class"] == "C");
            CHECK(r["message"].get<std::string>().starts_with("10.0.0.22: cluster.acceptedCAs:"));
            CHECK(r["message"].get<std::string>().find("hint: ") != std::string::npos);
        }
    }
    CHECK(blocked);
    CHECK(list.results.back()["message"] ==
          "plan: 1 machine to adopt: prod-w-2 (worker, /dev/sda); 1 blocked: 10.0.0.22");
}

TEST_CASE("skips, refusals, the control-plane count and the closing words", "[drift][plan]") {
    Fixture fx;
    Value existing = Value::object();
    existing["kind"] = "TalosMachine";
    existing["metadata"]["name"] = "prod-cp-1";
    existing["spec"] = Value{{"cluster", "prod"},
                             {"role", "controlplane"},
                             {"approval", "Approved"},
                             {"identity", Value{{"uuid", "UUID-prod-cp-1"}}}};

    doc::ResourceList list;
    list.items.push_back(fx.inspection("10.0.0.11", "prod-cp-1", "cp-1.13"));
    list.items.push_back(fx.inspection("10.0.0.14", "prod-cp-2", "cp-1.13"));
    list.items.push_back(fx.inspection("10.0.0.15", "old", "w-1.13", "v1.11.5"));
    list.items.push_back(fx.inspection("10.0.0.16", "new", "w-1.13", "v1.15.0"));
    Value untrusted = fx.inspection("10.0.0.17", "u", "w-1.13");
    untrusted["status"].erase("trust");
    list.items.push_back(untrusted);
    auto s = fx.run(list, {existing});
    REQUIRE_FALSE(s.error);
    CHECK(s.skipped == 1);
    CHECK(s.stopped == 4);
    CHECK(s.done == 0);
    CHECK(cli::exit_code(s) == 1);
    CHECK(codes(list) == std::vector<std::string>{"AlreadyAdopted", "ControlPlaneCount",
                                                  "TalosTooOld", "UnknownTalosVersion",
                                                  "NotTrustChecked", "NothingToAdopt"});
    CHECK(list.results[1]["message"].get<std::string>().find(
              "more than its spec.controlPlane.count 1") != std::string::npos);
    CHECK(list.results[1]["message"].get<std::string>().find("raise the count first") !=
          std::string::npos);
    CHECK(list.results.back()["message"].get<std::string>().starts_with(
        "nothing to adopt: 10.0.0.14, 10.0.0.15, 10.0.0.16, 10.0.0.17 refused"));

    doc::ResourceList again;
    again.items.push_back(fx.inspection("10.0.0.14", "prod-cp-2", "cp-1.13"));
    REQUIRE_FALSE(fx.run(again, {existing}, {}, true).error);
    CHECK(again.results.back()["message"].get<std::string>().starts_with(
        "every machine is refused (10.0.0.14); nothing was written"));
    CHECK(item(again, "TalosMachine") == nullptr);
}

TEST_CASE("a patch that does not apply blocks the machine and names the patch", "[drift][plan]") {
    Fixture fx;
    Value bad = Value::object();
    bad["kind"] = "TalosConfigPatch";
    bad["metadata"]["name"] = "broken";
    bad["spec"] =
        Value{{"cluster", "prod"}, {"layer", "cluster"}, {"patch", "machine:\n  sysctls: [a]\n"}};
    doc::ResourceList list;
    list.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    auto s = fx.run(list, {}, {bad});
    REQUIRE_FALSE(s.error);
    CHECK(s.stopped == 1);
    REQUIRE(list.results.size() == 2);
    CHECK(
        list.results[0]["message"] ==
        "10.0.0.21: TalosConfigPatch broken: machine.sysctls: a list where the configuration has a "
        "mapping; this machine is blocked; hint: kubectl edit talosconfigpatch -n ichor-system "
        "(fix "
        "the patch the message names)");
    CHECK(codes(list)[0] == "PatchDoesNotApply");
}

TEST_CASE("machine names", "[drift][plan]") {
    CHECK(stages::machine_name("prod-w-2", "A-B") == "prod-w-2");
    CHECK(stages::machine_name("Prod_W2", "0F3A-11") == "machine-0f3a-11");
    CHECK(stages::machine_name("", "") == "machine-unknown");
    CHECK(stages::supported_kubernetes(12) == std::pair{30, 35});
    CHECK(stages::supported_kubernetes(15) == std::pair{0, 0});
}

TEST_CASE("a Talos and Kubernetes pair outside Talos's support matrix is a warning",
          "[drift][plan]") {
    Fixture fx;
    fx.cluster["spec"]["kubernetesVersion"] = "v1.37.0";
    doc::ResourceList list;
    Value i = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13", "v1.12.11");
    list.items.push_back(i);
    auto s = fx.run(list);
    REQUIRE_FALSE(s.error);
    CHECK(s.done == 1);
    std::vector<std::string> warnings;
    for (const auto& r : list.results) {
        if (r["tags"].value("ichor.maesh.dev/code", "") == "UnsupportedKubernetesVersion") {
            warnings.push_back(r["message"].get<std::string>());
        }
    }
    REQUIRE(warnings.size() == 1); // the node's kubelet (v1.34.4) is fine, the cluster's is not
    CHECK(warnings[0] ==
          "10.0.0.21: Talos v1.12.11 does not support Kubernetes v1.37.0 of TalosCluster prod "
          "(it supports 1.30 to 1.35); the machine is adopted as it runs, and an upgrade is "
          "refused until the pair is compatible");
}

TEST_CASE("a plan planned again replaces its own results and objects", "[drift][plan]") {
    Fixture fx;
    doc::ResourceList list;
    Value a = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    a["status"]["config"][0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    list.items.push_back(a);
    list.add_result(doc::Severity::Warning, "from an earlier stage", "Earlier");
    REQUIRE_FALSE(fx.run(list).error);
    const doc::Value once = list.to_value();
    REQUIRE(item(list, "TalosConfigPatch") != nullptr);
    for (const auto& r : list.results) {
        if (r["tags"]["ichor.maesh.dev/code"] != "Earlier") {
            CHECK(r["tags"]["ichor.maesh.dev/stage"] == "drift");
        } else {
            CHECK_FALSE(r["tags"].contains("ichor.maesh.dev/stage"));
        }
    }
    auto again = fx.run(list);
    REQUIRE_FALSE(again.error);
    CHECK(again.done == 1);
    CHECK(list.to_value() == once);
}

TEST_CASE("only an approved TalosMachine of the UUID makes the node adopted", "[drift][plan]") {
    // The adopt guide's four-state table, as the ADR has it (decision 2, G2): a pending or a
    // rejected record of the UUID is stale for a node that runs a configuration; the node is
    // planned and the record is named with the commands that remove it.
    Fixture fx;
    auto record = [](const std::string& name, const std::string& approval) {
        Value m = Value::object();
        m["kind"] = "TalosMachine";
        m["metadata"]["name"] = name;
        m["spec"] = Value{{"cluster", "prod"},
                          {"approval", approval},
                          {"identity", Value{{"uuid", "UUID-prod-w-2"}}}};
        return m;
    };
    for (const std::string approval : {"Pending", "Rejected"}) {
        INFO(approval);
        doc::ResourceList list;
        list.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
        auto s = fx.run(list, {record("prod-old", approval)}, {}, true);
        REQUIRE_FALSE(s.error);
        CHECK(s.done == 1);
        CHECK(s.skipped == 0);
        REQUIRE(item(list, "TalosMachine") != nullptr);
        CHECK((*item(list, "TalosMachine"))["metadata"]["name"] == "prod-w-2");
        REQUIRE(codes(list).front() == "StaleMachine");
        CHECK(list.results[0]["severity"] == "warning");
        CHECK(list.results[0]["message"] ==
              "10.0.0.21: TalosMachine prod-old (cluster prod) has UUID UUID-prod-w-2 but is " +
                  approval +
                  ", not approved, so the node is added; that record is stale for a node that "
                  "runs a configuration; hint: kubectl annotate talosmachine prod-old -n "
                  "ichor-system ichor.maesh.dev/allow-delete=true && kubectl delete talosmachine "
                  "prod-old -n ichor-system");
    }
    doc::ResourceList adopted;
    adopted.items.push_back(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    auto s = fx.run(adopted, {record("prod-w-2", "Approved")}, {}, true);
    REQUIRE_FALSE(s.error);
    CHECK(s.skipped == 1);
    CHECK(cli::exit_code(s) == 0);
    CHECK(codes(adopted).front() == "AlreadyAdopted");
    CHECK(item(adopted, "TalosMachine") == nullptr);
}

namespace {

std::string message_with(const doc::ResourceList& l, const std::string& code) {
    for (const auto& r : l.results) {
        if (r["tags"].value("ichor.maesh.dev/code", "") == code) {
            return r.value("message", "");
        }
    }
    return {};
}

} // namespace

TEST_CASE("a persistent configuration that is not the running one refuses the node",
          "[drift][plan]") {
    Fixture fx;
    doc::ResourceList list;
    Value a = fx.inspection("10.0.0.21", "prod-w-2", "w-1.13");
    Value staged = a["status"]["config"];
    staged[0]["machine"]["sysctls"] = Value{{"vm.swappiness", "1"}};
    staged[0]["machine"]["token"] = "sha256:0000"; // a secret: named by its path, as a digest
    a["status"]["persistentConfig"] = staged;
    Value b = fx.inspection("10.0.0.22", "prod-w-3", "w-1.13");
    b["status"]["persistentConfig"] = b["status"]["config"]; // other bytes, the same facts
    list.items.push_back(a);
    list.items.push_back(b);
    auto s = fx.run(list);
    REQUIRE_FALSE(s.error);
    CHECK(s.done == 1);
    CHECK(s.stopped == 1);
    const std::string m = message_with(list, "StagedConfig");
    INFO(m);
    CHECK(m.starts_with("10.0.0.21: its persistent configuration differs from the one it runs"));
    CHECK(m.find("machine.sysctls.vm.swappiness") != std::string::npos);
    CHECK(m.find("machine.token") != std::string::npos);
    CHECK(m.find("sha256:0000") == std::string::npos);
    CHECK(m.find("hint: talosctl -n 10.0.0.21 reboot; or ") != std::string::npos);
    CHECK(m.find("apply-config --mode no-reboot") != std::string::npos);
    CHECK(item(list, "TalosMachine") != nullptr); // prod-w-3's
}

TEST_CASE("an install disk the node lacks refuses it, a link it lacks is a warning",
          "[drift][plan]") {
    Fixture fx;
    doc::ResourceList list;
    auto with_inventory = [](Value v) {
        v["status"]["disks"] = Value::array({Value{
            {"name", "sda"}, {"devPath", "/dev/sda"}, {"size", 1000}, {"transport", "virtio"}}});
        v["status"]["linkNames"] = Value::array({"lo", "eth0", "eth1"});
        return v;
    };
    Value a = with_inventory(fx.inspection("10.0.0.21", "prod-w-2", "w-1.13"));
    a["status"]["config"][0]["machine"]["install"]["disk"] = "/dev/vdz";
    Value b = with_inventory(fx.inspection("10.0.0.22", "prod-w-3", "w-1.13"));
    b["status"]["config"][0]["machine"]["network"]["interfaces"] = Value::array({Value{
        {"interface", "bond0"}, {"bond", Value{{"interfaces", Value::array({"eth1", "eth7"})}}}}});
    list.items.push_back(a);
    list.items.push_back(b);
    auto s = fx.run(list);
    REQUIRE_FALSE(s.error);
    CHECK(s.stopped >= 1);
    CHECK(message_with(list, "InstallDiskMissing")
              .starts_with("10.0.0.21: machine.install.disk /dev/vdz is not a disk of the node "
                           "(its disks: /dev/sda)"));
    const std::string w = message_with(list, "UnknownLink");
    CHECK(w.starts_with("10.0.0.22: machine.network.interfaces[0].bond.interfaces names link "
                        "\"eth7\""));
    for (const auto& r : list.results) {
        if (r["tags"].value("ichor.maesh.dev/code", "") == "UnknownLink") {
            CHECK(r["severity"] == "warning");
        }
    }
}
