#include "common/stages/stage.h"

#include <algorithm>

namespace ichor::stages {

std::optional<ErrorKind> category(const Outcome& o) {
    if (o.error) {
        return o.error->kind;
    }
    if (o.stopped == 0) {
        return std::nullopt;
    }
    if (o.done > 0) {
        return ErrorKind::Partial;
    }
    return o.unreachable == o.stopped ? ErrorKind::Unreachable : ErrorKind::Findings;
}

namespace {
bool written_by(const doc::Value& r, std::string_view name) {
    const doc::Value* tags = doc::find_path(r, "tags");
    if (tags == nullptr || !tags->is_object()) {
        return false;
    }
    auto it = tags->find(std::string(k_tag_stage));
    return it != tags->end() && it->is_string() && it->get<std::string>() == name;
}
} // namespace

void add_folded(doc::ResourceList& list, doc::Value result, const std::string& node,
                std::string_view from) {
    const std::string code = result["tags"].value(std::string(vocab::k_tag_code), "");
    doc::Value kept = doc::Value::array();
    std::vector<std::string> folded;
    std::size_t place = 0;
    for (auto& r : list.results) {
        const doc::Value* tags = doc::find_path(r, "tags");
        bool fold = tags != nullptr && tags->is_object() && written_by(r, from) &&
                    tags->value(std::string(vocab::k_tag_node), "") == node &&
                    (r.value("severity", "") == "error" ||
                     tags->value(std::string(vocab::k_tag_code), "") == code);
        if (!fold) {
            kept.push_back(std::move(r));
            continue;
        }
        if (folded.empty()) {
            place = kept.size();
        }
        folded.push_back(std::string(from) + ": " +
                         tags->value(std::string(vocab::k_tag_code), ""));
    }
    if (folded.empty()) {
        kept.push_back(std::move(result));
        list.results = std::move(kept);
        return;
    }
    std::string names;
    for (const auto& f : folded) {
        names += (names.empty() ? "" : ", ") + f;
    }
    result["tags"][std::string(vocab::k_tag_folded)] = names;
    kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(place), std::move(result));
    list.results = std::move(kept);
}

void drop_results_of(doc::ResourceList& list, std::string_view name) {
    doc::Value kept = doc::Value::array();
    for (auto& r : list.results) {
        if (!written_by(r, name)) {
            kept.push_back(std::move(r));
        }
    }
    list.results = std::move(kept);
}

void mark_results(doc::ResourceList& list) {
    for (auto& r : list.results) {
        if (!r.contains("tags") || !r["tags"].is_object()) {
            r["tags"] = doc::Value::object();
        }
        if (!r["tags"].contains(std::string(k_tag_stage))) {
            r["tags"][std::string(k_tag_stage)] = nullptr; // the mark
        }
    }
}

void note_stages_run(doc::ResourceList& list, const std::vector<std::string>& names) {
    for (const auto& n : names) {
        if (std::find(list.stages_run.begin(), list.stages_run.end(), n) == list.stages_run.end()) {
            list.stages_run.push_back(n);
        }
    }
}

void tag_new(doc::ResourceList& list, std::string_view name) {
    const std::string key(k_tag_stage);
    for (auto& r : list.results) {
        if (!r.contains("tags") || !r["tags"].is_object()) {
            r["tags"] = doc::Value::object();
        }
        doc::Value& tags = r["tags"];
        if (!tags.contains(key)) {
            tags[key] = name;
        } else if (tags[key].is_null()) {
            tags.erase(key);
            if (tags.empty()) {
                r.erase("tags");
            }
        }
    }
}

} // namespace ichor::stages
