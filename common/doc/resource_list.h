// The stream between the tools: a KRM-style ResourceList (config.kubernetes.io/v1) with items and
// results. A tool appends results and never drops what came before; items it does not own pass
// through untouched.
#pragma once

#include "common/doc/value.h"
#include "common/doc/vocabulary.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::doc {

// Ichor's names (vocabulary.h) that the stream's readers and writers use most.
using vocab::k_adopt_api;
using vocab::k_ichor_api;
using vocab::k_tag_class;
using vocab::k_tag_code;
using vocab::k_tag_node;

enum class Severity { Error, Warning, Info };

struct ResourceList {
    Value items = Value::array();
    Value results = Value::array();
    // The invocation's configuration an orchestrator sent (kpt fn eval: a ConfigMap whose data
    // are the flags, docs/stream.md "Under kpt"); null when none came. Never an item.
    Value function_config;
    // The stages that ran over this list in this process (run_stage adds each), so that a tool
    // echoes on stderr only the findings it made, not those it passes on (cli/output.h). Never
    // read or written: a list read from a stream starts with none.
    std::vector<std::string> stages_run;

    // Appends a result. `code` goes to tags; `ref` (optional) is the item it is about.
    void add_result(Severity severity, std::string message, std::string_view code,
                    const Value* ref = nullptr, Value extra_tags = Value::object());
    // True when any result has severity error.
    [[nodiscard]] bool has_errors() const;
    // The envelope as one document (functionConfig, when one came, written back). The second
    // moves the items into it instead of copying them: over 256 nodes the copy and its freeing
    // were a twentieth of inspect's CPU through one endpoint (bench/HISTORY.md, "write_list").
    [[nodiscard]] Value to_value() const&;
    [[nodiscard]] Value to_value() &&;
};

// Reads a ResourceList (its functionConfig kept apart from the items), a v1 List, or a stream of
// documents (each an item). An empty input is an empty list. Anything else (a scalar document, an
// item without apiVersion/kind) is a Usage error naming the source.
Result<ResourceList> read_resource_list(std::string_view text, std::string_view source);

// A resourceRef for an item: {apiVersion, kind, name, namespace?}.
Value ref_of(const Value& item);

std::string_view severity_name(Severity s);

} // namespace ichor::doc
