#include "common/doc/value.h"
#include "common/doc/yaml_block.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <sstream>

namespace ichor::doc {

namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return true;
}

// A canonical integer: "0" or a non-zero digit then digits, optionally after '-'.
bool canonical_int(std::string_view s) {
    std::string_view d = s.starts_with('-') ? s.substr(1) : s;
    return all_digits(d) && (d.size() == 1 || d.front() != '0') &&
           !(s.starts_with('-') && d == "0");
}

Value from_yaml(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Null:
        return nullptr;
    case YAML::NodeType::Scalar: {
        const std::string& tag = node.Tag();
        const std::string& s = node.Scalar();
        if (tag == "?") {
            return resolve_plain_scalar(s);
        }
        if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
            tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
            Value r = resolve_plain_scalar(s);
            return r;
        }
        return s; // quoted, or an explicit/unknown tag: a string
    }
    case YAML::NodeType::Sequence: {
        Value arr = Value::array();
        for (const auto& item : node) {
            arr.push_back(from_yaml(item));
        }
        return arr;
    }
    case YAML::NodeType::Map: {
        Value obj = Value::object();
        for (const auto& kv : node) {
            std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
            obj[key] = from_yaml(kv.second);
        }
        return obj;
    }
    case YAML::NodeType::Undefined:
        break;
    }
    return nullptr;
}

void emit_string(std::string& out, const std::string& s, int indent);
void emit(std::string& out, const Value& v, int indent, bool in_seq);

void emit_scalar(std::string& out, const Value& v, int indent) {
    if (v.is_string()) {
        emit_string(out, v.get_ref<const std::string&>(), indent);
    } else if (v.is_null()) {
        out += "null";
    } else {
        out += v.dump();
    }
}

bool is_scalar_or_empty(const Value& v) {
    return !v.is_structured() || v.empty();
}

void emit_empty_or_scalar(std::string& out, const Value& v, int indent) {
    if (v.is_object()) {
        out += "{}";
    } else if (v.is_array()) {
        out += "[]";
    } else {
        emit_scalar(out, v, indent);
    }
}

void emit_key(std::string& out, const std::string& key) {
    if (needs_quotes(key) || key.find('\n') != std::string::npos) {
        out += Value(key).dump();
    } else {
        out += key;
    }
}

void pad(std::string& out, int n) {
    out.append(static_cast<size_t>(n), ' ');
}

void emit(std::string& out, const Value& v, int indent, bool /*in_seq*/) {
    if (v.is_object()) {
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) {
                pad(out, indent);
            }
            first = false;
            emit_key(out, it.key());
            const Value& child = it.value();
            if (is_scalar_or_empty(child)) {
                out += ": ";
                emit_empty_or_scalar(out, child, indent + 2);
                out += '\n';
            } else if (child.is_array()) {
                out += ":\n";
                pad(out, indent);
                emit(out, child, indent, false);
            } else {
                out += ":\n";
                pad(out, indent + 2);
                emit(out, child, indent + 2, false);
            }
        }
    } else if (v.is_array()) {
        bool first = true;
        for (const auto& item : v) {
            if (!first) {
                pad(out, indent);
            }
            first = false;
            out += "- ";
            if (is_scalar_or_empty(item)) {
                emit_empty_or_scalar(out, item, indent + 2);
                out += '\n';
            } else {
                emit(out, item, indent + 2, true);
            }
        }
    } else {
        emit_scalar(out, v, indent);
        out += '\n';
    }
}

bool printable_plain(const std::string& s) {
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7f) {
            return false;
        }
    }
    return true;
}

void emit_string(std::string& out, const std::string& s, int indent) {
    bool multiline = s.find('\n') != std::string::npos;
    if (multiline) {
        // A block literal keeps configuration blobs readable. It cannot carry trailing spaces on
        // a line, tabs at line starts or other control characters reliably: those go quoted.
        bool ok = true;
        for (size_t i = 0; i < s.size(); ++i) {
            unsigned char c = static_cast<unsigned char>(s[i]);
            if ((c < 0x20 && c != '\n') || c == 0x7f) {
                ok = false;
                break;
            }
            if (c == '\n' && i > 0 && s[i - 1] == ' ') {
                ok = false;
                break;
            }
        }
        if (ok && s.back() == ' ') {
            ok = false;
        }
        if (ok) {
            out += '|';
            if (s.front() == ' ' || s.front() == '\n') {
                out += '2';
            }
            size_t trailing = 0;
            for (size_t i = s.size(); i > 0 && s[i - 1] == '\n'; --i) {
                ++trailing;
            }
            if (trailing == 0) {
                out += '-';
            } else if (trailing > 1) {
                out += '+';
            }
            out += '\n';
            std::string_view body(s);
            if (trailing == 1) {
                body.remove_suffix(1);
            } else if (trailing > 1) {
                body.remove_suffix(1);
            }
            size_t start = 0;
            while (start <= body.size()) {
                size_t nl = body.find('\n', start);
                std::string_view line = body.substr(
                    start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
                if (!line.empty()) {
                    pad(out, indent);
                    out += line;
                }
                if (nl == std::string_view::npos) {
                    break;
                }
                out += '\n';
                start = nl + 1;
            }
            return;
        }
    }
    if (needs_quotes(s) || multiline || !printable_plain(s)) {
        out += Value(s).dump(); // JSON escapes are valid YAML double-quoted escapes
        return;
    }
    out += s;
}

} // namespace

Value resolve_plain_scalar(std::string_view s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
        return nullptr;
    }
    if (s == "true" || s == "True" || s == "TRUE") {
        return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
        return false;
    }
    if (canonical_int(s)) {
        if (s.starts_with('-')) {
            std::int64_t v = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec == std::errc() && p == s.data() + s.size()) {
                return v;
            }
        } else {
            std::uint64_t v = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec == std::errc() && p == s.data() + s.size()) {
                if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
                    return static_cast<std::int64_t>(v);
                }
                return v;
            }
        }
        return std::string(s); // past 64 bits: keep the digits
    }
    // A decimal fraction whose shortest round-trip form is this very text.
    auto dot = s.find('.');
    if (dot != std::string_view::npos && dot > 0 && canonical_int(s.substr(0, dot)) &&
        all_digits(s.substr(dot + 1))) {
        double d = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        if (ec == std::errc() && p == s.data() + s.size()) {
            Value v = d;
            if (v.dump() == s) {
                return v;
            }
        }
    }
    return std::string(s);
}

bool needs_quotes(std::string_view s) {
    if (s.empty()) {
        return true;
    }
    // Words that YAML 1.1 or 1.2 read as null or booleans.
    static constexpr std::string_view k_words[] = {
        "~",     "null",  "Null",  "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
        "yes",   "Yes",   "YES",   "no",   "No",   "NO",   "on",   "On",    "ON",    "off",
        "Off",   "OFF",   "y",     "Y",    "n",    "N",    ".inf", ".Inf",  ".INF",  "-.inf",
        "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<",   "=",
    };
    for (auto w : k_words) {
        if (s == w) {
            return true;
        }
    }
    // Anything number-like in either schema (0755, 1e3, 0x1f, 1_000, 60:30, +1, .5).
    {
        unsigned char c0 = static_cast<unsigned char>(s.front());
        if (std::isdigit(c0) || c0 == '+' || c0 == '-' || c0 == '.') {
            bool numberish = true;
            for (unsigned char c : s) {
                if (!(std::isxdigit(c) || c == '.' || c == '_' || c == ':' || c == '+' ||
                      c == '-' || c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'e' ||
                      c == 'E')) {
                    numberish = false;
                    break;
                }
            }
            if (numberish) {
                return true;
            }
        }
    }
    // Indicators that cannot start a plain scalar, and sequences that end one early.
    static constexpr std::string_view k_leading = "-?:,[]{}#&*!|>'\"%@` \t";
    if (k_leading.find(s.front()) != std::string_view::npos) {
        // "-foo" and ":foo" are legal plain scalars, but quoting them is simpler and harmless.
        return true;
    }
    if (s.back() == ' ' || s.back() == '\t' || s.back() == ':') {
        return true;
    }
    if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos ||
        s.find('\t') != std::string_view::npos) {
        return true;
    }
    if (s == "---" || s == "...") {
        return true;
    }
    return false;
}

namespace {

Result<std::vector<Value>> parse_json_stream(std::string_view text, std::string_view source) {
    std::vector<Value> docs;
    size_t pos = 0;
    while (true) {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) {
            ++pos;
        }
        if (pos >= text.size()) {
            break;
        }
        // Find the end of one JSON value with a SAX pass so that concatenated values work.
        std::string_view rest = text.substr(pos);
        size_t consumed = 0;
        Value v;
        try {
            // nlohmann has no "parse a prefix" API; use an input adapter over a stringstream and
            // read what it consumed.
            std::istringstream in{std::string(rest)};
            in >> v; // reads one value, leaving what follows
            auto at = in.tellg();
            consumed = at < 0 ? rest.size() : static_cast<size_t>(at);
        } catch (const Value::parse_error& e) {
            // Report line and column of the byte offset.
            size_t off = pos + (e.byte > 0 ? e.byte - 1 : 0);
            size_t line = 1;
            size_t col = 1;
            for (size_t i = 0; i < off && i < text.size(); ++i) {
                if (text[i] == '\n') {
                    ++line;
                    col = 1;
                } else {
                    ++col;
                }
            }
            std::string what = e.what();
            auto p = what.find("parse error");
            auto colon = what.find(": ", p == std::string::npos ? 0 : p);
            std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
            return make_error(ErrorKind::Usage,
                              std::string(source) + ":" + std::to_string(line) + ":" +
                                  std::to_string(col) + ": malformed JSON: " + detail,
                              "", "MalformedInput");
        }
        docs.push_back(std::move(v));
        pos += consumed;
        if (consumed == 0) {
            break;
        }
    }
    return docs;
}

} // namespace

Result<std::vector<Value>> parse_documents(std::string_view text, std::string_view source) {
    size_t first = 0;
    while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) {
        ++first;
    }
    if (first < text.size() && (text[first] == '{' || text[first] == '[')) {
        return parse_json_stream(text, source);
    }
    // The block reader covers machine configurations at a fraction of yaml-cpp's cost; whatever
    // it does not fully understand, errors included, goes to yaml-cpp.
    if (auto fast = read_block_yaml(text)) {
        return std::move(*fast);
    }
    return parse_documents_yaml_cpp(text, source);
}

Result<std::vector<Value>> parse_documents_yaml_cpp(std::string_view text,
                                                    std::string_view source) {
    std::vector<Value> docs;
    try {
        std::vector<YAML::Node> nodes = YAML::LoadAll(std::string(text));
        for (const auto& n : nodes) {
            if (n.IsNull() || !n.IsDefined()) {
                continue;
            }
            docs.push_back(from_yaml(n));
        }
    } catch (const YAML::Exception& e) {
        return make_error(ErrorKind::Usage,
                          std::string(source) + ":" + std::to_string(e.mark.line + 1) + ":" +
                              std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg,
                          "", "MalformedInput");
    }
    return docs;
}

Result<Value> parse_one(std::string_view text, std::string_view source) {
    auto docs = parse_documents(text, source);
    if (!docs) {
        return docs.error();
    }
    if (docs->empty()) {
        return Value(nullptr);
    }
    if (docs->size() > 1) {
        return make_error(ErrorKind::Usage,
                          std::string(source) + ": expected one document, found " +
                              std::to_string(docs->size()),
                          "", "MalformedInput");
    }
    return std::move(docs->front());
}

std::string to_yaml(const Value& v) {
    std::string out;
    if (!v.is_structured() || v.empty()) {
        emit_empty_or_scalar(out, v, 2);
        out += '\n';
        return out;
    }
    emit(out, v, 0, false);
    return out;
}

std::string to_yaml_stream(const std::vector<Value>& docs) {
    std::string out;
    for (size_t i = 0; i < docs.size(); ++i) {
        if (i != 0) {
            out += "---\n";
        }
        out += to_yaml(docs[i]);
    }
    return out;
}

std::string to_json(const Value& v) {
    return v.dump(2) + "\n";
}

const Value* find_path(const Value& v, std::string_view dotted) {
    const Value* cur = &v;
    size_t start = 0;
    while (start <= dotted.size()) {
        size_t dot = dotted.find('.', start);
        std::string key(dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                                           : dot - start));
        if (!cur->is_object()) {
            return nullptr;
        }
        auto it = cur->find(key);
        if (it == cur->end()) {
            return nullptr;
        }
        cur = &*it;
        if (dot == std::string_view::npos) {
            break;
        }
        start = dot + 1;
    }
    return cur;
}

std::string get_string(const Value& v, std::string_view dotted, std::string fallback) {
    const Value* p = find_path(v, dotted);
    if (p == nullptr || !p->is_string()) {
        return fallback;
    }
    return p->get<std::string>();
}

} // namespace ichor::doc
