// The document kinds Talos's configuration registry knows, by the first Talos minor that loads
// them (machinery's config/types: v1.12.4, v1.13.9 and v1.14.1 registries), and whether a kind is
// named (several documents of the kind, told apart by `name`, merged by name by Talos's
// configpatcher). Data, not code: tests/unit/test_machineconfig_kinds.cpp holds it against the
// registries in the Go module cache when they are there. Pure.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace ichor::machineconfig {

struct Kind {
    std::string_view kind;
    bool named = false;
    int since_minor = 12; // Talos 1.<since_minor> is the first that loads it
};

// Every kind but v1alpha1, sorted by name.
const std::vector<Kind>& kinds();

// The kind, or nullopt for a kind no Talos this suite knows registers.
std::optional<Kind> find_kind(std::string_view kind);

// Whether Talos 1.<minor> loads a document of this kind. A minor above the newest known one
// knows every kind listed; below 1.12, none.
bool known_at(std::string_view kind, int minor);

} // namespace ichor::machineconfig
