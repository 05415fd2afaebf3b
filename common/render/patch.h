// Talos configuration patches applied to a machine configuration held as documents: strategic
// merge (multi-document, with `$patch: delete`) and JSON 6902 (only where Talos accepts it: a
// configuration of one document). The semantics follow Talos's configpatcher and config/merge
// (machinery v1.14.1, also checked against v1.13.9's test cases: tests/configpatcher);
// docs/render.md lists where this schema-less version differs. Pure.
#pragma once

#include "common/doc/value.h"
#include "common/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace ichor::render {

// A `$patch: delete` found in a strategic-merge patch. `path` is empty for a whole document;
// `key`/`value` select the element of a list (the first `key: value` of the list item).
struct DeleteSelector {
    std::string api_version; // "" for the legacy v1alpha1 document
    std::string kind;        // "v1alpha1" for the legacy document
    std::string name;
    std::vector<std::string> path;
    std::string key;
    std::string value;
};

struct Patch {
    enum class Kind { StrategicMerge, Json6902 };
    Kind kind = Kind::StrategicMerge;
    // Strategic merge, in patch order: a document to merge (`documents[i]`) or a delete
    // (`deletes[i]`); the deletes of a patch document come before the document itself, as in
    // Talos's loader.
    struct Step {
        bool is_delete = false;
        doc::Value document;
        DeleteSelector selector;
    };
    std::vector<Step> steps;
    // JSON 6902: the operations.
    doc::Value operations = doc::Value::array();
};

// Parses a patch text: a YAML or JSON list of operations is JSON 6902, anything else a
// multi-document strategic-merge patch; its documents apply in order, and one identity may come
// more than once. Malformed YAML, a document that is not a mapping or a misplaced `$patch: delete`
// is a Findings error (code PatchDoesNotApply) whose message starts with `source`.
Result<Patch> parse_patch(std::string_view text, std::string_view source);

// Applies the patch to the configuration documents in place. A value of the wrong type at a path
// (a list where the configuration has a mapping), a delete of a missing path, or a JSON 6902
// patch on a multi-document configuration is a Findings error (code PatchDoesNotApply) naming the
// path; `documents` is then unspecified. A delete of a document the configuration does not have
// is skipped, as Talos does.
Status apply_patch(std::vector<doc::Value>& documents, const Patch& patch);

// parse_patch then apply_patch.
Status apply_patch_text(std::vector<doc::Value>& documents, std::string_view text,
                        std::string_view source);

// The identity of a configuration document: "v1alpha1" for the legacy one, else
// "apiVersion/kind[/name]".
std::string document_id(const doc::Value& document);

} // namespace ichor::render
