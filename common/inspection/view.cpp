#include "common/inspection/view.h"

#include "common/doc/resource_list.h"

namespace ichor::inspection {

using doc::Value;

bool View::is_inspection() const {
    return text(field::k_kind) == field::k_inspection &&
           text(field::k_api_version) == doc::k_adopt_api;
}

std::string View::node() const {
    return text(field::k_address, name());
}

std::optional<std::int64_t> View::port() const {
    const Value* p = find(m_item, field::k_port);
    if (p == nullptr || !p->is_number_integer()) {
        return std::nullopt;
    }
    return p->get<std::int64_t>();
}

std::string View::text(Path path, std::string fallback) const {
    return doc::get_string(m_item, path.dotted, std::move(fallback));
}

const Value* View::list(Path path) const {
    const Value* v = find(m_item, path);
    return v != nullptr && v->is_array() ? v : nullptr;
}

bool View::flag(Path path) const {
    const Value* v = find(m_item, path);
    return v != nullptr && v->is_boolean() && v->get<bool>();
}

} // namespace ichor::inspection
