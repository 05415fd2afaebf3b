#include "common/cli/output.h"

#include "common/cli/errors.h"
#include "common/doc/jq.h"
#include "common/doc/json_stream.h"
#include "common/doc/vocabulary.h"
#include "common/util/files.h"

#include <algorithm>
#include <iterator>
#include <ostream>
#include <sstream>
#include <utility>

namespace ichor::cli {

std::string format_results(const doc::ResourceList& list, bool color) {
    std::string out;
    for (const auto& r : list.results) {
        std::string sev = r.value("severity", "info");
        std::string code;
        if (r.contains("tags") && r["tags"].is_object()) {
            code = r["tags"].value(std::string(doc::k_tag_code), "");
        }
        std::string word = sev;
        std::transform(word.begin(), word.end(), word.begin(), ::toupper);
        if (color) {
            const char* c = sev == "error"     ? "\033[31m"
                            : sev == "warning" ? "\033[33m"
                                               : "\033[36m";
            word = std::string(c) + word + "\033[0m";
        }
        out += word + "  " + (code.empty() ? "" : code + "  ") + r.value("message", "") + "\n";
    }
    return out;
}

namespace {

// Annotations an orchestrator (kpt, kustomize) puts on the items it sends; not the object's own.
bool orchestrator_annotation(std::string_view key) {
    for (std::string_view prefix :
         {"config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/"}) {
        if (key.substr(0, prefix.size()) == prefix) {
            return true;
        }
    }
    return false;
}

doc::Value without_orchestrator_annotations(doc::Value item) {
    if (!item.contains("metadata") || !item["metadata"].is_object() ||
        !item["metadata"].contains("annotations") || !item["metadata"]["annotations"].is_object()) {
        return item;
    }
    doc::Value& annotations = item["metadata"]["annotations"];
    doc::Value kept = doc::Value::object();
    for (auto it = annotations.begin(); it != annotations.end(); ++it) {
        if (!orchestrator_annotation(it.key())) {
            kept[it.key()] = it.value();
        }
    }
    if (kept.empty()) {
        item["metadata"].erase("annotations");
    } else {
        annotations = std::move(kept);
    }
    return item;
}

// -o objects leaves the results out: the error results (what was refused or blocked, so absent
// from the List) are printed as warnings, the warning results counted.
void warn_results_left_out(Streams& s, const doc::ResourceList& list) {
    int warnings = 0;
    for (const auto& r : list.results) {
        const std::string severity = r.value("severity", "info");
        if (severity == "error") {
            report_warning(s, s.verb, r.value("message", ""));
        } else if (severity == "warning") {
            ++warnings;
        }
    }
    if (warnings > 0) {
        report_warning(s, s.verb,
                       "-o objects leaves out " + std::to_string(warnings) +
                           " warning result(s); -o yaml shows every result");
    }
}

// Under an orchestrator (the input carried a functionConfig), every item without a file gets the
// one kpt would give it, NAMESPACE/KIND_NAME.yaml: kpt fn eval, when a function fails, refuses an
// output with two such items ("resource at path \".\" and index \"\" already exists") instead of
// printing the function's results. kpt drops the annotation when it writes the files.
void place_new_items(doc::Value& items) {
    const std::string key = "config.kubernetes.io/path";
    for (auto& item : items) {
        if (!item.is_object() || !item.contains("metadata") || !item["metadata"].is_object()) {
            continue;
        }
        doc::Value& md = item["metadata"];
        if (md.contains("annotations") && md["annotations"].is_object() &&
            md["annotations"].contains(key)) {
            continue;
        }
        std::string kind = item.value("kind", "");
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        const std::string ns = md.value("namespace", "");
        md["annotations"][key] =
            (ns.empty() ? "" : ns + "/") + kind + "_" + md.value("name", "") + ".yaml";
    }
}

} // namespace

doc::Value objects_list(const doc::ResourceList& list) {
    doc::Value items = doc::Value::array();
    for (const auto& item : list.items) {
        if (item.is_object() && item.value("apiVersion", "") == doc::k_ichor_api) {
            items.push_back(without_orchestrator_annotations(item));
        }
    }
    doc::Value v = doc::Value::object();
    v["apiVersion"] = "v1";
    v["kind"] = "List";
    v["items"] = std::move(items);
    return v;
}

namespace {

// Prints the envelope as --jq, -o json or -o yaml ask.
Status write_envelope(Streams& s, const OutputOptions& o, const doc::Value& envelope) {
    if (!o.jq.empty()) {
        auto outs = doc::run_jq(o.jq, envelope);
        if (!outs) {
            return outs.error();
        }
        s.out << doc::format_jq_outputs(*outs);
    } else if (o.format == "json") {
        doc::write_json(s.out, envelope);
    } else {
        s.out << doc::to_yaml(envelope);
    }
    s.out.flush();
    return ok_status();
}

bool prints_envelope(const OutputOptions& o) {
    return o.format != "objects" && (!o.jq.empty() || o.format != "table");
}

bool ran_here(const doc::ResourceList& list, const doc::Value& result) {
    if (!result.contains("tags") || !result["tags"].is_object()) {
        return false;
    }
    const std::string stage = result["tags"].value(std::string(vocab::k_tag_stage), "");
    return std::find(list.stages_run.begin(), list.stages_run.end(), stage) !=
           list.stages_run.end();
}

// Stdout is a file or a pipe: each error and warning this process made is said on stderr too, so
// that a refusal redirected into plan.yaml still reaches the person (kubectl and talosctl put
// errors on stderr). The results an earlier tool of a pipe made were said by that tool. -o objects
// says its left-out results itself (warn_results_left_out).
void echo_findings(Streams& s, const OutputOptions& o, const doc::ResourceList& list) {
    if (s.out_tty || o.format == "objects") {
        return;
    }
    for (const auto& r : list.results) {
        if (r.is_object() && ran_here(list, r)) {
            report_finding(s, s.verb, r.value("severity", "info"), r.value("message", ""));
        }
    }
}

} // namespace

namespace {

Status write_list_once(Streams& s, const OutputOptions& o, const doc::ResourceList& list,
                       const TableFn& table) {
    if (prints_envelope(o)) {
        doc::Value envelope = list.to_value();
        if (!list.function_config.is_null()) {
            place_new_items(envelope["items"]);
        }
        return write_envelope(s, o, envelope);
    }
    if (o.format == "objects") {
        warn_results_left_out(s, list);
        if (!o.jq.empty()) {
            auto outs = doc::run_jq(o.jq, objects_list(list));
            if (!outs) {
                return outs.error();
            }
            s.out << doc::format_jq_outputs(*outs);
        } else {
            s.out << doc::to_yaml(objects_list(list));
        }
    } else { // table
        bool color = s.out_tty && s.color;
        if (table) {
            s.out << table(list, color);
        }
        if (!list.results.empty()) {
            s.out << "\n" << format_results(list, color);
        }
    }
    s.out.flush();
    return ok_status();
}

} // namespace

Status write_list(Streams& s, const OutputOptions& o, const doc::ResourceList& list,
                  const TableFn& table) {
    Status st = write_list_once(s, o, list, table);
    echo_findings(s, o, list);
    return st;
}

Status write_list(Streams& s, const OutputOptions& o, doc::ResourceList&& list,
                  const TableFn& table) {
    if (!prints_envelope(o)) {
        return write_list(s, o, std::as_const(list), table);
    }
    echo_findings(s, o, list); // before the move: the results go into the envelope
    const bool orchestrated = !list.function_config.is_null();
    doc::Value envelope = std::move(list).to_value();
    if (orchestrated) {
        place_new_items(envelope["items"]);
    }
    return write_envelope(s, o, envelope);
}

Result<doc::ResourceList> read_input(Streams& s, const InputOptions& in, std::string_view verb,
                                     std::string_view what) {
    std::string text;
    std::string source;
    if (in.file.empty() || in.file == "-") {
        if (in.file.empty() && s.in_tty) {
            return make_error(ErrorKind::Usage, "no input: standard input is a terminal",
                              "pipe " + std::string(what) +
                                  " in, or give -f FILE; see kubectl ichor " + std::string(verb) +
                                  " --help",
                              vocab::code::k_usage);
        }
        auto r = util::read_stream(s.in, "<stdin>");
        if (!r) {
            return r.error();
        }
        text = std::move(*r);
        source = "<stdin>";
    } else {
        auto r = util::read_file(in.file);
        if (!r) {
            Error e = r.error();
            e.kind = ErrorKind::Usage;
            return e;
        }
        text = std::move(*r);
        source = in.file;
    }
    return doc::read_resource_list(text, source);
}

} // namespace ichor::cli
