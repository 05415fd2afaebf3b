// The one shape of a stage (kpt's go/fn, llvm-objcopy's executeObjcopy): every stage is
//
//     Outcome NAME(doc::ResourceList& list, const NAMEOptions& options);
//
// It takes the envelope and its configuration (which carries everything the stage talks to: a
// Kubernetes client, a bundle, a node, a terminal), drops what an earlier run of the same stage
// left in the list (its results and the items it owns), changes or appends the items it owns,
// passes every other item through untouched, appends its results, and returns an Outcome. One
// function (category) turns an Outcome into an error category; common/cli turns that into the
// exit code. docs/design.md, "One stage through the code", follows a stage file by file.
#pragma once

#include "common/doc/resource_list.h"
#include "common/doc/vocabulary.h"
#include "common/util/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::stages {

// What a stage did, counted in its units (nodes read, machines planned, written or released).
struct Outcome {
    int done = 0;        // units finished
    int stopped = 0;     // units refused, blocked or failed; each is named in a result
    int unreachable = 0; // of the stopped, those that could not be reached at all
    int skipped = 0;     // units an earlier run already did, left as they are
    // The stage could not run on (a configuration, credential or cluster-API error, a bug):
    // nothing past what the results name was done. Reported once, by the tool.
    std::optional<Error> error;
};

inline Outcome failed(Error e) {
    Outcome o;
    o.error = std::move(e);
    return o;
}

// The category of an outcome, or none when nothing blocks: the error's kind; else, when some
// units stopped, Partial if others were done, Unreachable if every stopped unit was unreachable,
// Findings otherwise.
std::optional<ErrorKind> category(const Outcome& outcome);

// The tag that names the stage that wrote a result.
inline constexpr std::string_view k_tag_stage = vocab::k_tag_stage;

// Runs `body` as stage `name` over `list`: first drops the results an earlier run of `name` left
// (so a stage run again over its own output replaces its results instead of repeating them),
// then tags every result the body added with `name`, whether the body appended to the list or
// replaced it, and records `name` in list.stages_run (with the names recorded before the body).
template <class Body>
Outcome run_stage(std::string_view name, doc::ResourceList& list, Body&& body);

// Adds `result` (a result about node `node`) as the one finding of its cause: the results that
// stage `from` wrote about the same node, its errors and any result of the same code, are folded
// into it. It takes the place of the first of them, the others go, and its tag
// ichor.maesh.dev/folded names what it replaced ("inspect: UnknownAuthority"). Without such
// results it is appended.
void add_folded(doc::ResourceList& list, doc::Value result, const std::string& node,
                std::string_view from);

// Removes the results tagged with stage `name`; the others keep their order.
void drop_results_of(doc::ResourceList& list, std::string_view name);
// Marks the results that carry no stage tag (they came in from elsewhere), so that tag_new can
// tell them from the ones a stage adds.
void mark_results(doc::ResourceList& list);
// Tags every result that has no stage tag with `name`, and removes the marks.
void tag_new(doc::ResourceList& list, std::string_view name);
// Adds the names to list.stages_run that it does not hold yet. A tool that carries the results of
// one list into another carries their stages with them.
void note_stages_run(doc::ResourceList& list, const std::vector<std::string>& names);

template <class Body>
Outcome run_stage(std::string_view name, doc::ResourceList& list, Body&& body) {
    drop_results_of(list, name);
    mark_results(list);
    std::vector<std::string> ran = list.stages_run;
    Outcome out = body();
    tag_new(list, name);
    note_stages_run(list, ran);
    note_stages_run(list, {std::string(name)});
    return out;
}

} // namespace ichor::stages
