#include "common/doc/jq.h"

extern "C" {
#include <jq.h>
#include <jv.h>
}

#include <dlfcn.h>

#include <memory>
#include <string_view>

namespace ichor::doc {

namespace {

// libjq, loaded on the first --jq. Linked, it was mapped with libonig at every start of every
// tool: 0.7 ms of a 3 ms `--help` (bench/HISTORY.md, "the linking"), for a flag most runs do not
// give. It also lets a tool run on a machine without libjq until --jq is asked for.
struct LibJq {
    decltype(&::jq_init) jq_init = nullptr;
    decltype(&::jq_teardown) jq_teardown = nullptr;
    decltype(&::jq_set_error_cb) jq_set_error_cb = nullptr;
    decltype(&::jq_compile) jq_compile = nullptr;
    decltype(&::jq_start) jq_start = nullptr;
    decltype(&::jq_next) jq_next = nullptr;
    decltype(&::jv_parse_sized) jv_parse_sized = nullptr;
    decltype(&::jv_get_kind) jv_get_kind = nullptr;
    decltype(&::jv_string_value) jv_string_value = nullptr;
    decltype(&::jv_free) jv_free = nullptr;
    decltype(&::jv_copy) jv_copy = nullptr;
    decltype(&::jv_invalid_has_msg) jv_invalid_has_msg = nullptr;
    decltype(&::jv_invalid_get_msg) jv_invalid_get_msg = nullptr;
    decltype(&::jv_dump_string) jv_dump_string = nullptr;
    std::string error; // why it could not be loaded
};

template <class F> bool bind(void* handle, const char* name, F& fn, std::string& error) {
    fn = reinterpret_cast<F>(dlsym(handle, name));
    if (fn == nullptr && error.empty()) {
        error = std::string("libjq has no ") + name;
    }
    return fn != nullptr;
}

#ifdef ICHOR_JQ_LINKED
// The fully static release (cmake/FullyStatic.cmake) links libjq: a static executable cannot
// load a shared library built for the system's own C library.
LibJq load_libjq() {
    return LibJq{
        ::jq_init, ::jq_teardown,        ::jq_set_error_cb,    ::jq_compile,      ::jq_start,
        ::jq_next, ::jv_parse_sized,     ::jv_get_kind,        ::jv_string_value, ::jv_free,
        ::jv_copy, ::jv_invalid_has_msg, ::jv_invalid_get_msg, ::jv_dump_string,  {}};
}
#else
LibJq load_libjq() {
    LibJq jq;
    void* h = dlopen("libjq.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        const char* why = dlerror();
        jq.error =
            std::string("cannot load libjq (Debian package libjq1): ") + (why ? why : "not found");
        return jq;
    }
    std::string& e = jq.error;
    bind(h, "jq_init", jq.jq_init, e) && bind(h, "jq_teardown", jq.jq_teardown, e) &&
        bind(h, "jq_set_error_cb", jq.jq_set_error_cb, e) &&
        bind(h, "jq_compile", jq.jq_compile, e) && bind(h, "jq_start", jq.jq_start, e) &&
        bind(h, "jq_next", jq.jq_next, e) && bind(h, "jv_parse_sized", jq.jv_parse_sized, e) &&
        bind(h, "jv_get_kind", jq.jv_get_kind, e) &&
        bind(h, "jv_string_value", jq.jv_string_value, e) && bind(h, "jv_free", jq.jv_free, e) &&
        bind(h, "jv_copy", jq.jv_copy, e) &&
        bind(h, "jv_invalid_has_msg", jq.jv_invalid_has_msg, e) &&
        bind(h, "jv_invalid_get_msg", jq.jv_invalid_get_msg, e) &&
        bind(h, "jv_dump_string", jq.jv_dump_string, e);
    return jq; // the handle stays open for the process's lifetime
}
#endif

const LibJq& libjq() {
    static const LibJq jq = load_libjq();
    return jq;
}

// jq reports a compile error as "jq: error: REASON at <top-level>, line N:\nEXPR", then a count
// ("jq: 1 compile error"). An error is one line: keep REASON and where, drop the echo and count.
void collect_error(void* data, jv msg) {
    const LibJq& lib = libjq();
    auto* out = static_cast<std::string*>(data);
    if (lib.jv_get_kind(msg) == JV_KIND_STRING) {
        std::string_view m = lib.jv_string_value(msg);
        m = m.substr(0, m.find('\n'));
        bool count = m.starts_with("jq: ") &&
                     (m.ends_with(" compile error") || m.ends_with(" compile errors"));
        if (m.starts_with("jq: error: ")) {
            m.remove_prefix(std::string_view("jq: error: ").size());
        }
        while (!m.empty() && (m.back() == ':' || m.back() == ' ')) {
            m.remove_suffix(1);
        }
        if (!count && !m.empty()) {
            *out += (out->empty() ? "" : "; ") + std::string(m);
        }
    }
    lib.jv_free(msg);
}

} // namespace

Result<std::vector<Value>> run_jq(const std::string& expr, const Value& input) {
    const LibJq& lib = libjq();
    if (!lib.error.empty()) {
        return make_error(ErrorKind::Internal, "--jq: " + lib.error, "apt install libjq1");
    }
    auto teardown = [&lib](jq_state* s) { lib.jq_teardown(&s); };
    std::unique_ptr<jq_state, decltype(teardown)> jq(lib.jq_init(), teardown);
    if (!jq) {
        return make_error(ErrorKind::Internal, "jq: cannot initialise");
    }
    std::string errors;
    lib.jq_set_error_cb(jq.get(), collect_error, &errors);
    if (!lib.jq_compile(jq.get(), expr.c_str())) {
        return make_error(ErrorKind::Usage, "--jq: " + (errors.empty() ? "cannot compile" : errors),
                          "check the expression, e.g. --jq '.items[].metadata.name'");
    }
    std::string text = input.dump();
    jv in = lib.jv_parse_sized(text.data(), static_cast<int>(text.size()));
    if (lib.jv_get_kind(in) == JV_KIND_INVALID) {
        lib.jv_free(in);
        return make_error(ErrorKind::Internal, "jq: input did not parse");
    }
    lib.jq_start(jq.get(), in, 0);
    std::vector<Value> out;
    while (true) {
        jv r = lib.jq_next(jq.get());
        if (lib.jv_get_kind(r) == JV_KIND_INVALID) {
            if (lib.jv_invalid_has_msg(lib.jv_copy(r))) {
                jv msg = lib.jv_invalid_get_msg(r);
                std::string m =
                    lib.jv_get_kind(msg) == JV_KIND_STRING ? lib.jv_string_value(msg) : "error";
                lib.jv_free(msg);
                return make_error(ErrorKind::Usage, "--jq: " + m);
            }
            lib.jv_free(r);
            break;
        }
        jv dumped = lib.jv_dump_string(r, 0);
        out.push_back(Value::parse(lib.jv_string_value(dumped)));
        lib.jv_free(dumped);
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
