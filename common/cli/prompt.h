// Consent prompts on the terminal: a question on stderr, one typed line from stdin. Only when
// both are terminals; a tool without a terminal takes its consent from flags instead.
#pragma once

#include "common/cli/streams.h"

#include <optional>
#include <string>
#include <string_view>

namespace ichor::cli {

// True when a question can be asked: stdin and stderr are terminals.
bool can_prompt(const Streams& s);

// Prints `question` (no newline added) on err and reads one line from in, without its line end
// and surrounding blanks. nullopt when no terminal can be asked (can_prompt is false) or stdin
// ended before a line.
std::optional<std::string> prompt_line(Streams& s, std::string_view question);

} // namespace ichor::cli
