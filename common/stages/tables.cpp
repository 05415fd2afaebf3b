#include "common/stages/tables.h"

#include "common/util/strings.h"

namespace ichor::stages {

using doc::Value;

namespace {
std::string or_dash(std::string s) {
    return s.empty() ? "-" : s;
}

std::string etcd_cell(const Value& st) {
    const Value* e = doc::find_path(st, "etcd");
    if (e == nullptr) {
        return "-";
    }
    if (!e->value("problem", "").empty()) {
        return "problem";
    }
    size_t n = e->value("members", Value::array()).size();
    return std::to_string(n) + (n == 1 ? " member" : " members");
}
} // namespace

std::string inspection_table(const doc::ResourceList& list, bool /*color*/) {
    bool trust = false;
    for (const auto& item : list.items) {
        trust = trust || doc::find_path(item, "status.trust") != nullptr;
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back(
        {"ADDRESS", "MODE", "TLS", "VERSION", "ROLE", "CLUSTER", "HOSTNAME", "UUID", "ETCD"});
    if (trust) {
        rows.front().push_back("TRUST");
    }
    int others = 0;
    for (const auto& item : list.items) {
        if (item.value("kind", "") != "Inspection") {
            ++others;
            continue;
        }
        const Value& st = item.contains("status") ? item["status"] : Value::object();
        std::vector<std::string> row = {
            item["metadata"].value("name", ""),
            or_dash(st.value("mode", "")),
            or_dash(doc::get_string(st, "tls.outcome")),
            or_dash(st.value("talosVersion", "")),
            or_dash(doc::get_string(st, "facts.role")),
            or_dash(doc::get_string(st, "facts.clusterName")),
            or_dash(doc::get_string(st, "identity.hostname")),
            or_dash(doc::get_string(st, "identity.uuid")),
            etcd_cell(st),
        };
        if (trust) {
            row.push_back(or_dash(doc::get_string(st, "trust.verdict")));
        }
        rows.push_back(std::move(row));
    }
    std::string out = util::format_table(rows);
    if (others > 0) {
        out += "(" + std::to_string(others) + " other items passed through)\n";
    }
    return out;
}

} // namespace ichor::stages
