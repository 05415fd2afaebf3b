#include "common/doc/json_stream.h"
#include "common/doc/value.h"
#include "common/doc/vocabulary.h"
#include "common/doc/yaml_block.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <unordered_set>

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

// Thrown inside the converters to unwind with a refusal already made (caught at their entry).
struct Refused {
    Error error;
};

std::string where(std::string_view source, std::size_t line, std::size_t column) {
    return std::string(source) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string limits_hint() {
    return "the limits are in docs/design.md, \"Limits of the readers\"";
}

Error depth_error(std::string_view at, const Limits& limits) {
    return make_error(ErrorKind::Usage,
                      std::string(at) + ": the input nests deeper than " +
                          std::to_string(limits.max_depth) + " levels",
                      "no Kubernetes or Talos document nests this deep; " + limits_hint(),
                      std::string(vocab::code::k_input_limit));
}

Error nodes_error(std::string_view source, const Limits& limits) {
    return make_error(ErrorKind::Usage,
                      std::string(source) + ": the input has more than " +
                          std::to_string(limits.max_nodes) + " values",
                      "split the input; " + limits_hint(), std::string(vocab::code::k_input_limit));
}

// YAML nodes to the document model, counting as it goes (Limits): an alias is a shared node in
// yaml-cpp's graph, so a naive walk expands an alias bomb to billions of values or never ends on
// a cyclic alias. A node seen before (same position in the text) is one reached through an alias.
class YamlConverter {
  public:
    YamlConverter(std::string_view source, const Limits& limits)
        : m_source(source), m_limits(limits) {}

    Value convert(const YAML::Node& node) { return walk(node, false); }

  private:
    [[noreturn]] void refuse(Error e) { throw Refused{std::move(e)}; }

    std::string at(const YAML::Node& node) const {
        YAML::Mark m = node.Mark();
        return where(m_source, static_cast<std::size_t>(m.line + 1),
                     static_cast<std::size_t>(m.column + 1));
    }

    void count(const YAML::Node& node, bool aliased) {
        ++m_decoded;
        if (aliased) {
            ++m_aliased;
        }
        if (m_decoded > m_limits.max_nodes) {
            refuse(nodes_error(m_source, m_limits));
        }
        if (m_aliased > m_limits.alias_min_aliased && m_decoded > m_limits.alias_min_decoded &&
            static_cast<double>(m_aliased) / static_cast<double>(m_decoded) >
                allowed_alias_ratio(m_decoded)) {
            refuse(make_error(ErrorKind::Usage,
                              at(node) + ": the document contains excessive aliasing (" +
                                  std::to_string(m_aliased) + " of the first " +
                                  std::to_string(m_decoded) + " values come through aliases)",
                              "expand the anchors (&) and aliases (*) the input needs, or drop "
                              "them; " +
                                  limits_hint(),
                              std::string(vocab::code::k_input_limit)));
        }
    }

    Value walk(const YAML::Node& node, bool aliased) {
        const int pos = node.Mark().pos;
        bool collection = node.IsMap() || node.IsSequence();
        if (!aliased && !m_seen.insert(pos).second) {
            aliased = true;
        }
        if (aliased && collection && std::find(m_path.begin(), m_path.end(), pos) != m_path.end()) {
            refuse(make_error(ErrorKind::Usage,
                              at(node) + ": an alias refers to a collection that contains it",
                              "an anchored value cannot contain its own alias",
                              std::string(vocab::code::k_input_limit)));
        }
        count(node, aliased);
        switch (node.Type()) {
        case YAML::NodeType::Null:
            return nullptr;
        case YAML::NodeType::Scalar: {
            const std::string& tag = node.Tag();
            const std::string& s = node.Scalar();
            if (tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
                tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
                return resolve_plain_scalar(s);
            }
            return s; // quoted, or an explicit/unknown tag: a string
        }
        case YAML::NodeType::Sequence:
        case YAML::NodeType::Map:
            break;
        case YAML::NodeType::Undefined:
            return nullptr;
        }
        if (m_path.size() >= m_limits.max_depth) {
            refuse(depth_error(at(node), m_limits));
        }
        m_path.push_back(pos);
        Value out;
        if (node.IsSequence()) {
            out = Value::array();
            for (const auto& item : node) {
                out.push_back(walk(item, aliased));
            }
        } else {
            out = Value::object();
            for (const auto& kv : node) {
                std::string key;
                if (kv.first.IsScalar()) {
                    key = kv.first.Scalar();
                } else {
                    walk(kv.first, aliased); // counted (and refused) before it is emitted
                    key = YAML::Dump(kv.first);
                }
                out[key] = walk(kv.second, aliased);
            }
        }
        m_path.pop_back();
        return out;
    }

    std::string_view m_source;
    const Limits& m_limits;
    std::size_t m_decoded = 0;
    std::size_t m_aliased = 0;
    std::unordered_set<int> m_seen; // positions of the nodes decoded once
    std::vector<int> m_path;        // positions of the collections being decoded
};

void emit_string(std::string& out, const std::string& s, int indent);

// A double-quoted string. Bytes that are not UTF-8 (YAML input may carry them) become U+FFFD
// instead of nlohmann's type_error escaping the emitter (found by tests/fuzz/fuzz_stream).
std::string quoted(const std::string& s) {
    return Value(s).dump(-1, ' ', false, Value::error_handler_t::replace);
}
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
        out += quoted(key);
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
        out += quoted(s); // JSON escapes are valid YAML double-quoted escapes
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

// Line and column (1-based) of a byte offset.
std::string where_offset(std::string_view text, std::string_view source, std::size_t off) {
    std::size_t line = 1;
    std::size_t col = 1;
    for (std::size_t i = 0; i < off && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return where(source, line, col);
}

// nlohmann's parser keeps no depth or size limit, and the suite's emitters and dump() recurse:
// one linear pass counts the nesting and the values before anything is built. Malformed JSON is
// left to the parser, which reports it.
std::optional<Error> scan_json(std::string_view text, std::string_view source,
                               const Limits& limits) {
    std::size_t depth = 0;
    std::size_t values = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i) {
                if (text[i] == '\\') {
                    ++i;
                }
            }
            std::size_t j = i + 1;
            while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) {
                ++j;
            }
            if (j >= text.size() || text[j] != ':') {
                ++values; // a key is not a value of its own
            }
        } else if (c == '[' || c == '{') {
            ++values;
            if (++depth > limits.max_depth) {
                return depth_error(where_offset(text, source, i), limits);
            }
        } else if (c == ']' || c == '}') {
            depth = depth > 0 ? depth - 1 : 0;
        } else if (c == '-' || std::isalnum(static_cast<unsigned char>(c))) {
            ++values;
            while (i + 1 < text.size() &&
                   (std::isalnum(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '.' ||
                    text[i + 1] == '-' || text[i + 1] == '+')) {
                ++i;
            }
        }
        if (values > limits.max_nodes) {
            return nodes_error(source, limits);
        }
    }
    return std::nullopt;
}

Result<std::vector<Value>> parse_json_stream(std::string_view text, std::string_view source,
                                             const Limits& limits) {
    if (auto refused = scan_json(text, source, limits)) {
        return *refused;
    }
    std::vector<Value> docs;
    std::istringstream in{std::string(text)};
    size_t pos = 0;
    while (true) {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) {
            ++pos;
        }
        if (pos >= text.size()) {
            break;
        }
        // Find the end of one JSON value so that concatenated values work.
        std::string_view rest = text.substr(pos);
        size_t consumed = 0;
        Value v;
        try {
            // nlohmann has no "parse a prefix" API; use an input adapter over a stringstream and
            // read what it consumed.
            // One stream for the whole text: a copy of the rest per value made a stream of many
            // small values quadratic (found by tests/fuzz/fuzz_stream running out of memory).
            in.clear();
            in.seekg(static_cast<std::streamoff>(pos));
            in >> v; // reads one value, leaving what follows
            auto at = in.tellg();
            consumed = at < 0 ? rest.size() : static_cast<size_t>(at) - pos;
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
                              "", vocab::code::k_malformed_input);
        } catch (const Value::exception& e) {
            // A number past double's range ("1e9999") is out_of_range, not parse_error (found by
            // tests/fuzz/fuzz_helm_record); uncaught, it ended the process.
            return make_error(ErrorKind::Usage,
                              std::string(source) + ": malformed JSON: " + e.what(), "",
                              vocab::code::k_malformed_input);
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

double allowed_alias_ratio(std::size_t decoded) {
    constexpr double k_low = 400'000;
    constexpr double k_high = 4'000'000;
    const auto d = static_cast<double>(decoded);
    if (d <= k_low) {
        return 0.99;
    }
    if (d >= k_high) {
        return 0.10;
    }
    return 0.99 - 0.89 * (d - k_low) / (k_high - k_low);
}

namespace {

Error size_error(std::string_view source, std::size_t size, std::size_t limit, const char* what,
                 const char* hint) {
    return make_error(ErrorKind::Usage,
                      std::string(source) + ": the input is " + std::to_string(size) +
                          " bytes, over the limit of " + std::to_string(limit) + " bytes (" +
                          std::to_string(limit >> 20) + " MiB) for " + what,
                      std::string(hint) + "; " + limits_hint(),
                      std::string(vocab::code::k_input_limit));
}

Result<std::vector<Value>> parse_within(std::string_view text, std::string_view source,
                                        const Limits& limits) {
    size_t first = 0;
    while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) {
        ++first;
    }
    if (first < text.size() && (text[first] == '{' || text[first] == '[')) {
        return parse_json_stream(text, source, limits);
    }
    // The block reader covers machine configurations at a fraction of yaml-cpp's cost; whatever
    // it does not fully understand, errors and limits included, goes to yaml-cpp.
    if (auto fast = read_block_yaml(text, limits)) {
        return std::move(*fast);
    }
    return parse_documents_yaml_cpp(text, source, limits);
}

} // namespace

Result<std::vector<Value>> parse_documents(std::string_view text, std::string_view source,
                                           const Limits& limits) {
    if (text.size() > limits.max_stream_bytes) {
        return size_error(source, text.size(), limits.max_stream_bytes, "a stream",
                          "split the stream and run the tool on each part");
    }
    return parse_within(text, source, limits);
}

namespace {

// yaml-cpp 0.7 never gets past a "," outside a flow collection where a document's node should
// start ("," or "- a\n,"): it emits empty documents at the same place without end, and LoadAll
// fills memory (found by tests/fuzz/fuzz_bundle: 13 GB in a minute from one byte). This first pass
// over yaml-cpp's events, before LoadAll builds anything, refuses a document that starts where the
// one before it did, and counts the events against the value limit as a backstop (the
// converter's own count, below, is the exact one).
class ProgressGuard : public YAML::EventHandler {
  public:
    ProgressGuard(std::string_view source, const Limits& limits)
        : m_source(source), m_limits(limits) {}

    void OnDocumentStart(const YAML::Mark& mark) override {
        if (m_documents++ > 0 && mark.pos == m_last_start) {
            throw Refused{make_error(
                ErrorKind::Usage,
                where(m_source, static_cast<std::size_t>(mark.line + 1),
                      static_cast<std::size_t>(mark.column + 1)) +
                    ": malformed YAML: the reader cannot go on from here (a \",\" outside a "
                    "flow collection?)",
                "", vocab::code::k_malformed_input)};
        }
        m_last_start = mark.pos;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {
        count();
    }
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        count();
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        count();
    }
    void OnMapEnd() override {}

  private:
    // A mapping's keys are events too, so values are at least half the events: past twice the
    // limit, the values are past it.
    void count() {
        if (++m_events > 2 * m_limits.max_nodes) {
            throw Refused{nodes_error(m_source, m_limits)};
        }
    }

    std::string_view m_source;
    const Limits& m_limits;
    std::size_t m_documents = 0;
    std::size_t m_events = 0;
    int m_last_start = -1;
};

} // namespace

Result<std::vector<Value>> parse_documents_yaml_cpp(std::string_view text, std::string_view source,
                                                    const Limits& limits) {
    std::vector<Value> docs;
    try {
        {
            std::istringstream in{std::string(text)};
            YAML::Parser parser(in);
            ProgressGuard guard(source, limits);
            while (parser.HandleNextDocument(guard)) {
            }
        }
        std::vector<YAML::Node> nodes = YAML::LoadAll(std::string(text));
        YamlConverter converter(source, limits); // one budget for all documents of the input
        for (const auto& n : nodes) {
            if (n.IsNull() || !n.IsDefined()) {
                continue;
            }
            docs.push_back(converter.convert(n));
        }
    } catch (const Refused& r) {
        return r.error;
    } catch (const YAML::DeepRecursion& e) {
        return depth_error(where(source, static_cast<std::size_t>(e.mark.line + 1),
                                 static_cast<std::size_t>(e.mark.column + 1)),
                           limits);
    } catch (const YAML::Exception& e) {
        return make_error(ErrorKind::Usage,
                          std::string(source) + ":" + std::to_string(e.mark.line + 1) + ":" +
                              std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg,
                          "", vocab::code::k_malformed_input);
    }
    return docs;
}

Result<Value> parse_one(std::string_view text, std::string_view source, const Limits& limits) {
    if (text.size() > limits.max_document_bytes) {
        return size_error(source, text.size(), limits.max_document_bytes, "one document",
                          "no kubeconfig, talosconfig or secrets bundle is this large; check "
                          "that the right file was given");
    }
    auto docs = parse_within(text, source, limits);
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
                          "", vocab::code::k_malformed_input);
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

namespace {

// True when nlohmann's dump writes `s` between its quotes as it is: printable ASCII without a
// quote or a backslash (no escape, no UTF-8 to check). Eight bytes at a time: a word has a byte
// below 0x20 when (w - 0x20..20) & ~w has a high bit set, a byte of 0x80 or more when w has one,
// and a byte equal to b when w ^ bb..bb has a zero byte.
bool plain_json_string(std::string_view s) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    auto zero_byte = [&](std::uint64_t w) { return (w - ones) & ~w & highs; };
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, s.data() + i, 8);
        if ((w & highs) != 0 || (((w - ones * 0x20) & ~w & highs) != 0) ||
            zero_byte(w ^ (ones * '"')) != 0 || zero_byte(w ^ (ones * '\\')) != 0) {
            return false;
        }
    }
    for (; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
            return false;
        }
    }
    return true;
}

void append_json_string(std::string& out, const std::string& s) {
    if (plain_json_string(s)) {
        out += '"';
        out += s;
        out += '"';
    } else { // escapes and the UTF-8 check (invalid bytes replaced) exactly as nlohmann writes them
        out += Value(s).dump(-1, ' ', false, Value::error_handler_t::replace);
    }
}

// Writes `v` exactly as v.dump(2, ' ', false, replace) does (tests/unit/test_doc_json.cpp holds
// the two to each other), appending to one string: nlohmann's serializer checks every byte of
// every string for UTF-8 through its decoder, which over an inspection of 256 nodes was most of
// the JSON output's time (bench/HISTORY.md, "to_json").
// With `flush_to`, the text written so far goes there whenever it passes k_json_flush_bytes,
// between two elements of a mapping or a list: the same bytes in the same order, never the whole
// document in memory at once.
constexpr std::size_t k_json_flush_bytes = 64 * 1024;

void append_json(std::string& out, const Value& v, int indent, std::ostream* flush_to = nullptr) {
    const bool object = v.is_object();
    if (object || v.is_array()) {
        if (v.empty()) {
            out += object ? "{}" : "[]";
            return;
        }
        out += object ? "{\n" : "[\n";
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (it != v.begin()) {
                out += ",\n";
            }
            out.append(static_cast<std::size_t>(indent + 2), ' ');
            if (object) {
                append_json_string(out, it.key());
                out += ": ";
            }
            append_json(out, it.value(), indent + 2, flush_to);
            if (flush_to != nullptr && out.size() >= k_json_flush_bytes) {
                flush_to->write(out.data(), static_cast<std::streamsize>(out.size()));
                out.clear();
            }
        }
        out += '\n';
        out.append(static_cast<std::size_t>(indent), ' ');
        out += object ? '}' : ']';
        return;
    }
    switch (v.type()) {
    case Value::value_t::string:
        append_json_string(out, v.get_ref<const std::string&>());
        return;
    case Value::value_t::boolean:
        out += v.get<bool>() ? "true" : "false";
        return;
    case Value::value_t::null:
        out += "null";
        return;
    default: // numbers, binary, discarded: rare; nlohmann formats them
        out += v.dump(2, ' ', false, Value::error_handler_t::replace);
        return;
    }
}

} // namespace

std::string to_json(const Value& v) {
    std::string out;
    append_json(out, v, 0);
    out += '\n';
    return out;
}

void write_json(std::ostream& os, const Value& v) {
    std::string out;
    out.reserve(2 * k_json_flush_bytes);
    append_json(out, v, 0, &os);
    out += '\n';
    os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

const Value* find_path(const Value& v, std::string_view dotted) {
    const Value* cur = &v;
    size_t start = 0;
    while (start <= dotted.size()) {
        size_t dot = dotted.find('.', start);
        // looked up as a view: no string made per segment (find_path is under most of the plan)
        std::string_view key = dotted.substr(
            start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
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
