#include "common/doc/objects.h"

namespace ichor::objects {

using doc::Value;

bool ObjectView::has_annotation(std::string_view key) const {
    const Value* a = raw(field::k_annotations);
    return a != nullptr && a->is_object() && a->contains(std::string(key));
}

std::string ObjectView::text(std::string_view path, std::string fallback) const {
    return doc::get_string(m_obj, path, std::move(fallback));
}

const Value* ObjectView::list(std::string_view path) const {
    const Value* v = raw(path);
    return v != nullptr && v->is_array() ? v : nullptr;
}

bool ObjectView::flag(std::string_view path) const {
    const Value* v = raw(path);
    return v != nullptr && v->is_boolean() && v->get<bool>();
}

std::optional<std::int64_t> ObjectView::integer(std::string_view path) const {
    const Value* v = raw(path);
    if (v == nullptr || !v->is_number_integer()) {
        return std::nullopt;
    }
    return v->get<std::int64_t>();
}

const Value* ObjectView::raw(std::string_view path) const {
    return doc::find_path(m_obj, path);
}

bool ObjectView::is_kind(std::string_view kind) const {
    return text(field::k_kind) == kind && text(field::k_api_version) == vocab::k_ichor_api;
}

namespace {

// Whether the text at `path` (a field:: path, "spec." read off `spec`) is `want`, a missing or
// non-text field reading "", compared without a copy.
bool spec_text_is(const Value& spec, std::string_view path, std::string_view want) {
    constexpr std::string_view k_spec = "spec.";
    const Value* v = doc::find_path(spec, path.substr(k_spec.size()));
    if (v == nullptr || !v->is_string()) {
        return want.empty();
    }
    return v->get_ref<const std::string&>() == want;
}

// The patch's spec, an empty mapping when it has none.
const Value& spec_of(const PatchView& p) {
    static const Value k_none = Value::object();
    const Value* spec = p.raw("spec");
    return spec != nullptr && spec->is_object() ? *spec : k_none;
}

// The selection rule, read in place: asked of every patch for every machine
// (render::select_patches).
bool layer_selects(const Value& spec, std::string_view role, std::string_view machine) {
    return spec_text_is(spec, field::k_layer, k_layer_cluster) ||
           (spec_text_is(spec, field::k_layer, k_layer_role) &&
            spec_text_is(spec, field::k_role, role)) ||
           (spec_text_is(spec, field::k_layer, k_layer_machine) && !machine.empty() &&
            spec_text_is(spec, field::k_machine, machine));
}

} // namespace

bool PatchView::selects(std::string_view role, std::string_view machine) const {
    return layer_selects(spec_of(*this), role, machine);
}

bool PatchView::selects(std::string_view cluster, std::string_view role,
                        std::string_view machine) const {
    const Value& spec = spec_of(*this);
    return spec_text_is(spec, field::k_cluster, cluster) && layer_selects(spec, role, machine);
}

} // namespace ichor::objects
