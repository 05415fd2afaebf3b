// Lookups the whole-cluster stages make once per node, indexed once per stage. Pure.
//
// A lookup that scanned every item for every node was quadratic: on 1,000 nodes the plan's
// match of each machine to its node and the node check's search for each machine's Inspection
// each made a million comparisons of fields found by path (issue 22, "a thousand nodes"). Each
// index gives what the scan it replaces gave, the first match in the items' order.
#pragma once

#include "common/doc/resource_list.h"
#include "common/doc/value.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ichor::stages {

// The Kubernetes Node of a Talos node: the first Node named after its hostname, else the first
// whose status.addresses has an InternalIP equal to its address. The Nodes must outlive it.
class KubeNodeIndex {
  public:
    explicit KubeNodeIndex(const std::vector<doc::Value>& kube_nodes);
    [[nodiscard]] const doc::Value* find(const std::string& hostname,
                                         const std::string& address) const;

  private:
    std::unordered_map<std::string, const doc::Value*> m_by_name;
    std::unordered_map<std::string, const doc::Value*> m_by_internal_ip;
};

// The first Inspection of a list whose spec node is `address`, or is it with the Inspection's
// port (default 50000) as "node:port". Items of other kinds are not indexed. The list must
// outlive it and not change.
class InspectionIndex {
  public:
    explicit InspectionIndex(const doc::ResourceList& list);
    [[nodiscard]] const doc::Value* find(const std::string& address) const;

  private:
    std::unordered_map<std::string, const doc::Value*> m_by_address;
};

// The status of the Kubernetes object's condition `type` ("True", "False", "Unknown"), "" when it
// has none: a Node's Ready, a TalosMachine's Ready and AdoptionHeld.
std::string condition_status(const doc::Value& obj, std::string_view type);

} // namespace ichor::stages
