#include "common/doc/yaml_block.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

namespace ichor::doc {

namespace {

// Deeper nesting goes to yaml-cpp, whose own depth guard then decides.
constexpr int k_max_depth = 100;
// YAML limits an implicit key to 1024 characters; stay clear of that edge.
constexpr size_t k_max_key = 1000;
// Characters that cannot start a plain scalar ('-' can, before a non-blank).
constexpr std::string_view k_indicators = "-?:,[]{}#&*!|>'\"%@`";
constexpr size_t k_npos = std::string_view::npos;

enum class Marker { None, Start, End };

struct Line {
    std::string_view text; // without its line break
    int indent = 0;        // leading spaces
    bool blank = false;    // nothing but spaces, or a comment
    Marker marker = Marker::None;
};

enum class KeyScan { NotKey, Key, Bad };

struct BlockHeader {
    char chomp = 'c'; // 'c' clip, '-' strip, '+' keep
    int indent = 0;   // indentation indicator, 0 when auto-detected
};

// Bytes that yaml-cpp treats specially or that the reader does not want to reason about: control
// characters (0x04 is yaml-cpp's end of stream), CR, DEL, byte order marks, NEL, LS and PS, and a
// first byte that could make yaml-cpp guess another encoding.
bool plain_bytes(std::string_view text) {
    if (!text.empty() && (static_cast<unsigned char>(text.front()) >= 0x80)) {
        return false;
    }
    for (size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            return false;
        }
        if (c == 0xef && text.substr(i, 3) == "\xef\xbb\xbf") {
            return false;
        }
        if (c == 0xc2 && text.substr(i, 2) == "\xc2\x85") {
            return false;
        }
        if (c == 0xe2 &&
            (text.substr(i, 3) == "\xe2\x80\xa8" || text.substr(i, 3) == "\xe2\x80\xa9")) {
            return false;
        }
    }
    return true;
}

bool is_seq_entry(std::string_view t, size_t i) {
    return i < t.size() && t[i] == '-' && (i + 1 == t.size() || t[i + 1] == ' ');
}

// Nothing from `i` on but spaces and an optional comment ('#' after a space).
bool only_comment(std::string_view t, size_t i) {
    while (i < t.size() && t[i] == ' ') {
        ++i;
    }
    return i == t.size() || (t[i] == '#' && i > 0 && t[i - 1] == ' ');
}

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

bool read_hex(std::string_view t, size_t i, size_t digits, std::uint32_t& cp) {
    if (i + digits > t.size()) {
        return false;
    }
    const char* end = t.data() + i + digits;
    auto [p, ec] = std::from_chars(t.data() + i, end, cp, 16);
    return ec == std::errc() && p == end;
}

// One escape of a double-quoted scalar, `i` at the backslash; moves `i` past it.
bool read_escape(std::string_view t, size_t& i, std::string& out) {
    if (i + 1 >= t.size()) {
        return false; // an escaped line break: a multi-line scalar
    }
    char c = t[i + 1];
    static constexpr std::string_view k_simple = "\\\"/ntr0";
    static constexpr std::string_view k_value = "\\\"/\n\t\r";
    if (auto k = k_simple.find(c); k != k_npos) {
        out += k < k_value.size() ? k_value[k] : '\0';
        i += 2;
        return true;
    }
    size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    std::uint32_t cp = 0;
    if (digits == 0 || !read_hex(t, i + 2, digits, cp) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
        return false;
    }
    append_utf8(out, cp);
    i += 2 + digits;
    return true;
}

// A quoted scalar that ends on its line, `i` at the opening quote; moves `i` past the closing one.
bool read_quoted(std::string_view t, size_t& i, std::string& out) {
    char quote = t[i++];
    while (i < t.size()) {
        char c = t[i];
        if (c == '\t') {
            return false;
        }
        if (c == quote) {
            if (quote == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
                out += '\'';
                i += 2;
                continue;
            }
            ++i;
            return true;
        }
        if (c == '\\' && quote == '"') {
            if (!read_escape(t, i, out)) {
                return false;
            }
            continue;
        }
        out += c;
        ++i;
    }
    return false;
}

// A plain key the reader is sure of: yaml-cpp keeps its text as written.
bool plain_key(std::string_view k) {
    if (k.empty() || k.size() > k_max_key || k == "null" || k == "Null" || k == "NULL") {
        return false;
    }
    auto ok = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '/' || c == '-';
    };
    return ok(k.front()) && k.front() != '-' && std::all_of(k.begin(), k.end(), ok);
}

// Whether the node at `col` is a mapping entry; on Key, `key` is its text and `after` the index
// past the ':'. Bad: a mapping entry whose key the reader does not handle.
KeyScan scan_key(std::string_view t, size_t col, std::string& key, size_t& after) {
    if (t[col] == '"' || t[col] == '\'') {
        size_t j = col;
        std::string s;
        if (!read_quoted(t, j, s)) {
            return KeyScan::Bad;
        }
        if (j < t.size() && t[j] == ':' && (j + 1 == t.size() || t[j + 1] == ' ')) {
            if (j - col > k_max_key) {
                return KeyScan::Bad;
            }
            key = std::move(s);
            after = j + 1;
            return KeyScan::Key;
        }
        return KeyScan::NotKey;
    }
    size_t i = col;
    for (; i < t.size(); ++i) {
        if (t[i] == ':' && (i + 1 == t.size() || t[i + 1] == ' ')) {
            break;
        }
        if (t[i] == '#' && i > col && t[i - 1] == ' ') {
            return KeyScan::NotKey;
        }
    }
    if (i == t.size()) {
        return KeyScan::NotKey;
    }
    std::string_view k = t.substr(col, i - col);
    if (!plain_key(k)) {
        return KeyScan::Bad;
    }
    key.assign(k);
    after = i + 1;
    return KeyScan::Key;
}

// A single-line plain scalar from `i` to a comment or the end of the line, trailing spaces cut.
bool read_plain(std::string_view t, size_t i, std::string_view& out) {
    char c = t[i];
    if (k_indicators.find(c) != k_npos &&
        (c != '-' || i + 1 >= t.size() || t[i + 1] == ' ' || t[i + 1] == '\t')) {
        return false;
    }
    size_t end = t.find(" #", i);
    std::string_view s = t.substr(i, end == k_npos ? k_npos : end - i);
    while (!s.empty() && s.back() == ' ') {
        s.remove_suffix(1);
    }
    if (s.find('\t') != k_npos || s.find(": ") != k_npos || s.back() == ':') {
        return false;
    }
    out = s;
    return true;
}

bool read_block_header(std::string_view t, size_t i, BlockHeader& h) {
    for (int k = 0; k < 2 && i < t.size(); ++k) {
        char c = t[i];
        if ((c == '-' || c == '+') && h.chomp == 'c') {
            h.chomp = c;
        } else if (c >= '1' && c <= '9' && h.indent == 0) {
            h.indent = c - '0';
        } else {
            break;
        }
        ++i;
    }
    return only_comment(t, i);
}

// Marks a line as blank or a document marker; false when the line is one the reader gives up on.
bool classify(Line& l) {
    std::string_view t = l.text;
    size_t sp = t.find_first_not_of(' ');
    l.indent = static_cast<int>(sp == k_npos ? t.size() : sp);
    if (sp == k_npos || t[sp] == '#') {
        l.blank = true;
        return true;
    }
    if (t[sp] == '\t' || (sp == 0 && t[0] == '%')) {
        return false;
    }
    if (sp == 0 && (t.starts_with("---") || t.starts_with("..."))) {
        if (t.size() > 3 && t[3] != ' ') {
            return false;
        }
        if (!only_comment(t, 3)) {
            return false;
        }
        l.marker = t[0] == '-' ? Marker::Start : Marker::End;
    }
    return true;
}

// A recursive descent over the lines of one stream. Every parse function returns false to give
// up; a node's function leaves m_pos at the first line it did not consume. `parent` is the
// indentation of the enclosing collection (-1 at the top), which block scalars measure from.
class BlockReader {
  public:
    BlockReader(std::string_view text, std::size_t max_nodes)
        : m_text(text), m_nodes_left(max_nodes) {}

    bool read(std::vector<Value>& docs);

  private:
    bool split();
    bool read_document(size_t begin, size_t end, std::vector<Value>& docs);
    size_t next_content(size_t i) const;
    bool parse_node(size_t line, size_t col, int parent, Value& out);
    bool parse_mapping(size_t line, size_t col, Value& out);
    bool parse_sequence(size_t line, size_t col, Value& out);
    bool parse_entry_value(size_t line, size_t after, int indent, Value& out);
    bool parse_nested(size_t from, int indent, bool same_indent_seq, Value& out);
    bool parse_inline(size_t line, size_t i, int parent, Value& out);
    bool block_indent(size_t first, int parent, const BlockHeader& h, int& indent) const;
    bool parse_block_scalar(size_t first, int parent, const BlockHeader& h, Value& out);

    std::string_view m_text;
    std::vector<Line> m_lines;
    bool m_final_newline = false;
    size_t m_pos = 0; // the first line not consumed by the node just parsed
    size_t m_end = 0; // the end of the current document (a marker line or m_lines.size())
    int m_depth = 0;
    // Values still allowed (Limits::max_nodes); every value is a document, a mapping's value or
    // a sequence's item, and each of those takes one.
    std::size_t m_nodes_left;
    bool take_node() {
        if (m_nodes_left == 0) {
            return false;
        }
        --m_nodes_left;
        return true;
    }
};

bool BlockReader::split() {
    m_lines.reserve(static_cast<size_t>(std::count(m_text.begin(), m_text.end(), '\n')) + 1);
    size_t start = 0;
    while (start < m_text.size()) {
        size_t nl = m_text.find('\n', start);
        Line l;
        l.text = m_text.substr(start, nl == k_npos ? k_npos : nl - start);
        if (!classify(l)) {
            return false;
        }
        m_lines.push_back(l);
        if (nl == k_npos) {
            return true;
        }
        start = nl + 1;
    }
    m_final_newline = true;
    return true;
}

bool BlockReader::read(std::vector<Value>& docs) {
    if (!plain_bytes(m_text) || !split()) {
        return false;
    }
    size_t begin = 0;
    while (true) {
        size_t end = begin;
        while (end < m_lines.size() && m_lines[end].marker == Marker::None) {
            ++end;
        }
        if (!read_document(begin, end, docs)) {
            return false;
        }
        if (end == m_lines.size()) {
            return true;
        }
        if (m_lines[end].marker == Marker::End) {
            // Only "---" or the end of the stream may follow "...": no bare documents.
            ++end;
            while (end < m_lines.size() && m_lines[end].blank) {
                ++end;
            }
            if (end == m_lines.size()) {
                return true;
            }
            if (m_lines[end].marker != Marker::Start) {
                return false;
            }
        }
        begin = end + 1;
    }
}

bool BlockReader::read_document(size_t begin, size_t end, std::vector<Value>& docs) {
    m_end = end;
    size_t first = next_content(begin);
    if (first == end) {
        return true; // an empty document is a null one, which parse_documents drops
    }
    Value v;
    if (!take_node() || !parse_node(first, static_cast<size_t>(m_lines[first].indent), -1, v) ||
        next_content(m_pos) != end) {
        return false;
    }
    if (!v.is_null()) {
        docs.push_back(std::move(v));
    }
    return true;
}

size_t BlockReader::next_content(size_t i) const {
    while (i < m_end && m_lines[i].blank) {
        ++i;
    }
    return i;
}

// The node whose text starts at column `col` of `line`, inside a collection indented `parent`.
bool BlockReader::parse_node(size_t line, size_t col, int parent, Value& out) {
    if (++m_depth > k_max_depth) {
        return false;
    }
    std::string_view t = m_lines[line].text;
    bool ok = false;
    std::string key;
    size_t after = 0;
    if (is_seq_entry(t, col)) {
        ok = parse_sequence(line, col, out);
    } else {
        switch (scan_key(t, col, key, after)) {
        case KeyScan::Key:
            ok = parse_mapping(line, col, out);
            break;
        case KeyScan::NotKey:
            ok = parse_inline(line, col, parent, out);
            break;
        case KeyScan::Bad:
            break;
        }
    }
    --m_depth;
    return ok;
}

bool BlockReader::parse_mapping(size_t line, size_t col, Value& out) {
    const int indent = static_cast<int>(col);
    out = Value::object();
    while (true) {
        std::string key;
        size_t after = 0;
        if (scan_key(m_lines[line].text, col, key, after) != KeyScan::Key) {
            return false;
        }
        Value v;
        if (!take_node() || !parse_entry_value(line, after, indent, v)) {
            return false;
        }
        // As from_yaml does: a later duplicate overwrites the value in the first one's place.
        out[key] = std::move(v);
        size_t next = next_content(m_pos);
        if (next >= m_end || m_lines[next].indent < indent) {
            return true;
        }
        if (m_lines[next].indent > indent) {
            return false; // a continuation line or an indentation error
        }
        line = next;
    }
}

bool BlockReader::parse_sequence(size_t line, size_t col, Value& out) {
    const int indent = static_cast<int>(col);
    out = Value::array();
    while (true) {
        std::string_view t = m_lines[line].text;
        size_t i = col + 1;
        while (i < t.size() && t[i] == ' ') {
            ++i;
        }
        Value item;
        bool ok = take_node() && (only_comment(t, i) ? parse_nested(line + 1, indent, false, item)
                                                     : parse_node(line, i, indent, item));
        if (!ok) {
            return false;
        }
        out.push_back(std::move(item));
        size_t next = next_content(m_pos);
        if (next >= m_end || m_lines[next].indent < indent) {
            return true;
        }
        if (m_lines[next].indent > indent) {
            return false;
        }
        if (!is_seq_entry(m_lines[next].text, col)) {
            return true; // the next key of the mapping this sequence is the value of
        }
        line = next;
    }
}

bool BlockReader::parse_entry_value(size_t line, size_t after, int indent, Value& out) {
    std::string_view t = m_lines[line].text;
    size_t i = after;
    while (i < t.size() && t[i] == ' ') {
        ++i;
    }
    if (only_comment(t, i)) {
        return parse_nested(line + 1, indent, true, out);
    }
    if (is_seq_entry(t, i)) {
        return false; // "key: - x"
    }
    return parse_inline(line, i, indent, out);
}

// The value of an entry whose line ends after its indicator: a node on the following lines, more
// indented than the entry (or a sequence at the key's indentation), else null.
bool BlockReader::parse_nested(size_t from, int indent, bool same_indent_seq, Value& out) {
    size_t j = next_content(from);
    if (j < m_end) {
        const Line& l = m_lines[j];
        if (l.indent > indent ||
            (same_indent_seq && l.indent == indent && is_seq_entry(l.text, l.indent))) {
            return parse_node(j, static_cast<size_t>(l.indent), indent, out);
        }
    }
    out = nullptr;
    m_pos = from;
    return true;
}

// A scalar or an empty flow collection that starts at `i` and ends on this line, or a block scalar.
bool BlockReader::parse_inline(size_t line, size_t i, int parent, Value& out) {
    std::string_view t = m_lines[line].text;
    m_pos = line + 1;
    char c = t[i];
    if (c == '|') {
        BlockHeader h;
        return parent >= 0 && read_block_header(t, i + 1, h) &&
               parse_block_scalar(line + 1, parent, h, out);
    }
    if (c == '"' || c == '\'') {
        std::string s;
        if (!read_quoted(t, i, s) || !only_comment(t, i)) {
            return false;
        }
        out = std::move(s);
        return true;
    }
    if (c == '[' || c == '{') {
        if (i + 1 >= t.size() || t[i + 1] != (c == '[' ? ']' : '}') || !only_comment(t, i + 2)) {
            return false;
        }
        out = c == '[' ? Value::array() : Value::object();
        return true;
    }
    std::string_view plain;
    if (!read_plain(t, i, plain)) {
        return false;
    }
    out = resolve_plain_scalar(plain);
    return true;
}

// The content indentation of a block scalar: the indicator's, or that of its first non-empty line.
bool BlockReader::block_indent(size_t first, int parent, const BlockHeader& h, int& indent) const {
    if (h.indent > 0) {
        indent = parent + h.indent;
        return true;
    }
    size_t longest_blank = 0;
    for (size_t i = first; i < m_end; ++i) {
        std::string_view t = m_lines[i].text;
        size_t sp = t.find_first_not_of(' ');
        if (sp == k_npos) {
            longest_blank = std::max(longest_blank, t.size());
            continue;
        }
        indent = static_cast<int>(sp);
        // An empty scalar, or leading blank lines longer than the indentation: yaml-cpp decides.
        return indent > parent && longest_blank <= sp;
    }
    return false;
}

bool BlockReader::parse_block_scalar(size_t first, int parent, const BlockHeader& h, Value& out) {
    int indent = 0;
    if (!block_indent(first, parent, h, indent)) {
        return false;
    }
    const auto n = static_cast<size_t>(indent);
    std::string body;
    size_t blanks = 0; // empty lines since the last text line
    size_t last_text = k_npos;
    size_t i = first;
    for (; i < m_end; ++i) {
        std::string_view t = m_lines[i].text;
        size_t sp = t.find_first_not_of(' ');
        if (sp == k_npos) {
            if (t.size() > n) {
                return false; // spaces past the indentation: content or not, let yaml-cpp say
            }
            ++blanks;
            continue;
        }
        if (sp < n) {
            break;
        }
        if (t.find('\t') != k_npos) {
            return false;
        }
        body.append(last_text == k_npos ? blanks : blanks + 1, '\n');
        body.append(t.substr(n));
        blanks = 0;
        last_text = i;
    }
    if (last_text == k_npos) {
        return false;
    }
    bool text_break = last_text + 1 < m_lines.size() || m_final_newline;
    if (h.chomp != '-' && text_break) {
        body += '\n';
    }
    if (h.chomp == '+') {
        if (blanks > 0 && i == m_lines.size() && !m_final_newline) {
            return false; // a last empty line without its line break
        }
        body.append(blanks, '\n');
    }
    out = std::move(body);
    m_pos = i;
    return true;
}

} // namespace

std::optional<std::vector<Value>> read_block_yaml(std::string_view text, const Limits& limits) {
    std::vector<Value> docs;
    BlockReader reader(text, limits.max_nodes);
    if (!reader.read(docs)) {
        return std::nullopt;
    }
    return docs;
}

} // namespace ichor::doc
