// A call in flight on a talos::Loop, as a node's would be, for the tests of what runs on the
// loops (hold apply's reads, for_each_on_loops): an operation of the loop (a grpc::Alarm) that
// ends after `after`, or when released, running `then` on the loop's thread.
#pragma once

#include "common/talos/loop.h"

#include <grpcpp/alarm.h>

#include <chrono>
#include <functional>
#include <utility>

namespace ichor::test {

class LoopCall final : public talos::Loop::Operation {
  public:
    LoopCall(talos::Loop& loop, std::chrono::milliseconds after, std::function<void()> then)
        : m_then(std::move(then)) {
        loop.started();
        m_alarm.Set(loop.queue(), std::chrono::system_clock::now() + after, this);
    }
    void release() { m_alarm.Cancel(); } // ends it now (the loop's thread runs `then`)
    bool proceed(bool /*ok*/) override {
        m_then();
        return true;
    }

  private:
    grpc::Alarm m_alarm;
    std::function<void()> m_then;
};

} // namespace ichor::test
