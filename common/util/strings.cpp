#include "common/util/strings.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace ichor::util {

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        size_t pos = s.find(sep, start);
        if (pos == std::string_view::npos) {
            out.emplace_back(s.substr(start));
            return out;
        }
        out.emplace_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i != 0) {
            out += sep;
        }
        out += parts[i];
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.starts_with(prefix);
}
bool ends_with(std::string_view s, std::string_view suffix) {
    return s.ends_with(suffix);
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

namespace {
constexpr std::string_view k_b64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view data) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                     (static_cast<unsigned char>(data[i + 1]) << 8) |
                     static_cast<unsigned char>(data[i + 2]);
        out += k_b64[(v >> 18) & 63];
        out += k_b64[(v >> 12) & 63];
        out += k_b64[(v >> 6) & 63];
        out += k_b64[v & 63];
    }
    if (i < data.size()) {
        unsigned v = static_cast<unsigned char>(data[i]) << 16;
        if (i + 1 < data.size()) {
            v |= static_cast<unsigned char>(data[i + 1]) << 8;
        }
        out += k_b64[(v >> 18) & 63];
        out += k_b64[(v >> 12) & 63];
        out += i + 1 < data.size() ? k_b64[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

namespace {

// The value of each base64 digit, -1 for a byte that is none; built once.
constexpr std::array<signed char, 256> base64_values() {
    std::array<signed char, 256> table{};
    for (auto& v : table) {
        v = -1;
    }
    for (std::size_t i = 0; i < k_b64.size(); ++i) {
        table[static_cast<unsigned char>(k_b64[i])] = static_cast<signed char>(i);
    }
    return table;
}
constexpr std::array<signed char, 256> k_b64_values = base64_values();

// std::isspace in the "C" locale, without its call per byte.
constexpr bool ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

} // namespace

std::optional<std::string> base64_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size() / 4 * 3 + 3);
    unsigned acc = 0;
    int bits = 0;
    int pad = 0;
    for (char c : text) {
        if (ascii_space(c)) {
            continue;
        }
        if (c == '=') {
            ++pad;
            continue;
        }
        if (pad > 0) {
            return std::nullopt; // data after padding
        }
        int v = k_b64_values[static_cast<unsigned char>(c)];
        if (v < 0) {
            return std::nullopt;
        }
        acc = (acc << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    if (pad > 2 || bits >= 6) {
        return std::nullopt;
    }
    return out;
}

std::string hex(std::string_view bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += k_digits[c >> 4];
        out += k_digits[c & 15];
    }
    return out;
}

std::string sha256_digest(std::string_view data) {
    // Fetched once: EVP_sha256() makes OpenSSL 3 look the implementation up in its provider on
    // every digest, three times the cost of hashing a secret of 64 bytes
    // (bench/HISTORY.md, "SHA-256 fetched once").
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), md, &len, sha256 != nullptr ? sha256 : EVP_sha256(),
               nullptr);
    return "sha256:" + hex(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
    if (text.empty()) {
        return std::nullopt;
    }
    double total = 0;
    size_t i = 0;
    while (i < text.size()) {
        size_t start = i;
        while (i < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
            ++i;
        }
        std::string_view number = text.substr(start, i - start);
        // std::stod throws on "." and reads "1.2.3" as 1.2: one point at most, and a digit.
        if (std::count(number.begin(), number.end(), '.') > 1 ||
            number.find_first_of("0123456789") == std::string_view::npos) {
            return std::nullopt;
        }
        double n = std::stod(std::string(number));
        size_t ustart = i;
        while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
            ++i;
        }
        std::string_view unit = text.substr(ustart, i - ustart);
        if (unit == "ms") {
            total += n;
        } else if (unit == "s") {
            total += n * 1000;
        } else if (unit == "m") {
            total += n * 60000;
        } else if (unit == "h") {
            total += n * 3600000;
        } else {
            return std::nullopt;
        }
    }
    return static_cast<std::int64_t>(total);
}

std::string format_duration_ms(std::int64_t ms) {
    if (ms < 1000) {
        return std::to_string(ms) + "ms";
    }
    std::int64_t s = ms / 1000;
    std::string out;
    if (s >= 3600) {
        out += std::to_string(s / 3600) + "h";
        s %= 3600;
    }
    if (s >= 60 || !out.empty()) {
        if (s / 60 != 0 || !out.empty()) {
            out += std::to_string(s / 60) + "m";
        }
        s %= 60;
    }
    if (s != 0 || out.empty()) {
        out += std::to_string(s) + "s";
    }
    return out;
}

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> widths;
    for (const auto& row : rows) {
        if (widths.size() < row.size()) {
            widths.resize(row.size(), 0);
        }
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) {
                line.append(widths[i] - row[i].size() + 3, ' ');
            }
        }
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line + "\n";
    }
    return out;
}

} // namespace ichor::util
