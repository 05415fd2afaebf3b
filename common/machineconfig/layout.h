// The document layout of a Talos machine configuration as one table: which field of which typed
// document holds which v1alpha1 field. Talos v1.14 moves most of the v1alpha1 document into typed
// documents (DiscoveryIdentityConfig, KubeClusterConfig, ...); from contract 1.12 on the registry
// documents (RegistryMirrorConfig, ...) hold machine.registries. This table is the one place that
// knows the mapping (docs/render.md, "The document layout"): the 1.14 render reads it from
// v1alpha1 to documents, drift's normalization from documents to v1alpha1, and the facts, the
// bundle's recovery, the patch engine and drift's capture look fields up in it. Pure.
//
// Paths are dotted keys. In a field's v1alpha1 path `{name}` stands for the document's name (one
// document per key of that map) and `[]` for one list item per document.
#pragma once

#include "common/doc/value.h"
#include "common/machineconfig/codec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::machineconfig::layout {

struct Field {
    std::string_view field;         // in the document; empty: the document's body (its fields but
                                    // apiVersion, kind, name and the document's other fields)
    std::string_view v1alpha1;      // in the v1alpha1 document
    Codec codec = Codec::Same;      // codec.h
    std::string_view fallback = {}; // what a missing value means on either side (a YAML scalar)
};

// A v1alpha1 fact, as a path and a YAML scalar.
struct Fact {
    std::string_view path;
    std::string_view value;
};

enum class Since { V1_12, V1_14 }; // the first contract at which Talos writes the document

struct Document {
    std::string_view kind;
    std::vector<Field> fields;
    Since since = Since::V1_14;
    std::string_view name = {};     // the name the document is written with, when it has one
    std::string_view due = {};      // v1alpha1 path whose presence makes the document due; empty:
                                    // any of its fields (or `implies`, when it has no fields)
    std::string_view moves = {};    // a v1alpha1 subtree that leaves with it, beside its fields
    Fact implies = {};              // the fact the document's presence means; written only then
    std::string_view unless = {};   // a v1alpha1 boolean that, true, means no document (the
                                    // fields still leave v1alpha1)
    std::string_view stays_if = {}; // a v1alpha1 path whose presence keeps it all in v1alpha1
};

// The table, in the order the documents are written.
const std::vector<Document>& documents();

// The one document of the table of that kind, or nullptr (none, or several rows: the two secrets
// of KubeEtcdEncryptionConfig).
const Document* only_document(std::string_view kind);
// Whether a document is several plain fields and no subtree of its own (KubeClusterConfig: the
// cluster's name and endpoint): each field's v1alpha1 path is its own home, as a layout move
// (drift::layout_moves) and as the node check names the document added whole.
bool plain_fields(const Document& d);

// One field of the table with its document.
struct Row {
    const Document* document;
    const Field* field;
};
// Every field of the table, in table order.
const std::vector<Row>& rows();

// v1alpha1 -> documents: moves the fields of the documents `pick` accepts out of the v1alpha1
// document (a tree with `machine` and `cluster`) into typed documents (apiVersion v1alpha1, kind,
// name), returned in table order; emptied mappings left behind are removed, the top-level
// sections never. A document without a field to hold gives nothing.
using Pick = bool (*)(const Document&);
std::vector<doc::Value> to_documents(doc::Value& v1alpha1, Pick pick);

// documents -> v1alpha1: places the fields of one typed document at their v1alpha1 paths in
// `v1alpha1`, merged into what is there (a mirror replaces its entry). False, and nothing
// changed, when the table has no row for the document's kind.
bool to_v1alpha1(doc::Value& v1alpha1, const doc::Value& document);

// The row whose v1alpha1 path is exactly `v1alpha1` (no `{name}` or `[]`), or nullopt.
std::optional<Row> home(std::string_view v1alpha1);
// The v1alpha1 path of a document's field ("KubeNetworkConfig", "podSubnets"), or empty when no
// row names it.
std::string v1alpha1_of(std::string_view kind, std::string_view field);

// Where a v1alpha1 path (as keys) lies in a named document: the row whose v1alpha1 path is the
// path or a prefix of it, and the document's name, or nullopt.
struct Named {
    Row row;
    std::string name;
};
std::optional<Named> named_home(const std::vector<std::string>& v1alpha1);
// A row's v1alpha1 path as keys, `{name}` replaced by `name`.
std::vector<std::string> keys_of(const Field& field, const std::string& name);
// A row's v1alpha1 path as keys, `{name}` left in place, for a Field of rows(): split once for the
// process (drift asks it of every row for every captured path of every machine: bench/HISTORY.md,
// "the realistic plan's CPU").
const std::vector<std::string>& row_keys(const Field& field);

// The field that holds a v1alpha1 path in the first typed document of its kind that has it, as
// stored, or nullptr.
const doc::Value* stored(const std::vector<doc::Value>& documents, std::string_view v1alpha1);
// The same, read back to v1alpha1 (see Codec), or null.
doc::Value read(const std::vector<doc::Value>& documents, std::string_view v1alpha1);

} // namespace ichor::machineconfig::layout
