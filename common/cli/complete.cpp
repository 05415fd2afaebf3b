#include "common/cli/complete.h"

#include "common/cli/flags.h"
#include "common/talos/talosconfig.h"

#include <algorithm>
#include <map>
#include <set>

namespace ichor::cli {

bool is_completion_request(const std::vector<std::string>& args) {
    return args.size() >= 2 && (args[1] == "__complete" || args[1] == "__completeNoDesc");
}

bool completion_descriptions(std::string_view request, const Environment& env) {
    std::string v = env.get_or("KUBECTL_ICHOR_COMPLETION_DESCRIPTIONS",
                               env.get_or("COBRA_COMPLETION_DESCRIPTIONS", ""));
    // strconv.ParseBool's spellings of false, as cobra reads the variable.
    bool off = v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False";
    return request == "__complete" && !off;
}

std::string format_completion(const Completion& c, bool descriptions) {
    auto first_line = [](std::string_view t) { return t.substr(0, t.find_first_of("\r\n")); };
    std::string out;
    for (const auto& cand : c.candidates) {
        out += first_line(cand.value);
        std::string_view desc = first_line(cand.description);
        if (descriptions && !desc.empty()) {
            out += '\t';
            out += desc;
        }
        out += '\n';
    }
    out += ":" + std::to_string(c.directive) + "\n";
    return out;
}

std::vector<FlagSpec> flag_specs(const cxxopts::Options& opts) {
    std::vector<FlagSpec> specs;
    for (const auto& group : opts.groups()) {
        for (const auto& o : opts.group_help(group).options) {
            if (o.l.empty()) {
                continue;
            }
            FlagSpec f;
            f.name = o.l.front();
            f.short_name = o.s;
            f.description = o.desc;
            f.arg_help = o.arg_help;
            f.takes_value = !o.is_boolean;
            f.repeatable = o.is_container;
            f.positional = o.desc.empty();
            specs.push_back(std::move(f));
        }
    }
    return specs;
}

CompletionRequest completion_request(const cxxopts::Options& opts,
                                     const std::vector<std::string>& args) {
    CompletionRequest r;
    r.flags = flag_specs(opts);
    r.words.assign(args.begin() + 2, args.end());
    r.descriptions = args[1] == "__complete";
    return r;
}

namespace {

const FlagSpec* find_long(const std::vector<FlagSpec>& flags, std::string_view name) {
    for (const auto& f : flags) {
        if (!f.positional && f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

const FlagSpec* find_short(const std::vector<FlagSpec>& flags, char c) {
    for (const auto& f : flags) {
        if (!f.positional && f.short_name.size() == 1 && f.short_name[0] == c) {
            return &f;
        }
    }
    return nullptr;
}

// What the words before the one under completion say.
struct Line {
    std::map<std::string, std::string> values; // the last value of each flag, by long name
    std::set<std::string> given;               // long names of the flags given
    int positionals = 0;
    bool dashdash = false;             // after "--": only positional arguments
    const FlagSpec* pending = nullptr; // the last word is this flag's value
};

// Reads a short-flag word ("-o", "-ojson", "-o=json", "-fn"): switches, then at most one flag
// with a value, attached or in the next word.
void read_short(const std::vector<FlagSpec>& flags, const std::vector<std::string>& typed,
                size_t& i, Line& line) {
    const std::string& w = typed[i];
    for (size_t j = 1; j < w.size(); ++j) {
        const FlagSpec* f = find_short(flags, w[j]);
        if (f == nullptr) {
            return;
        }
        line.given.insert(f->name);
        if (!f->takes_value) {
            continue;
        }
        std::string rest = w.substr(j + 1);
        if (!rest.empty() && rest[0] == '=') {
            rest.erase(0, 1);
        }
        if (!rest.empty() || j + 1 < w.size()) {
            line.values[f->name] = rest;
        } else if (i + 1 < typed.size()) {
            line.values[f->name] = typed[++i];
        } else {
            line.pending = f;
        }
        return;
    }
}

Line read_line(const std::vector<FlagSpec>& flags, const std::vector<std::string>& typed) {
    Line line;
    for (size_t i = 0; i < typed.size(); ++i) {
        const std::string& w = typed[i];
        if (line.dashdash) {
            ++line.positionals;
        } else if (w == "--") {
            line.dashdash = true;
        } else if (w.rfind("--", 0) == 0) {
            auto eq = w.find('=');
            const FlagSpec* f =
                find_long(flags, w.substr(2, eq == std::string::npos ? eq : eq - 2));
            if (f == nullptr) {
                continue;
            }
            line.given.insert(f->name);
            if (!f->takes_value) {
                continue;
            }
            if (eq != std::string::npos) {
                line.values[f->name] = w.substr(eq + 1);
            } else if (i + 1 < typed.size()) {
                line.values[f->name] = typed[++i];
            } else {
                line.pending = f;
            }
        } else if (w.size() > 1 && w[0] == '-') {
            read_short(flags, typed, i, line);
        } else {
            ++line.positionals;
        }
    }
    return line;
}

bool has_flag(const std::vector<FlagSpec>& flags, std::string_view name) {
    return find_long(flags, name) != nullptr;
}

enum class ValueKind {
    None,
    Files,
    Dirs,
    Words,
    Outputs,
    Clusters,
    TalosContexts,
    KubeContexts,
    Nodes
};

ValueKind value_kind(const FlagSpec& f, const std::vector<FlagSpec>& flags) {
    if (!f.positional && f.name == "output") {
        return ValueKind::Outputs;
    }
    if ((!f.positional && f.name == "cluster") || f.arg_help == "CLUSTER") {
        return ValueKind::Clusters;
    }
    if (!f.positional && f.name == "talos-context") {
        return ValueKind::TalosContexts;
    }
    if (!f.positional && f.name == "context") {
        return has_flag(flags, "kubeconfig") ? ValueKind::KubeContexts : ValueKind::TalosContexts;
    }
    if (f.arg_help == "ADDRESS") {
        return ValueKind::Nodes;
    }
    if (f.arg_help == "FILE") {
        return ValueKind::Files;
    }
    if (f.arg_help == "DIR") {
        return ValueKind::Dirs;
    }
    if (f.arg_help.find('|') != std::string::npos) {
        return ValueKind::Words;
    }
    return ValueKind::None;
}

std::string value_of(const Line& line, const std::string& name) {
    auto it = line.values.find(name);
    return it == line.values.end() ? std::string() : it->second;
}

// The talosconfig the line names (or the default one), or none.
std::optional<talos::TalosConfig> talosconfig_of(const Line& line, const Environment& env) {
    auto tc = talos::load_talosconfig(value_of(line, "talosconfig"), env);
    if (!tc) {
        return std::nullopt;
    }
    return std::move(*tc);
}

std::vector<Candidate> talos_contexts(const Line& line, const Environment& env) {
    std::vector<Candidate> out;
    if (auto tc = talosconfig_of(line, env)) {
        for (const auto& c : tc->contexts) {
            std::string desc = c.name == tc->current ? "current context" : "";
            if (!c.endpoints.empty()) {
                desc += (desc.empty() ? "endpoint " : ", endpoint ") + c.endpoints.front();
            }
            out.push_back({c.name, desc});
        }
    }
    return out;
}

std::vector<Candidate> talos_nodes(const Line& line, const std::vector<FlagSpec>& flags,
                                   const Environment& env) {
    auto tc = talosconfig_of(line, env);
    if (!tc) {
        return {};
    }
    std::string name = value_of(line, has_flag(flags, "talos-context") ? "talos-context"
                                      : has_flag(flags, "kubeconfig")  ? ""
                                                                       : "context");
    if (name.empty()) {
        name = tc->current;
    }
    std::vector<Candidate> out;
    for (const auto& c : tc->contexts) {
        if (c.name != name) {
            continue;
        }
        bool nodes = !c.nodes.empty();
        for (const auto& a : nodes ? c.nodes : c.endpoints) {
            out.push_back({a, (nodes ? "node of " : "endpoint of ") + c.name});
        }
    }
    return out;
}

KubeOptions kube_of(const Line& line, const std::vector<FlagSpec>& flags) {
    KubeOptions k;
    if (has_flag(flags, "kubeconfig")) {
        k.kubeconfig = value_of(line, "kubeconfig");
        k.context = value_of(line, "context");
    }
    k.ns = value_of(line, "namespace");
    return k;
}

Completion values(const FlagSpec& f, const std::vector<FlagSpec>& flags, const Line& line,
                  const CompletionSources& src) {
    Completion c;
    switch (value_kind(f, flags)) {
    case ValueKind::Files:
        c.directive = k_comp_default;
        break;
    case ValueKind::Dirs:
        c.directive = k_comp_filter_dirs;
        break;
    case ValueKind::Words:
        if (!f.positional || line.positionals == 0) {
            std::string_view words = f.arg_help;
            while (!words.empty()) {
                auto bar = words.find('|');
                c.candidates.push_back({std::string(words.substr(0, bar)), ""});
                words = bar == std::string_view::npos ? "" : words.substr(bar + 1);
            }
        }
        break;
    case ValueKind::Outputs:
        for (auto name : k_output_formats) {
            c.candidates.push_back({std::string(name), ""});
        }
        break;
    case ValueKind::Clusters:
        if (src.clusters) {
            c.candidates = src.clusters(kube_of(line, flags), src.cluster_bound_ms);
        }
        break;
    case ValueKind::TalosContexts:
        c.candidates = talos_contexts(line, src.env);
        break;
    case ValueKind::KubeContexts:
        if (src.kube_contexts) {
            c.candidates = src.kube_contexts(kube_of(line, flags));
        }
        break;
    case ValueKind::Nodes:
        c.candidates = talos_nodes(line, flags, src.env);
        break;
    case ValueKind::None:
        break;
    }
    return c;
}

// --NAME (and -S) of every flag not given yet, or given and repeatable (as cobra offers them).
Completion flag_names(const std::vector<FlagSpec>& flags, const Line& line) {
    Completion c;
    for (const auto& f : flags) {
        if (f.positional || (line.given.count(f.name) != 0 && !f.repeatable)) {
            continue;
        }
        c.candidates.push_back({"--" + f.name, f.description});
        if (!f.short_name.empty()) {
            c.candidates.push_back({"-" + f.short_name, f.description});
        }
    }
    return c;
}

void keep_prefix(Completion& c, std::string_view prefix) {
    auto drop = [prefix](const Candidate& x) { return x.value.rfind(prefix, 0) != 0; };
    c.candidates.erase(std::remove_if(c.candidates.begin(), c.candidates.end(), drop),
                       c.candidates.end());
}

} // namespace

Completion complete(const CompletionRequest& req, const CompletionSources& src) {
    std::vector<std::string> typed = req.words;
    std::string cur;
    if (!typed.empty()) {
        cur = typed.back();
        typed.pop_back();
    }
    const auto& flags = req.flags;
    Line line = read_line(flags, typed);
    if (line.given.count("help") != 0 || line.given.count("version") != 0) {
        return {};
    }
    Completion c;
    std::string prefix = cur;
    if (line.pending != nullptr) {
        c = values(*line.pending, flags, line, src);
    } else if (!line.dashdash && cur.rfind("--", 0) == 0 && cur.find('=') != std::string::npos) {
        // --flag=VALUE: the value alone, as cobra answers (the shell scripts keep "--flag=").
        auto eq = cur.find('=');
        const FlagSpec* f = find_long(flags, cur.substr(2, eq - 2));
        prefix = cur.substr(eq + 1);
        if (f != nullptr && f->takes_value) {
            c = values(*f, flags, line, src);
        }
    } else if (!line.dashdash && cur.size() > 2 && cur[0] == '-' && cur[1] != '-' &&
               find_short(flags, cur[1]) != nullptr && find_short(flags, cur[1])->takes_value) {
        // -oVALUE, -o=VALUE: cobra's "-o=" form gives the value alone; an attached value is
        // completed whole, since the shell replaces the whole word.
        const FlagSpec* f = find_short(flags, cur[1]);
        bool eq = cur[2] == '=';
        prefix = cur.substr(eq ? 3 : 2);
        c = values(*f, flags, line, src);
        if (!eq) {
            for (auto& x : c.candidates) {
                x.value = cur.substr(0, 2) + x.value;
            }
            prefix = cur;
        }
    } else if (!line.dashdash && !cur.empty() && cur[0] == '-') {
        c = flag_names(flags, line);
    } else {
        auto pos = std::find_if(flags.begin(), flags.end(),
                                [](const FlagSpec& f) { return f.positional; });
        if (pos != flags.end()) {
            c = values(*pos, flags, line, src);
        }
    }
    keep_prefix(c, prefix);
    return c;
}

} // namespace ichor::cli
