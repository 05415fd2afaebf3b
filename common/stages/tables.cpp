#include "common/stages/tables.h"

#include "common/inspection/view.h"
#include "common/util/strings.h"

namespace ichor::stages {

using doc::Value;

namespace {
std::string or_dash(std::string s) {
    return s.empty() ? "-" : s;
}

std::string etcd_cell(const inspection::View& node) {
    if (!node.has_etcd()) {
        return "-";
    }
    if (!node.etcd_problem().empty()) {
        return "problem";
    }
    const Value* members = node.etcd_members();
    size_t n = members != nullptr ? members->size() : 0;
    return std::to_string(n) + (n == 1 ? " member" : " members");
}
} // namespace

std::string inspection_table(const doc::ResourceList& list, bool /*color*/) {
    bool trust = false;
    for (const auto& item : list.items) {
        trust = trust || inspection::View(item).has_trust();
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back(
        {"ADDRESS", "MODE", "TLS", "VERSION", "ROLE", "CLUSTER", "HOSTNAME", "UUID", "ETCD"});
    if (trust) {
        rows.front().push_back("TRUST");
    }
    int others = 0;
    for (const auto& item : list.items) {
        const inspection::View node(item);
        if (node.kind() != inspection::field::k_inspection) {
            ++others;
            continue;
        }
        std::vector<std::string> row = {
            node.name(),
            or_dash(node.mode()),
            or_dash(node.tls_outcome()),
            or_dash(node.talos_version()),
            or_dash(node.role()),
            or_dash(node.cluster_name()),
            or_dash(node.hostname()),
            or_dash(node.uuid()),
            etcd_cell(node),
        };
        if (trust) {
            row.push_back(or_dash(node.trust_verdict()));
        }
        rows.push_back(std::move(row));
    }
    std::string out = util::format_table(rows);
    if (others > 0) {
        out += "(" + std::to_string(others) + (others == 1 ? " other item" : " other items") +
               " passed through)\n";
    }
    return out;
}

} // namespace ichor::stages
