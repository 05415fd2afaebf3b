#include "common/cli/output.h"

#include "common/doc/jq.h"
#include "common/util/files.h"

#include <algorithm>
#include <iterator>
#include <ostream>
#include <sstream>

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

Status write_list(Streams& s, const OutputOptions& o, const doc::ResourceList& list,
                  const TableFn& table) {
    doc::Value envelope = list.to_value();
    if (!o.jq.empty()) {
        auto outs = doc::run_jq(o.jq, envelope);
        if (!outs) {
            return outs.error();
        }
        s.out << doc::format_jq_outputs(*outs);
    } else if (o.format == "json") {
        s.out << doc::to_json(envelope);
    } else if (o.format == "table") {
        bool color = s.out_tty && s.color;
        if (table) {
            s.out << table(list, color);
        }
        if (!list.results.empty()) {
            s.out << "\n" << format_results(list, color);
        }
    } else {
        s.out << doc::to_yaml(envelope);
    }
    s.out.flush();
    return ok_status();
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
                              "Usage");
        }
        text.assign(std::istreambuf_iterator<char>(s.in), std::istreambuf_iterator<char>());
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
