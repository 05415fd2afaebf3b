// The asynchronous forms of NodeClient's reads (client.h), on a Loop (loop.h).
#include "common/talos/client_impl.h"

#include <google/protobuf/empty.pb.h>

namespace ichor::talos {

namespace {

// The parts every operation has: the client state it keeps alive, its context and its record.
struct CallBase {
    std::shared_ptr<NodeClient::Impl> impl; // destroyed last: the context refers to its channel
    grpc::ClientContext ctx;
    std::string method;
    std::size_t record;
    Clock::time_point started_at = Clock::now();

    CallBase(std::shared_ptr<NodeClient::Impl> i, std::string m)
        : impl(std::move(i)), method(std::move(m)), record(impl->begin(method)) {
        impl->prepare(ctx);
    }
};

// A unary call: one completion, then `done` with the reply converted by `convert`.
template <class Resp, class T>
class UnaryCall final : public Loop::Operation, CallBase {
public:
    using Convert = std::function<Result<T>(const NodeClient::Impl&, Resp&)>;

    UnaryCall(std::shared_ptr<NodeClient::Impl> impl, std::string method, Convert convert,
              NodeClient::Done<T> done)
        : CallBase(std::move(impl), std::move(method)), m_convert(std::move(convert)),
          m_done(std::move(done)) {}

    // `prepare(stub context, queue)` returns the not yet started reader.
    template <class Prepare>
    void start(Loop& loop, Prepare&& prepare) {
        m_reader = prepare(&ctx, loop.queue());
        m_reader->StartCall();
        m_reader->Finish(&m_resp, &m_status, this);
        loop.started();
    }

    bool proceed(bool /*ok: always true for Finish*/) override {
        impl->finish(record, started_at, m_status.ok(), ctx);
        if (!m_status.ok()) {
            m_done(impl->failure(method, m_status));
        } else {
            m_done(m_convert(*impl, m_resp));
        }
        return true;
    }

private:
    Convert m_convert;
    NodeClient::Done<T> m_done;
    Resp m_resp;
    grpc::Status m_status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>> m_reader;
};

template <class Resp, class T, class Prepare>
void start_unary(Loop& loop, const std::shared_ptr<NodeClient::Impl>& impl, std::string method,
                 typename UnaryCall<Resp, T>::Convert convert, NodeClient::Done<T> done,
                 Prepare&& prepare) {
    auto* call =
        new UnaryCall<Resp, T>(impl, std::move(method), std::move(convert), std::move(done));
    call->start(loop, std::forward<Prepare>(prepare)); // the loop owns it from here
}

// The first message of Talos's envelope, converted by `pick`.
template <class Resp, class T, class Pick>
typename UnaryCall<Resp, T>::Convert first_message(std::string method, Pick pick) {
    return [method = std::move(method),
            pick](const NodeClient::Impl& impl, Resp& resp) -> Result<T> {
        auto m = impl.first(resp.messages(), method);
        if (!m) {
            return m.error();
        }
        return pick(*m);
    };
}

// COSI List: a server stream read to its end.
class ListCall final : public Loop::Operation, CallBase {
public:
    ListCall(std::shared_ptr<NodeClient::Impl> impl, std::string method,
             NodeClient::Done<std::vector<Resource>> done)
        : CallBase(std::move(impl), std::move(method)), m_done(std::move(done)) {}

    void start(Loop& loop, const cosi::resource::ListRequest& req) {
        m_reader = impl->state->PrepareAsyncList(&ctx, req, loop.queue());
        m_reader->StartCall(this);
        loop.started();
    }

    bool proceed(bool ok) override {
        switch (m_step) {
        case Step::Read:
            if (ok) {
                m_items.push_back(to_resource(m_item.resource()));
            }
            [[fallthrough]];
        case Step::Start:
            if (ok) {
                m_step = Step::Read;
                m_reader->Read(&m_item, this);
            } else {
                m_step = Step::Finish;
                m_reader->Finish(&m_status, this);
            }
            return false;
        case Step::Finish:
            break;
        }
        impl->finish(record, started_at, m_status.ok(), ctx);
        if (!m_status.ok()) {
            m_done(impl->failure(method, m_status));
        } else {
            m_done(std::move(m_items));
        }
        return true;
    }

private:
    enum class Step { Start, Read, Finish };
    Step m_step = Step::Start;
    NodeClient::Done<std::vector<Resource>> m_done;
    cosi::resource::ListResponse m_item;
    std::vector<Resource> m_items;
    grpc::Status m_status;
    std::unique_ptr<grpc::ClientAsyncReader<cosi::resource::ListResponse>> m_reader;
};

} // namespace

void NodeClient::version(Loop& loop, Done<machine::Version> done) {
    using Resp = machine::VersionResponse;
    start_unary<Resp, machine::Version>(
        loop, m_impl, "Version",
        first_message<Resp, machine::Version>("Version", [](const auto& m) { return m; }),
        std::move(done), [this](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncVersion(ctx, google::protobuf::Empty(), cq);
        });
}

void NodeClient::hostname(Loop& loop, Done<std::string> done) {
    using Resp = machine::HostnameResponse;
    start_unary<Resp, std::string>(
        loop, m_impl, "Hostname",
        first_message<Resp, std::string>("Hostname", [](const auto& m) { return m.hostname(); }),
        std::move(done), [this](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncHostname(ctx, google::protobuf::Empty(), cq);
        });
}

void NodeClient::cosi_get(Loop& loop, const ResourceRef& ref, Done<Resource> done) {
    using Resp = cosi::resource::GetResponse;
    cosi::resource::GetRequest req;
    req.set_namespace_(std::string(ref.ns));
    req.set_type(std::string(ref.type));
    req.set_id(std::string(ref.id));
    start_unary<Resp, Resource>(
        loop, m_impl, "Get " + std::string(ref.type),
        [](const Impl&, Resp& resp) -> Result<Resource> { return to_resource(resp.resource()); },
        std::move(done),
        [&](auto* ctx, auto* cq) { return m_impl->state->PrepareAsyncGet(ctx, req, cq); });
}

void NodeClient::cosi_list(Loop& loop, const ResourceRef& ref, Done<std::vector<Resource>> done) {
    cosi::resource::ListRequest req;
    req.set_namespace_(std::string(ref.ns));
    req.set_type(std::string(ref.type));
    auto* call = new ListCall(m_impl, "List " + std::string(ref.type), std::move(done));
    call->start(loop, req); // the loop owns it from here
}

void NodeClient::etcd_member_list(Loop& loop, Done<std::vector<machine::EtcdMember>> done) {
    using Resp = machine::EtcdMemberListResponse;
    using T = std::vector<machine::EtcdMember>;
    machine::EtcdMemberListRequest req;
    auto members = [](const auto& m) { return T(m.members().begin(), m.members().end()); };
    start_unary<Resp, T>(loop, m_impl, "EtcdMemberList",
                         first_message<Resp, T>("EtcdMemberList", members), std::move(done),
                         [&](auto* ctx, auto* cq) {
                             return m_impl->machine->PrepareAsyncEtcdMemberList(ctx, req, cq);
                         });
}

void NodeClient::etcd_status(Loop& loop, Done<machine::EtcdMemberStatus> done) {
    using Resp = machine::EtcdStatusResponse;
    start_unary<Resp, machine::EtcdMemberStatus>(
        loop, m_impl, "EtcdStatus",
        first_message<Resp, machine::EtcdMemberStatus>(
            "EtcdStatus", [](const auto& m) { return m.member_status(); }),
        std::move(done), [this](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncEtcdStatus(ctx, google::protobuf::Empty(), cq);
        });
}

} // namespace ichor::talos
