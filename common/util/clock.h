// The wall clock, read in one place (render and drift never call it).
#pragma once

#include <string>

namespace ichor::util {

// Now in UTC as RFC 3339 with seconds ("2026-11-29T19:06:49Z").
std::string now_rfc3339();

} // namespace ichor::util
