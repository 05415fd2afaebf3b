#include "common/doc/resource_list.h"

#include "common/doc/vocabulary.h"

namespace ichor::doc {

std::string_view severity_name(Severity s) {
    switch (s) {
    case Severity::Error:
        return "error";
    case Severity::Warning:
        return "warning";
    case Severity::Info:
        return "info";
    }
    return "info";
}

void ResourceList::add_result(Severity severity, std::string message, std::string_view code,
                              const Value* ref, Value extra_tags) {
    Value r = Value::object();
    r["severity"] = severity_name(severity);
    r["message"] = std::move(message);
    if (ref != nullptr) {
        r["resourceRef"] = ref_of(*ref);
    }
    Value tags = Value::object();
    if (!code.empty()) {
        tags[std::string(k_tag_code)] = std::string(code);
    }
    for (auto it = extra_tags.begin(); it != extra_tags.end(); ++it) {
        if (it.key() == "field") {
            continue;
        }
        tags[it.key()] = it.value();
    }
    if (extra_tags.contains("field")) {
        r["field"] = extra_tags["field"];
    }
    r["tags"] = std::move(tags);
    results.push_back(std::move(r));
}

bool ResourceList::has_errors() const {
    for (const auto& r : results) {
        if (r.value("severity", "") == "error") {
            return true;
        }
    }
    return false;
}

namespace {

Value envelope(Value items, Value function_config, Value results) {
    Value v = Value::object();
    v["apiVersion"] = "config.kubernetes.io/v1";
    v["kind"] = "ResourceList";
    v["items"] = std::move(items);
    if (!function_config.is_null()) {
        v["functionConfig"] = std::move(function_config);
    }
    if (!results.empty()) {
        v["results"] = std::move(results);
    }
    return v;
}

} // namespace

Value ResourceList::to_value() const& {
    return envelope(items, function_config, results);
}

Value ResourceList::to_value() && {
    Value v = envelope(std::move(items), std::move(function_config), std::move(results));
    items = Value::array();
    results = Value::array();
    function_config = Value();
    return v;
}

Value ref_of(const Value& item) {
    Value ref = Value::object();
    // get_string, not value(): a field of another type must not throw (found by fuzz_stream).
    ref["apiVersion"] = get_string(item, "apiVersion");
    ref["kind"] = get_string(item, "kind");
    const Value* md = find_path(item, "metadata");
    if (md != nullptr && md->is_object()) {
        ref["name"] = get_string(*md, "name");
        if (md->contains("namespace")) {
            ref["namespace"] = (*md)["namespace"];
        }
    }
    return ref;
}

namespace {
Status check_item(const Value& item, std::string_view source, size_t index) {
    if (!item.is_object() || !item.contains("apiVersion") || !item.contains("kind") ||
        !item["apiVersion"].is_string() || !item["kind"].is_string()) {
        return make_error(ErrorKind::Usage,
                          std::string(source) + ": document " + std::to_string(index + 1) +
                              " is not a Kubernetes-style object (apiVersion and kind)",
                          "pipe the output of another kubectl ichor tool, or a ResourceList",
                          vocab::code::k_malformed_input);
    }
    return ok_status();
}
} // namespace

Result<ResourceList> read_resource_list(std::string_view text, std::string_view source) {
    auto docs = parse_documents(text, source);
    if (!docs) {
        return docs.error();
    }
    ResourceList list;
    if (docs->size() == 1) {
        const Value& d = docs->front();
        std::string kind = get_string(d, "kind"); // any type: tests/fuzz found a list here
        if (kind == "ResourceList" || kind == "List") {
            if (d.contains("items") && !d["items"].is_null()) {
                if (!d["items"].is_array()) {
                    return make_error(ErrorKind::Usage,
                                      std::string(source) + ": items of the " + kind +
                                          " is not a list",
                                      "", vocab::code::k_malformed_input);
                }
                list.items = d["items"];
            }
            if (kind == "ResourceList" && d.contains("results") && d["results"].is_array()) {
                list.results = d["results"];
            }
            if (kind == "ResourceList" && d.contains("functionConfig")) {
                list.function_config = d["functionConfig"];
            }
            for (size_t i = 0; i < list.items.size(); ++i) {
                if (auto st = check_item(list.items[i], source, i); !st) {
                    return st.error();
                }
            }
            return list;
        }
    }
    for (size_t i = 0; i < docs->size(); ++i) {
        if (auto st = check_item((*docs)[i], source, i); !st) {
            return st.error();
        }
        list.items.push_back(std::move((*docs)[i]));
    }
    return list;
}

} // namespace ichor::doc
