// Writing a tool's document: YAML, JSON or a table, optionally through --jq; reading its input.
#pragma once

#include "common/cli/flags.h"
#include "common/cli/streams.h"
#include "common/doc/resource_list.h"

#include <functional>
#include <string>
#include <vector>

namespace ichor::cli {

// Renders the items of a list for people (without the results; write_list adds those).
using TableFn = std::function<std::string(const doc::ResourceList&, bool color)>;

// Writes the list in the chosen format. With --jq the expression runs over the document the format
// prints (the envelope, or with -o objects the List) and its outputs are printed. A table prints
// the items, then one line per result. -o objects prints objects_list(list) as YAML; the results
// it leaves out are not lost: each error result is printed on s.err as a warning, and a count of
// the warning results (info results are not mentioned). Unless stdout is a terminal (or -o
// objects), each error and warning result of a stage that ran over the list in this process
// (list.stages_run) is also printed on s.err, one line each (report_finding; warnings not under
// -q): the results an earlier tool of a pipe made, that tool printed.
Status write_list(Streams& s, const OutputOptions& o, const doc::ResourceList& list,
                  const TableFn& table);
// The same, for a list the caller is done with: its items are moved into what is printed instead
// of copied, and the list is left empty.
Status write_list(Streams& s, const OutputOptions& o, doc::ResourceList&& list,
                  const TableFn& table);

// The objects the list would create or change, for kubectl diff -f and kubectl apply -f: a
// `v1` List of the items of the Ichor API (ichor.maesh.dev/v1alpha1), in order, without the
// orchestrator's annotations (config.kubernetes.io/..., internal.config.kubernetes.io/...,
// config.k8s.io/...). The suite's own Inspections and the results are not objects of a cluster.
doc::Value objects_list(const doc::ResourceList& list);

// The results as table lines: "SEVERITY  CODE  MESSAGE".
std::string format_results(const doc::ResourceList& list, bool color);

// Reads the input list: from -f FILE, '-' or stdin. Refuses to wait on a terminal: with stdin a
// terminal and no -f, a Usage error saying what to pipe in.
Result<doc::ResourceList> read_input(Streams& s, const InputOptions& in, std::string_view verb,
                                     std::string_view what);

} // namespace ichor::cli
