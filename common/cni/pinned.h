// Ichor's pinned Cilium, as data: deploy/cilium/ichor-cilium.yaml, compiled into the tools at build
// time (docs/cni.md). The chart version, the values Ichor owns with the reason for each, Ichor's
// defaults, and the table of values paths the takeover's preflight compares with the live objects
// (each with the live field it sets at that chart version and the chart template that renders it).
// Pure.
#pragma once

#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::cni {

// A value Ichor sets on every Cilium it runs; a user's values may not set it.
struct OwnedValue {
    std::string path; // dotted values path, e.g. "ipam.mode"
    doc::Value value;
    std::string reason;
};

// Where a compared value shows in the live objects (the `live` map of the data file).
enum class LiveKind {
    Config,     // ConfigMap cilium-config, data[key]
    Env,        // DaemonSet cilium, container `container`, env `name`
    Deployment, // whether Deployment `name` exists
    Init,       // whether the agent DaemonSet has init container `name`
    Replicas,   // Deployment `name` spec.replicas
    Resources,  // agent DaemonSet, container `container`, resources
    Caps,       // agent DaemonSet, (init) container `container`, securityContext.capabilities.add
};

// How a value is written into a ConfigMap key or an env variable (always a string there).
enum class Format { String, StringIfSet, Bool, BoolIfTrue, BoolIfSet, IntIfNonzero };

struct Compared {
    std::string path; // dotted values path
    doc::Value chart_default;
    std::string template_file; // the chart template that renders the field
    LiveKind kind = LiveKind::Config;
    std::string key;       // Config: the data key
    std::string container; // Env, Resources, Caps
    std::string name;      // Env: the variable; Deployment, Init, Replicas: the object
    std::vector<std::string> requires_true; // Deployment: paths that must also be true
    Format format = Format::String;
    doc::Value empty; // String, Bool: what an empty or null value renders as (null: itself)

    // The live field in words, e.g. "ConfigMap cilium-config data.ipam".
    [[nodiscard]] std::string field() const;
};

struct Pinned {
    std::string chart_name;
    std::string chart_version;
    std::string namespace_name; // where Ichor runs Cilium
    std::vector<OwnedValue> owned;
    doc::Value defaults = doc::Value::object(); // Ichor's defaults, a values map
    std::vector<Compared> compared;

    // The owned value at exactly `path`, or nullptr.
    [[nodiscard]] const OwnedValue* owned_at(std::string_view path) const;
    // The table row for exactly `path`, or nullptr.
    [[nodiscard]] const Compared* compared_at(std::string_view path) const;
};

// Reads the data file's text. A malformed file (a missing chart version, an owned entry without a
// reason, a row with an unknown kind or format) is an Internal error naming `source` and the row:
// the file ships with the tools, so a bad one is a bug.
Result<Pinned> parse_pinned(std::string_view text, std::string_view source);

// The data file compiled into the tools, parsed once. The build's own file parses (a unit test
// says so), so the reference is always valid.
const Pinned& pinned();
// The compiled-in text (for tests and docs).
std::string_view pinned_text();

} // namespace ichor::cni
