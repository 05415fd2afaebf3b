// The pieces of a whole-cluster plan shared by its rooms (plan_cluster.cpp): the cluster-wide
// checks and the TalosCluster built from the nodes (plan_cluster_checks.cpp), and the layering of
// the machines' captures (plan_layers.cpp). Private to common/stages.
#pragma once

#include "common/doc/resource_list.h"
#include "common/drift/drift.h"
#include "common/render/render.h"
#include "common/stages/plan_cluster.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages::cluster_plan {

using doc::Value;

// One node of the cluster, as the plan sees it.
struct Node {
    const Value* item = nullptr;
    std::string address; // as given
    std::string hostname;
    std::string role; // controlplane or worker
    Value facts;      // drift::normalize of its configuration
};

struct Refusals {
    doc::ResourceList& list;
    int count = 0;
    void add(const std::string& message, std::string_view code, const std::string& hint,
             const Value* ref = nullptr) {
        Value tags = Value::object();
        if (!hint.empty()) {
            tags[std::string(vocab::k_tag_hint)] = hint;
        }
        list.add_result(doc::Severity::Error, message + (hint.empty() ? "" : "; hint: " + hint),
                        code, ref, tags);
        ++count;
    }
};

const Value* at(const Value& v, std::string_view dotted);
std::string text_at(const Value& v, std::string_view dotted);
std::string addresses_of(const std::vector<const Node*>& nodes);

// The nodes of the Inspections in the list; false when there is none. A node that cannot be read
// is refused.
bool read_nodes(doc::ResourceList& list, std::vector<Node>& nodes, Refusals& refuse);
void check_identity(const std::vector<Node>& nodes, Refusals& refuse);
void check_etcd(const std::vector<Node>& nodes, Refusals& refuse);
void check_kubernetes(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                      Refusals& refuse);
void check_members(const std::vector<Node>& nodes, const ClusterPlanOptions& o,
                   doc::ResourceList& list, Refusals& refuse);
void check_cni(const ClusterCni& c, doc::ResourceList& list, Refusals& refuse);
bool valid_name(const std::string& s);
Value make_cluster(const std::string& name, const std::vector<Node>& nodes, const Node& cp,
                   const ClusterPlanOptions& o);
Value make_secret(const std::string& name, const ClusterPlanOptions& o);
std::string probe_contract(const Value& cluster_obj, const Node& cp, const ClusterPlanOptions& o);

// ---- Layers (plan_layers.cpp) ---------------------------------------------------------------

struct Planned {
    const Value* machine = nullptr; // the planned TalosMachine
    const Node* node = nullptr;
    render::Input input;
    const Value* live_facts = nullptr; // the node's (Node::facts), not a copy
    Value rendered_facts;
    std::vector<Value> rendered; // the documents, so that a capture goes where Talos holds it
    std::vector<drift::Change> class_a;
    std::set<std::string> others; // dotted paths of the class B (and consented) findings
    drift::Context ctx;           // the cluster's, with the node's Talos minor
};

drift::Context node_context(drift::Context ctx, const Node& n);

// The class A changes of every machine, placed where a person would write them: a change equal
// on every machine in the cluster layer, one equal on every machine of a role in that role's
// layer, the rest on the machine. A layer needs two machines or more to share a change.
struct Layering {
    std::vector<Value> patches;
    std::vector<Value> secrets;                  // the patches' credentials (credentials.h)
    std::vector<std::string> lines;              // what went where, for the plan's result
    std::map<std::string, std::string> where;    // machine + "\x1f" + dotted -> patch name
    std::map<std::string, std::string> layer_of; // patch name -> cluster, role or machine
    int cluster_patches = 0;
    int role_patches = 0;
    int machine_patches = 0;
};

Layering layer(const std::vector<Planned>& planned, const std::string& cluster,
               const std::string& ns);
void group_captures(doc::ResourceList& list, const std::vector<Planned>& planned,
                    const Layering& layers);
std::vector<std::string> verify(const std::vector<Planned>& planned,
                                const std::vector<Value>& patches);

} // namespace ichor::stages::cluster_plan
