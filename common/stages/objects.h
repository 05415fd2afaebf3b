// The Ichor objects (TalosClusters, TalosMachines, TalosConfigPatches) as the stages read and write
// them: one small interface, so that a stage that writes can be tested with a fake
// (tests/unit/test_stages_hold.cpp), as reclaim's registry is. objects_over gives the real one.
#pragma once

#include "common/doc/value.h"
#include "common/kube/client.h"
#include "common/util/result.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages {

class IchorObjects {
  public:
    virtual ~IchorObjects() = default;
    // The namespace of the run (-n, else ichor-system): where objects are read, patched, removed.
    [[nodiscard]] virtual const std::string& ns() const = 0;
    // The items of `plural` ("talosmachines") in ns(), with a label selector when not empty.
    // An error names the plural and the namespace.
    virtual Result<std::vector<doc::Value>> list(std::string_view plural,
                                                 const std::string& label_selector = {}) = 0;
    virtual Result<doc::Value> get(std::string_view plural, const std::string& ns,
                                   const std::string& name) = 0;
    // Creates `obj` in `ns`; an object that exists is the error code "AlreadyExists".
    virtual Result<doc::Value> create(std::string_view plural, const std::string& ns,
                                      const doc::Value& obj) = 0;
    // A JSON merge patch (RFC 7386) of the object NAME in ns().
    virtual Result<doc::Value> merge_patch(std::string_view plural, const std::string& name,
                                           const doc::Value& patch) = 0;
    // Deletes the object NAME of ns(), only that incarnation when `uid` is given.
    virtual Result<doc::Value> remove(std::string_view plural, const std::string& name,
                                      const std::string& uid) = 0;
};

// The real objects, over `kube` in its namespace (the client must outlive them).
std::unique_ptr<IchorObjects> objects_over(kube::Client& kube);

// Makes objects for another thread, each over its own clone of `kube` (kube::Client::clone: its
// own connection): hold apply's concurrent creates. Call it on the thread that uses `kube`, which
// must outlive the factory.
using ObjectsFactory = std::function<std::unique_ptr<IchorObjects>()>;
ObjectsFactory writers_over(kube::Client& kube);

} // namespace ichor::stages
