// The document model of the suite: one ordered JSON tree (nlohmann's ordered_json, its mapping
// grown as ordered_map.h says) for every document, whether it came in as YAML or JSON. Keys keep
// their input order so that output is stable and diffs stay small.
//
// Scalars read from YAML resolve by the YAML 1.2 core schema, narrowed so that nothing changes
// meaning on the way through (docs/design.md, "Scalars"): null, booleans (true/false in its three
// spellings), and numbers only when the text is canonical (an integer with no sign and no leading
// zero that fits 64 bits, a decimal fraction whose shortest form is the same text). Everything
// else, among them `on`, `yes`, `0755`, `1e3`, `0x1f` and integers past 64 bits, stays the string
// it was written as, and the emitter quotes such a string so that no YAML 1.1 or 1.2 reader takes
// it for something else.
#pragma once

#include "common/doc/limits.h"
#include "common/doc/ordered_map.h"
#include "common/util/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ichor::doc {

// nlohmann::ordered_json but for the mapping's growth (ordered_map.h).
using Value = nlohmann::basic_json<ordered_map>;

enum class Format { Yaml, Json };

// Parses one or more documents. JSON when the first non-blank character is '{' or '['
// (one value, or several separated by white space), else a YAML stream ("---" separated).
// Empty documents are dropped. Errors are Usage errors naming `source`, the line and the column.
// `limits` (limits.h) bound the input: max_stream_bytes, depth, values and aliasing.
Result<std::vector<Value>> parse_documents(std::string_view text, std::string_view source,
                                           const Limits& limits = k_limits);

// Parses exactly one YAML or JSON document; an empty text gives null. The input may be at most
// limits.max_document_bytes.
Result<Value> parse_one(std::string_view text, std::string_view source,
                        const Limits& limits = k_limits);

// Emits one YAML document (no leading "---"), block style, ending with a newline.
std::string to_yaml(const Value& v);
// Emits documents separated by "---" lines.
std::string to_yaml_stream(const std::vector<Value>& docs);
// Emits JSON, two-space indented, ending with a newline.
std::string to_json(const Value& v);

// How a YAML plain scalar resolves (exposed for tests).
Value resolve_plain_scalar(std::string_view text);
// True when a string must be quoted to stay a string for any YAML reader.
bool needs_quotes(std::string_view s);

// Helpers for reading paths: get(v, "a.b.c") follows object keys only; returns nullptr when any
// step is missing or not an object.
const Value* find_path(const Value& v, std::string_view dotted);
std::string get_string(const Value& v, std::string_view dotted, std::string fallback = {});

} // namespace ichor::doc
