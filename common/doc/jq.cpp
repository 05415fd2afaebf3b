#include "common/doc/jq.h"

extern "C" {
#include <jq.h>
#include <jv.h>
}

#include <memory>

namespace ichor::doc {

namespace {
void collect_error(void* data, jv msg) {
    auto* out = static_cast<std::string*>(data);
    if (jv_get_kind(msg) == JV_KIND_STRING) {
        if (!out->empty()) {
            *out += "; ";
        }
        *out += jv_string_value(msg);
    }
    jv_free(msg);
}

struct JqDeleter {
    void operator()(jq_state* s) const { jq_teardown(&s); }
};
} // namespace

Result<std::vector<Value>> run_jq(const std::string& expr, const Value& input) {
    std::unique_ptr<jq_state, JqDeleter> jq(jq_init());
    if (!jq) {
        return make_error(ErrorKind::Internal, "jq: cannot initialise");
    }
    std::string errors;
    jq_set_error_cb(jq.get(), collect_error, &errors);
    if (!jq_compile(jq.get(), expr.c_str())) {
        return make_error(ErrorKind::Usage, "--jq: " + (errors.empty() ? "cannot compile" : errors),
                          "check the expression, e.g. --jq '.items[].metadata.name'");
    }
    std::string text = input.dump();
    jv in = jv_parse_sized(text.data(), static_cast<int>(text.size()));
    if (!jv_is_valid(in)) {
        jv_free(in);
        return make_error(ErrorKind::Internal, "jq: input did not parse");
    }
    jq_start(jq.get(), in, 0);
    std::vector<Value> out;
    while (true) {
        jv r = jq_next(jq.get());
        if (!jv_is_valid(r)) {
            if (jv_invalid_has_msg(jv_copy(r))) {
                jv msg = jv_invalid_get_msg(r);
                std::string m = jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg)
                                                                   : "error";
                jv_free(msg);
                return make_error(ErrorKind::Usage, "--jq: " + m);
            }
            jv_free(r);
            break;
        }
        jv dumped = jv_dump_string(r, 0);
        out.push_back(Value::parse(jv_string_value(dumped)));
        jv_free(dumped);
    }
    return out;
}

std::string format_jq_outputs(const std::vector<Value>& outputs) {
    std::string s;
    for (const auto& v : outputs) {
        if (v.is_string()) {
            s += v.get<std::string>();
        } else {
            s += v.dump();
        }
        s += '\n';
    }
    return s;
}

} // namespace ichor::doc
