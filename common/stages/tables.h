// Tables for people (-o table) of the suite's own items. Pure.
#pragma once

#include "common/doc/resource_list.h"

#include <string>

namespace ichor::stages {

// Inspections: ADDRESS MODE TLS VERSION ROLE CLUSTER HOSTNAME UUID ETCD, and TRUST once
// trustcheck has run. Items of other kinds are counted in a last line.
std::string inspection_table(const doc::ResourceList& list, bool color);

} // namespace ichor::stages
