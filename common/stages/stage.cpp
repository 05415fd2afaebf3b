#include "common/stages/stage.h"

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
    return tags != nullptr && tags->is_object() &&
           tags->value(std::string(k_tag_stage), "") == name;
}
} // namespace

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
