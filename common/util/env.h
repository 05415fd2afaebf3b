// The process environment as a value. Only main reads the real environment (common/cli does it
// once); libraries are handed an Environment, so tests can give them any.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace ichor {

struct Environment {
    std::map<std::string, std::string> vars;

    [[nodiscard]] std::optional<std::string> get(const std::string& name) const {
        auto it = vars.find(name);
        if (it == vars.end()) {
            return std::nullopt;
        }
        return it->second;
    }
    [[nodiscard]] std::string get_or(const std::string& name, std::string fallback) const {
        auto v = get(name);
        return v && !v->empty() ? *v : fallback;
    }
    [[nodiscard]] std::string home() const { return get_or("HOME", "/root"); }
};

} // namespace ichor
