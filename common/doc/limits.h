// The limits of the suite's readers of user input, in one place. Every YAML and JSON text a tool
// reads (the stream, kubeconfig, talosconfig, secrets bundle, patches, machine configurations)
// goes through parse_documents or parse_one (value.h), which enforce these limits while reading,
// so that a hostile input is refused in bounded time and memory: nothing is expanded first and
// counted afterwards. docs/design.md ("Limits of the readers") gives the reasons for the numbers.
//
// A refusal is an Error of kind Usage with code "InputLimit" whose message names the source, what
// was exceeded and the limit; readers of configuration files turn the kind into Config, as they do
// for any malformed file.
#pragma once

#include <cstddef>

namespace ichor::doc {

struct Limits {
    // One document read with parse_one (a kubeconfig, talosconfig, secrets bundle): the
    // apiserver's request body limit (MaxRequestBodyBytes, 3 MiB), so anything larger could not be
    // stored in the cluster anyway.
    std::size_t max_document_bytes = 3u << 20;
    // A stream read with parse_documents (the ResourceList between the tools, patches, machine
    // configurations): room for a few hundred machines' documents of apiserver size.
    std::size_t max_stream_bytes = 64u << 20;
    // Nesting of collections. Kubernetes objects and Talos configurations nest below 30; yaml-cpp's
    // own guard stops at 500 with a bare "bad file", and the suite's emitters and diff walk trees
    // recursively, so the limit stays well below both.
    std::size_t max_depth = 256;
    // Values (scalars and collections) decoded from all documents of one input, aliases expanded.
    // About 150 MB of documents in memory at the worst.
    std::size_t max_nodes = 2'000'000;
    // go-yaml's alias rule (decode.go allowedAliasRatio), which kubectl and the apiserver inherit:
    // once more than 100 aliased values and more than 1000 values in all have been decoded, the
    // share of values decoded through aliases may not pass 0.99 up to 400,000 values, falling
    // linearly to 0.10 at 4,000,000. An alias bomb is refused after some 400,000 values.
    std::size_t alias_min_aliased = 100;
    std::size_t alias_min_decoded = 1000;
};

// The limits every reader uses.
inline constexpr Limits k_limits{};

// The share of aliased values go-yaml allows after `decoded` values (Limits' alias rule).
double allowed_alias_ratio(std::size_t decoded);

} // namespace ichor::doc
