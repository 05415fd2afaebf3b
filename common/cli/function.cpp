#include "common/cli/function.h"

#include "common/cli/flags.h"

#include <algorithm>

namespace ichor::cli {

bool may_run_as_function(const std::vector<std::string>& args, const Streams& s,
                         std::string_view verb) {
    return !verb.empty() && args.size() == 1 && !s.in_tty;
}

namespace {

bool flag_name(std::string_view key) {
    auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
    return !key.empty() && key.front() != '-' && std::all_of(key.begin(), key.end(), ok);
}

const char* k_example = "kpt fn eval DIR --exec kubectl-ichor-drift -- cluster=prod";

} // namespace

Result<std::vector<std::string>> function_config_flags(const doc::Value& function_config) {
    if (!function_config.is_object() || function_config.value("kind", "") != "ConfigMap") {
        return usage_error("functionConfig: a ConfigMap is expected, whose data are the flags "
                           "(cluster: prod)",
                           k_example);
    }
    std::vector<std::string> flags;
    if (!function_config.contains("data") || function_config["data"].is_null()) {
        return flags;
    }
    const doc::Value& data = function_config["data"];
    if (!data.is_object()) {
        return usage_error("functionConfig: data is not a mapping of flags to values", k_example);
    }
    for (auto it = data.begin(); it != data.end(); ++it) {
        const std::string& key = it.key();
        if (!flag_name(key)) {
            return usage_error("functionConfig: \"" + key +
                                   "\" is not a flag's name (lower case, digits and '-')",
                               k_example);
        }
        const doc::Value& v = it.value();
        if (v.is_object() || v.is_array()) {
            return usage_error("functionConfig: the value of " + key +
                                   " is not a string (a list of values is one string: a,b)",
                               k_example);
        }
        std::string value = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
        if (value == "false") {
            continue;
        }
        if (key.size() == 1) {
            flags.push_back("-" + key);
            flags.push_back(value);
        } else {
            flags.push_back("--" + key + "=" + value);
        }
    }
    return flags;
}

} // namespace ichor::cli
