// A loop that drives asynchronous Talos API calls on one thread: a gRPC completion queue and the
// count of calls in flight on it.
//
// Why: a blocking call holds a thread and costs two thread switches, one to hand the reply from
// gRPC's poller to the waiting thread and one back; over hundreds of nodes that was a large part
// of inspect's CPU (bench/HISTORY.md, "loops"). On a loop, the thread that runs it polls, reads and
// runs the callbacks itself, and the calls of one node overlap on its connection.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace grpc {
class CompletionQueue;
}

namespace ichor::talos {

class Loop {
  public:
    // One step of an asynchronous call. The loop calls proceed() with gRPC's `ok` each time the
    // step the operation last started completes; proceed() returns true when the operation is
    // over, and the loop then deletes it.
    class Operation {
      public:
        virtual ~Operation() = default;
        virtual bool proceed(bool ok) = 0;
    };

    Loop();
    ~Loop(); // shuts the queue down and drains it
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    // For the client: the queue to start calls on, and the count of operations started on it
    // (the queue's tags are the Operation pointers).
    grpc::CompletionQueue* queue() { return m_queue.get(); }
    void started() { ++m_pending; }

    // Runs completions on the calling thread until no operation is in flight. Callbacks may start
    // more operations; those are waited for too. Returns at once when nothing was started.
    void run();

    // Operations started and not yet over.
    [[nodiscard]] std::size_t pending() const { return m_pending; }

  private:
    std::unique_ptr<grpc::CompletionQueue> m_queue;
    std::size_t m_pending = 0;
};

// Spreads `items` calls over one loop per core, up to four and no more than `concurrency` or
// `items`: a loop's thread does the TLS and parsing of its calls, so a second one shortened a
// 256-node read by a sixth on two cores (bench/HISTORY.md, "loops"); more loops than cores only add
// switches. The `concurrency` slots are shared out between the loops. `drive(loop, slots)` runs
// on each loop's own thread (the caller's for the last one): it starts up to `slots` operations
// on `loop`, each taking the next item as one ends, then calls loop.run(), so that what it keeps
// on its stack outlives the loop's operations. Returns when every drive has returned. The
// inspection's reads and the node check's dry runs share this schedule.
void run_on_loops(int concurrency, std::size_t items, const std::function<void(Loop&, int)>& drive);

} // namespace ichor::talos
