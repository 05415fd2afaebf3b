#include "common/talos/loop.h"

#include <grpcpp/completion_queue.h>

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

} // namespace ichor::talos
