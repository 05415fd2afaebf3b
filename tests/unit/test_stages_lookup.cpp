// The whole-cluster stages' indexes (common/stages/lookup.h): each gives the first match in the
// items' order, as the scans they replace did.
#include "common/doc/vocabulary.h"
#include "common/stages/lookup.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ichor;
using doc::Value;

namespace {

Value kube_node(const std::string& name, const std::string& internal_ip) {
    Value n = Value::object();
    n["kind"] = "Node";
    n["metadata"]["name"] = name;
    n["status"]["addresses"] =
        Value::array({Value{{"type", "Hostname"}, {"address", name}},
                      Value{{"type", "InternalIP"}, {"address", internal_ip}}});
    return n;
}

Value inspection(const std::string& address, std::optional<int> port) {
    Value v = Value::object();
    v["apiVersion"] = std::string(doc::k_adopt_api);
    v["kind"] = "Inspection";
    v["metadata"]["name"] = address;
    v["spec"]["address"] = address;
    if (port) {
        v["spec"]["port"] = *port;
    }
    return v;
}

} // namespace

TEST_CASE("KubeNodeIndex finds a node's Node by name first, then by InternalIP",
          "[stages][lookup]") {
    std::vector<Value> nodes{kube_node("w-1", "10.0.0.2"), kube_node("w-2", "10.0.0.3"),
                             kube_node("w-1", "10.0.0.9"), kube_node("other", "10.0.0.3")};
    nodes.push_back(Value{{"kind", "Node"}, {"metadata", Value{{"name", "bare"}}}});
    const stages::KubeNodeIndex index(nodes);
    CHECK(index.find("w-1", "10.0.0.3") == &nodes[0]);     // the name wins, the first of two
    CHECK(index.find("renamed", "10.0.0.3") == &nodes[1]); // the first Node of that InternalIP
    CHECK(index.find("renamed", "w-2") == nullptr);        // a Hostname address is not an IP
    CHECK(index.find("bare", "") == &nodes[4]);            // no status.addresses
    CHECK(index.find("gone", "10.0.0.99") == nullptr);
    const std::vector<Value> none;
    CHECK(stages::KubeNodeIndex(none).find("w-1", "10.0.0.2") == nullptr);
}

TEST_CASE("KubeNodeIndex on a thousand Nodes matches each by name and by address",
          "[stages][lookup]") {
    std::vector<Value> nodes;
    for (int i = 0; i < 1000; ++i) {
        nodes.push_back(kube_node("n-" + std::to_string(i), "10.1." + std::to_string(i / 250) +
                                                                "." + std::to_string(i % 250)));
    }
    const stages::KubeNodeIndex index(nodes);
    for (int i = 0; i < 1000; i += 37) {
        CHECK(index.find("n-" + std::to_string(i), "") == &nodes[i]);
        CHECK(index.find("x", "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)) ==
              &nodes[i]);
    }
}

TEST_CASE("InspectionIndex finds an Inspection by its address, with or without its port",
          "[stages][lookup]") {
    doc::ResourceList list;
    list.items.push_back(Value{{"kind", "TalosMachine"}, {"spec", Value{{"address", "10.0.0.1"}}}});
    list.items.push_back(inspection("10.0.0.1", 50000));
    list.items.push_back(inspection("10.0.0.2", 50001));
    list.items.push_back(inspection("10.0.0.3", std::nullopt)); // the default port
    list.items.push_back(inspection("10.0.0.1", 50000));        // a second one: the first wins
    const stages::InspectionIndex index(list);
    CHECK(index.find("10.0.0.1") == &list.items[1]);
    CHECK(index.find("10.0.0.1:50000") == &list.items[1]);
    CHECK(index.find("10.0.0.2:50001") == &list.items[2]);
    CHECK(index.find("10.0.0.2:50000") == nullptr);
    CHECK(index.find("10.0.0.3:50000") == &list.items[3]);
    CHECK(index.find("10.0.0.9") == nullptr);
}
