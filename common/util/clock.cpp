#include "common/util/clock.h"

#include <chrono>
#include <ctime>
#include <thread>

namespace ichor::util {

std::string now_rfc3339() {
    char buf[32];
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

namespace {

class SystemClock final : public Clock {
  public:
    std::string now_rfc3339() override { return util::now_rfc3339(); }
    std::int64_t monotonic_ms() override {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
    void sleep_ms(std::int64_t ms) override {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
};

} // namespace

Clock& system_clock() {
    static SystemClock clock;
    return clock;
}

} // namespace ichor::util
