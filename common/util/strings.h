// String helpers. Pure; no locale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::util {

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string to_lower(std::string_view s);

// Base64 (standard alphabet, padded). decode returns nullopt on malformed input; whitespace is
// skipped so that wrapped PEM-style input decodes.
std::string base64_encode(std::string_view data);
std::optional<std::string> base64_decode(std::string_view text);

// Lower-case hex of bytes.
std::string hex(std::string_view bytes);

// "sha256:<hex>" of the bytes.
std::string sha256_digest(std::string_view data);

// Parses a Go-style duration ("20s", "1m30s", "500ms", "15m", "2h"); nullopt if malformed.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);
// Formats milliseconds the way the messages print them: "20s", "1m30s", "250ms".
std::string format_duration_ms(std::int64_t ms);

// Formats rows as aligned columns (the first row is the header), like kubectl get.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

} // namespace ichor::util
