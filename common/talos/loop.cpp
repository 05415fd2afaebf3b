#include "common/talos/loop.h"

#include <grpcpp/completion_queue.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace ichor::talos {

Loop::Loop() : m_queue(std::make_unique<grpc::CompletionQueue>()) {}

Loop::~Loop() {
    m_queue->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (m_queue->Next(&tag, &ok)) {
        delete static_cast<Operation*>(tag); // only left when run() was never called
    }
}

void Loop::run() {
    void* tag = nullptr;
    bool ok = false;
    while (m_pending > 0 && m_queue->Next(&tag, &ok)) {
        auto* op = static_cast<Operation*>(tag);
        if (op->proceed(ok)) {
            delete op;
            --m_pending;
        }
    }
}

void run_on_loops(int concurrency, std::size_t items,
                  const std::function<void(Loop&, int)>& drive) {
    int count = static_cast<int>(std::clamp<std::size_t>(items, 1, 1 << 20));
    int slots = std::clamp(concurrency, 1, count);
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    int loops = std::clamp(cores, 1, std::min(slots, 4));
    auto one = [&drive](int share) {
        Loop loop;
        drive(loop, share);
    };
    std::vector<std::thread> threads;
    for (int l = 1; l < loops; ++l) {
        threads.emplace_back(one, slots / loops);
    }
    one(slots - (loops - 1) * (slots / loops));
    for (auto& t : threads) {
        t.join();
    }
}

} // namespace ichor::talos
