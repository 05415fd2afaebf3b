#include "common/stages/inspect.h"

#include "common/doc/objects.h"
#include "common/inspection/engine.h"
#include "common/talos/errors.h"

#include <set>

namespace ichor::stages {

using doc::Value;
using objects::MachineView;

namespace {

inspection::Settings settings_of(const InspectOptions& o) {
    inspection::Settings s;
    s.context = o.context;
    s.talosconfig_path = o.talosconfig_path;
    s.insecure = o.insecure;
    s.fingerprints = o.fingerprints;
    s.call_timeout_ms = o.call_timeout_ms;
    s.concurrency = o.concurrency;
    s.endpoint = o.endpoint;
    return s;
}

std::vector<inspection::NodeReport> read_nodes(const std::vector<talos::Address>& addresses,
                                               const InspectOptions& o) {
    return inspection::read_nodes(addresses, settings_of(o));
}

} // namespace

Value inspect_node(const talos::Address& a, const InspectOptions& o, Value& results) {
    auto out = read_nodes({a}, o);
    for (auto& res : out.front().results) {
        results.push_back(std::move(res));
    }
    return std::move(out.front().item);
}

InspectOutcome inspect_nodes(const InspectOptions& o) {
    auto ones = read_nodes(o.addresses, o);
    InspectOutcome out;
    out.nodes = static_cast<int>(ones.size());
    for (auto& one : ones) {
        bool failed = false;
        bool unreachable = false;
        for (auto& res : one.results) {
            if (res.value("severity", "") == "error") {
                failed = true;
                std::string code = res["tags"].value(std::string(doc::k_tag_code), "");
                unreachable = talos::node_gone(code);
            }
            out.list.results.push_back(std::move(res));
        }
        out.failed += failed ? 1 : 0;
        out.unreachable += unreachable ? 1 : 0;
        out.list.items.push_back(std::move(one.item));
    }
    return out;
}

Outcome inspect(doc::ResourceList& list, const InspectOptions& o) {
    return run_stage("inspect", list, [&] {
        InspectOutcome read = inspect_nodes(o);
        std::set<std::string> addresses;
        for (const auto& item : read.list.items) {
            addresses.insert(MachineView(item).address());
        }
        doc::Value kept = doc::Value::array();
        for (auto& item : list.items) {
            bool replaced = item.value("kind", "") == "Inspection" &&
                            item.value("apiVersion", "") == doc::k_adopt_api &&
                            addresses.contains(MachineView(item).address());
            if (!replaced) {
                kept.push_back(std::move(item));
            }
        }
        list.items = std::move(kept);
        for (auto& item : read.list.items) {
            list.items.push_back(std::move(item));
        }
        for (auto& r : read.list.results) {
            list.results.push_back(std::move(r));
        }
        Outcome out;
        out.done = read.nodes - read.failed;
        out.stopped = read.failed;
        out.unreachable = read.unreachable;
        return out;
    });
}

} // namespace ichor::stages
