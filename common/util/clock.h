// The wall clock, read in one place (render and drift never call it), and the clock a waiting
// stage is handed (Clock): tests give a fake one, so that time passes without sleeping.
#pragma once

#include <cstdint>
#include <string>

namespace ichor::util {

// Now in UTC as RFC 3339 with seconds ("2026-11-29T19:06:49Z").
std::string now_rfc3339();

// Time as a stage reads it: the wall clock for timestamps, a monotonic one for deadlines, and the
// pause between two polls.
class Clock {
  public:
    virtual ~Clock() = default;
    // now_rfc3339's format.
    virtual std::string now_rfc3339() = 0;
    // Milliseconds of a monotonic clock (only differences mean anything).
    virtual std::int64_t monotonic_ms() = 0;
    // Waits `ms` milliseconds (a fake advances monotonic_ms instead).
    virtual void sleep_ms(std::int64_t ms) = 0;
};

// The process's clock (std::chrono::steady_clock, a real sleep).
Clock& system_clock();

} // namespace ichor::util
