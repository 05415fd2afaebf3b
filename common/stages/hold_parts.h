// The pieces the rooms of the hold stages share (hold.cpp, hold_apply.cpp, hold_release.cpp).
// Private to common/stages.
#pragma once

#include "common/doc/resource_list.h"
#include "common/stages/hold.h"

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ichor::stages::hold_parts {

using doc::Value;

// The bundle Secret a whole-cluster plan carries: metadata only, its data comes from the bundle.
bool is_bundle_secret(const Value& item);
bool is_created_kind(const Value& item);
std::string plural(const Value& item);
std::string name_of(const Value& v);
Value without_suite_annotations(Value item);
bool is_class(const Value& r, std::string_view cls);

// The nodes a plan refused or blocked (hold.cpp).
struct Stopped {
    std::set<std::string> nodes;
    int whole = 0;
};
Stopped stopped_nodes(const doc::ResourceList& plan);

std::string annotation(const Value& obj, std::string_view key); // "" when it has none
bool has_annotation(const Value& obj, std::string_view key);
void step(Reporter* report, std::string_view line); // a step for the user, when there is one
// The cluster's TalosMachines and the namespace's TalosConfigPatches: what release and abort
// start from.
Result<std::pair<std::vector<Value>, std::vector<Value>>>
cluster_objects(IchorObjects& objects, const std::string& cluster);

} // namespace ichor::stages::hold_parts
