// NodeClient's calls (client.h). Each is one operation on a Loop (loop.h); a blocking form runs
// the operation on a loop of its own, so both forms share one implementation.
#include "common/talos/client_impl.h"

#include <google/protobuf/empty.pb.h>

namespace ichor::talos {

namespace {

Resource to_resource(const cosi::resource::Resource& r) {
    return Resource{r.metadata(), r.spec().proto_spec(), r.spec().yaml_spec()};
}

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
template <class Resp, class T> class UnaryCall final : public Loop::Operation, CallBase {
  public:
    using Convert = std::function<Result<T>(const NodeClient::Impl&, std::string_view, Resp&)>;

    UnaryCall(std::shared_ptr<NodeClient::Impl> impl, std::string method, Convert convert,
              NodeClient::Done<T> done)
        : CallBase(std::move(impl), std::move(method)), m_convert(std::move(convert)),
          m_done(std::move(done)) {}

    // `prepare(stub context, queue)` returns the not yet started reader.
    template <class Prepare> void start(Loop& loop, Prepare&& prepare) {
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
            m_done(m_convert(*impl, method, m_resp));
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
typename UnaryCall<Resp, T>::Convert first_message(Pick pick) {
    return [pick](const NodeClient::Impl& impl, std::string_view method, Resp& resp) -> Result<T> {
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

// Runs `start(loop, done)` on a loop of its own and returns what `done` got.
template <class T, class Start> Result<T> blocking(Start&& start) {
    Loop loop;
    std::optional<Result<T>> out;
    start(loop, [&out](Result<T> r) { out.emplace(std::move(r)); });
    loop.run();
    return std::move(*out);
}

// A blocking call whose reply is Talos's envelope: `pick` reads its first message.
template <class Resp, class T, class Pick, class Prepare>
Result<T> blocking_first(const std::shared_ptr<NodeClient::Impl>& impl, const std::string& method,
                         Pick pick, Prepare&& prepare) {
    return blocking<T>([&](Loop& loop, NodeClient::Done<T> done) {
        start_unary<Resp, T>(loop, impl, method, first_message<Resp, T>(pick), std::move(done),
                             std::forward<Prepare>(prepare));
    });
}

void start_member_list(Loop& loop, const std::shared_ptr<NodeClient::Impl>& impl, bool query_local,
                       NodeClient::Done<std::vector<machine::EtcdMember>> done) {
    using Resp = machine::EtcdMemberListResponse;
    using T = std::vector<machine::EtcdMember>;
    machine::EtcdMemberListRequest req;
    req.set_query_local(query_local);
    auto members = [](const auto& m) { return T(m.members().begin(), m.members().end()); };
    start_unary<Resp, T>(loop, impl, "EtcdMemberList", first_message<Resp, T>(members),
                         std::move(done), [&](auto* ctx, auto* cq) {
                             return impl->machine->PrepareAsyncEtcdMemberList(ctx, req, cq);
                         });
}

} // namespace

void NodeClient::version(Loop& loop, Done<machine::Version> done) {
    using Resp = machine::VersionResponse;
    start_unary<Resp, machine::Version>(
        loop, m_impl, "Version",
        first_message<Resp, machine::Version>([](const auto& m) { return m; }), std::move(done),
        [this](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncVersion(ctx, google::protobuf::Empty(), cq);
        });
}

void NodeClient::hostname(Loop& loop, Done<std::string> done) {
    using Resp = machine::HostnameResponse;
    start_unary<Resp, std::string>(
        loop, m_impl, "Hostname",
        first_message<Resp, std::string>([](const auto& m) { return m.hostname(); }),
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
        [](const Impl&, std::string_view, Resp& resp) -> Result<Resource> {
            return to_resource(resp.resource());
        },
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
    start_member_list(loop, m_impl, false, std::move(done));
}

void NodeClient::etcd_status(Loop& loop, Done<machine::EtcdMemberStatus> done) {
    using Resp = machine::EtcdStatusResponse;
    start_unary<Resp, machine::EtcdMemberStatus>(
        loop, m_impl, "EtcdStatus",
        first_message<Resp, machine::EtcdMemberStatus>(
            [](const auto& m) { return m.member_status(); }),
        std::move(done), [this](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncEtcdStatus(ctx, google::protobuf::Empty(), cq);
        });
}

void NodeClient::discovery_members(Loop& loop, Done<std::vector<DiscoveryMember>> done) {
    cosi_list(loop, kind::k_discovery_members,
              [done = std::move(done)](Result<std::vector<Resource>> list) {
                  if (!list.ok()) {
                      done(list.error());
                      return;
                  }
                  done(decode_discovery_members(*list));
              });
}

// Blocking forms: the reads above on a loop of their own.

Result<machine::Version> NodeClient::version() {
    return blocking<machine::Version>([this](Loop& l, auto done) { version(l, std::move(done)); });
}

Result<std::string> NodeClient::hostname() {
    return blocking<std::string>([this](Loop& l, auto done) { hostname(l, std::move(done)); });
}

Result<Resource> NodeClient::cosi_get(std::string_view ns, std::string_view type,
                                      std::string_view id) {
    return blocking<Resource>([&](Loop& l, auto done) {
        cosi_get(l, ResourceRef{ns, type, id}, std::move(done));
    });
}

Result<std::vector<Resource>> NodeClient::cosi_list(std::string_view ns, std::string_view type) {
    return blocking<std::vector<Resource>>([&](Loop& l, auto done) {
        cosi_list(l, ResourceRef{ns, type, ""}, std::move(done));
    });
}

Result<std::vector<machine::EtcdMember>> NodeClient::etcd_member_list(bool query_local) {
    return blocking<std::vector<machine::EtcdMember>>(
        [&](Loop& l, auto done) { start_member_list(l, m_impl, query_local, std::move(done)); });
}

Result<std::vector<DiscoveryMember>> NodeClient::discovery_members() {
    return blocking<std::vector<DiscoveryMember>>(
        [this](Loop& l, auto done) { discovery_members(l, std::move(done)); });
}

Result<machine::EtcdMemberStatus> NodeClient::etcd_status() {
    return blocking<machine::EtcdMemberStatus>(
        [this](Loop& l, auto done) { etcd_status(l, std::move(done)); });
}

// Blocking only: Disks, and Reset, the one write.

Result<std::vector<storage::Disk>> NodeClient::disks() {
    using T = std::vector<storage::Disk>;
    return blocking_first<storage::DisksResponse, T>(
        m_impl, "Disks", [](const auto& m) { return T(m.disks().begin(), m.disks().end()); },
        [this](auto* ctx, auto* cq) {
            return m_impl->storage->PrepareAsyncDisks(ctx, google::protobuf::Empty(), cq);
        });
}

Result<std::string> NodeClient::reset(const ResetOptions& options) {
    machine::ResetRequest req;
    req.set_graceful(options.graceful);
    req.set_reboot(options.reboot);
    req.set_mode(machine::ResetRequest::SYSTEM_DISK);
    for (const auto& label : options.system_volumes) {
        auto* p = req.add_system_partitions_to_wipe();
        p->set_label(label);
        p->set_wipe(true);
    }
    return blocking_first<machine::ResetResponse, std::string>(
        m_impl, "Reset", [](const auto& m) { return m.actor_id(); },
        [&](auto* ctx, auto* cq) { return m_impl->machine->PrepareAsyncReset(ctx, req, cq); });
}

// Asynchronous only: the node check runs its dry runs on loops.

void NodeClient::dry_run_configuration(Loop& loop, const std::string& config,
                                       Done<DryRunAnswer> done) {
    using Resp = machine::ApplyConfigurationResponse;
    machine::ApplyConfigurationRequest req;
    req.set_data(config);
    req.set_mode(machine::ApplyConfigurationRequest::AUTO);
    req.set_dry_run(true);
    start_unary<Resp, DryRunAnswer>(
        loop, m_impl, "ApplyConfiguration", first_message<Resp, DryRunAnswer>([](const auto& m) {
            return DryRunAnswer{m.mode_details(), {m.warnings().begin(), m.warnings().end()}};
        }),
        std::move(done), [&](auto* ctx, auto* cq) {
            return m_impl->machine->PrepareAsyncApplyConfiguration(ctx, req, cq);
        });
}

} // namespace ichor::talos
