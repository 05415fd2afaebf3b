// The v1.14 layout as the lab approximates it (tests/lab/internal/sim/layout14.go, docs/lab.md):
// a 1.14 render is the 1.13 render with fields moved into the v1.14 documents exactly as the lab
// moves them. machinery v1.14.1 has Talos's own 1.14 contract; what separates the two is measured
// in tests/golden/render/layout14-gap.txt, and docs/render.md ("Intended differences") says what
// remains. Which field goes where is the layout table's (machineconfig/layout.h), not this file's.
#include "common/machineconfig/layout.h"
#include "common/render/render.h"

namespace ichor::render {

using doc::Value;

std::vector<Value> to_layout14(std::vector<Value> documents) {
    namespace layout = machineconfig::layout;
    std::vector<Value> out;
    for (auto& d : documents) {
        if (!d.is_object() || !d.contains("version") || d.contains("kind")) {
            out.push_back(std::move(d));
            continue;
        }
        auto moved =
            layout::to_documents(d, [](const layout::Document& doc) { return doc.layout14; });
        out.push_back(std::move(d));
        for (auto& m : moved) {
            out.push_back(std::move(m));
        }
    }
    return out;
}

} // namespace ichor::render
