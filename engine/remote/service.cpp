// The calls of the Debugger service (remote/proto/opscope_debug.proto): each admits its client
// (token, id, control), answers from the session, and turns the engine's errors into statuses.

#include "core/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include "remote/protocol.h"
#include "remote/server_impl.h"

namespace opscope::debug {

using grpc::Status;
using grpc::StatusCode;

namespace {
    /// How long GetModel waits for the first run of a program that starts its runs itself.
    /// (Short: a window attaches on its GUI thread.)
    constexpr std::chrono::seconds kFirstRunWait { 3 };

    Status noRun(const Session& s)
    {
        return { StatusCode::FAILED_PRECONDITION,
            s.lastRunId() ? "no run is active (run " + std::to_string(s.lastRunId()) + " has ended)"
                          : std::string("no run is active (none has started)") };
    }

    Status notFound(const std::string& what, const pb::TensorRef& ref)
    {
        if (ref.what_case() == pb::TensorRef::kComparedA || ref.what_case() == pb::TensorRef::kComparedB)
            return { StatusCode::NOT_FOUND, what + " is not there (that run lacks it, or there is no comparison)" };
        return { StatusCode::NOT_FOUND, what + " is neither in the paused node, nor kept in the run record, nor an output of the last run" };
    }
}

Status ServerImpl::Hello(grpc::ServerContext* ctx, const pb::HelloRequest* req, pb::HelloReply* reply)
{
    if (Status s = checkToken(ctx); !s.ok()) return s;
    reply->set_protocol_version(remote::kProtocolVersion);
    reply->set_server_name(m_options.serverName);
    if (req->protocol_version() != remote::kProtocolVersion) {
        log("refused " + ctx->peer() + ": protocol version " + std::to_string(req->protocol_version()));
        return { StatusCode::FAILED_PRECONDITION,
            "protocol version mismatch: the client speaks version " + std::to_string(req->protocol_version())
                + ", this server (" + m_options.serverName + ") speaks version " + std::to_string(remote::kProtocolVersion) };
    }
    uint64_t id = 0;
    bool took = false;
    std::vector<std::string> expired;
    bool holderExpired = false;
    std::optional<Status> full;
    {
        std::lock_guard lock(m_mutex);
        expired = expireIdleClients(&holderExpired);
        if (m_clients.size() >= m_options.maxClients)
            full = Status { StatusCode::RESOURCE_EXHAUSTED,
                std::to_string(m_clients.size()) + " clients are attached to this server, the most it takes: detach one, "
                    + "or wait until one without an event stream has been silent for "
                    + std::to_string(m_options.idleClientExpiry.count()) + " s" };
        else {
            id = m_nextClient++;
            Client c;
            c.name = req->client_name().substr(0, 200);
            c.peer = ctx->peer();
            c.watchOnly = req->watch_only();
            c.lastSeen = std::chrono::steady_clock::now();
            m_clients.emplace(id, std::move(c));
            if (m_holder == 0 && !req->watch_only()) {
                m_holder = id;
                took = true;
            }
            reply->set_client_id(id);
            reply->set_instance(m_instance);
            reply->set_program_starts_runs(!m_options.clientsStart);
            reply->set_model(m_options.modelName);
            controlState(id, reply->mutable_control());
        }
    }
    for (const std::string& note : expired)
        log(note);
    if (holderExpired) holderGone({});
    if (full) {
        log("refused " + ctx->peer() + ": the most clients attached at once");
        return *full;
    }
    log("client " + std::to_string(id) + " (" + req->client_name().substr(0, 200) + ") attached from " + ctx->peer()
        + (took ? ", in control" : ", watching"));
    broadcastControl(); // who is attached changed (and perhaps who holds control)
    return Status::OK;
}

Status ServerImpl::Detach(grpc::ServerContext* ctx, const pb::Empty*, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    bool wasHolder = false;
    std::string name;
    {
        std::lock_guard lock(m_mutex);
        auto c = m_clients.find(id);
        if (c == m_clients.end()) return { StatusCode::UNAUTHENTICATED, "client " + std::to_string(id) + " has gone: attach again" };
        name = c->second.name;
        m_clients.erase(c);
        for (const auto& sub : m_subscribers)
            if (sub->client == id) sub->ended = true; // its streams end; not a vanishing
        wasHolder = m_holder == id;
        if (wasHolder) m_holder = 0;
    }
    m_eventCv.notify_all();
    log("client " + std::to_string(id) + " (" + name + ") detached");
    broadcastControl(); // who is attached changed
    return Status::OK;
}

Status ServerImpl::Unsubscribe(grpc::ServerContext* ctx, const pb::Empty*, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    std::lock_guard lock(m_mutex);
    if (auto c = m_clients.find(id); c != m_clients.end() && c->second.closing < c->second.subscriptions)
        c->second.closing++;
    return Status::OK;
}

Status ServerImpl::Control(grpc::ServerContext* ctx, const pb::ControlRequest* req, pb::ControlState* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    bool changed = false, holderFreed = false;
    std::string note;
    {
        std::lock_guard lock(m_mutex);
        auto self = m_clients.find(id);
        if (self == m_clients.end()) return { StatusCode::UNAUTHENTICATED, "client " + std::to_string(id) + " has gone: attach again" };
        switch (req->action()) {
        case pb::ControlRequest::QUERY:
            break;
        case pb::ControlRequest::TAKE:
            if (m_holder != id) note = freeStaleHolder(&holderFreed);
            if (m_holder != id && m_holder != 0) {
                auto h = m_clients.find(m_holder);
                return { StatusCode::PERMISSION_DENIED,
                    "client " + std::to_string(m_holder) + " (" + (h != m_clients.end() ? h->second.name : std::string())
                        + ") holds control: it must release it or hand it over" };
            }
            changed = m_holder != id;
            m_holder = id;
            self->second.watchOnly = false;
            break;
        case pb::ControlRequest::RELEASE:
            if (m_holder == id) {
                m_holder = 0;
                changed = true;
            }
            break;
        case pb::ControlRequest::HAND_OVER: {
            if (m_holder != id)
                return { StatusCode::PERMISSION_DENIED, "only the client holding control can hand it over" };
            auto to = m_clients.find(req->to_client());
            if (to == m_clients.end())
                return { StatusCode::NOT_FOUND, "no client " + std::to_string(req->to_client()) + " is attached" };
            m_holder = to->first;
            to->second.watchOnly = false;
            changed = m_holder != id;
            break;
        }
        default:
            return { StatusCode::INVALID_ARGUMENT, "unknown control action " + std::to_string(static_cast<int>(req->action())) };
        }
        controlState(id, reply);
    }
    if (holderFreed) holderGone(note, false); // this client took control at once: it decides
    if (changed) broadcastControl();
    return Status::OK;
}

Status ServerImpl::GetModel(grpc::ServerContext* ctx, const pb::Empty*, pb::ModelInfo* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    // A program that starts the runs itself (a training loop) is about to: its first run traces the
    // graph, waited for a while rather than refused.
    const auto until = std::chrono::steady_clock::now() + kFirstRunWait;
    while (!m_options.model && !m_options.clientsStart && !m_session.graph() && !ctx->IsCancelled()
        && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return guarded([&] {
        const ModelDescription d = m_options.model ? *m_options.model : describeSession(m_session, m_options.modelName);
        if (!d.graph)
            return Status { StatusCode::FAILED_PRECONDITION,
                m_options.clientsStart ? "the model's graph is known after its first run (start one)"
                                       : "the model's graph is known after its first run, which the served program has not started within "
                        + std::to_string(kFirstRunWait.count()) + " s" };
        remote::toProto(d, reply);
        return Status::OK;
    });
}

Status ServerImpl::GetState(grpc::ServerContext* ctx, const pb::Empty*, pb::SessionState* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    return guarded([&] {
        reply->set_running(m_session.isRunning());
        reply->set_last_run_id(m_session.lastRunId());
        if (std::shared_ptr<const PauseEvent> p = m_session.currentPause()) remote::toProto(*p, reply->mutable_pause());
        remote::toProto(m_session.options(), reply->mutable_options());
        std::lock_guard lock(m_mutex);
        controlState(id, reply->mutable_control());
        return Status::OK;
    });
}

Status ServerImpl::Subscribe(grpc::ServerContext* ctx, const pb::Empty*, grpc::ServerWriter<pb::Event>* writer)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    auto sub = std::make_shared<Subscriber>();
    sub->client = id;
    {
        std::lock_guard lock(m_mutex);
        auto c = m_clients.find(id);
        if (c == m_clients.end()) return { StatusCode::UNAUTHENTICATED, "client " + std::to_string(id) + " has gone: attach again" };
        c->second.subscriptions++;
        m_subscribers.push_back(sub);
    }
    // Out of the list and the count however the stream ends.
    bool cancelled = false, closing = false;
    struct Leave {
        ServerImpl& s;
        const std::shared_ptr<Subscriber>& sub;
        uint64_t id;
        bool& closing;
        ~Leave()
        {
            std::lock_guard lock(s.m_mutex);
            s.m_subscribers.remove(sub);
            if (auto c = s.m_clients.find(id); c != s.m_clients.end()) {
                c->second.subscriptions--;
                if (c->second.closing > 0) {
                    c->second.closing--;
                    closing = true;
                }
            } else {
                closing = true; // detached: nothing to forget
            }
        }
    };
    uint64_t sequence = 0;
    Status result = Status::OK;
    {
        Leave leave { *this, sub, id, closing };
        // Registered before the pause going on is read: a pause after this is in the queue, one before
        // it is the current one (the gate holds it before listeners hear of it). It goes first, once.
        if (std::shared_ptr<const PauseEvent> p = m_session.currentPause()) {
            auto current = std::make_shared<pb::Event>();
            remote::toProto(*p, current->mutable_paused()); // statistics computed unlocked
            std::lock_guard lock(m_mutex);
            const bool queued = std::any_of(sub->queue.begin(), sub->queue.end(), [&](const auto& e) {
                return e->what_case() == pb::Event::kPaused && e->paused().run_id() == p->runId
                    && e->paused().sequence() == p->sequence;
            });
            if (!queued) sub->queue.push_front(std::move(current));
            sub->givenPause = std::pair<uint64_t, uint64_t>(p->runId, p->sequence);
        }
        // The client's subscribe() returns on this: events of anything it starts afterwards reach it.
        writer->SendInitialMetadata();
        for (;;) {
            std::shared_ptr<const pb::Event> event;
            {
                std::unique_lock lock(m_mutex);
                m_eventCv.wait_for(lock, std::chrono::milliseconds(100),
                    [&] { return m_shutdown || sub->ended || !sub->queue.empty() || sub->overflow; });
                if (m_shutdown || sub->ended) break;
                if (sub->overflow) {
                    result = { StatusCode::RESOURCE_EXHAUSTED, "the client fell more than 4096 events behind" };
                    break;
                }
                if (!sub->queue.empty()) {
                    event = std::move(sub->queue.front());
                    sub->queue.pop_front();
                }
            }
            if (ctx->IsCancelled()) {
                cancelled = true;
                break;
            }
            if (!event) continue;
            pb::Event out = *event;
            out.set_sequence(++sequence);
            if (!writer->Write(out)) {
                cancelled = true;
                break;
            }
        }
    }
    if (cancelled && !closing) clientVanished(id);
    return result;
}

Status ServerImpl::SetOptions(grpc::ServerContext* ctx, const pb::Options* req, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    return guarded([&] {
        if (m_session.isRunning()) return Status { StatusCode::FAILED_PRECONDITION, "options cannot change during a run" };
        // One step: a comparison ending meanwhile keeps its change of the reference run.
        m_session.updateOptions([&](SessionOptions& o) { o = remote::fromProto(*req, o); });
        return Status::OK;
    });
}

Status ServerImpl::Start(grpc::ServerContext* ctx, const pb::StartRequest* req, pb::StartReply* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    return guarded([&] {
        if (!m_options.clientsStart)
            return Status { StatusCode::FAILED_PRECONDITION,
                "this server's program starts the runs itself (a training loop): set breakpoints and wait for its next step" };
        if (m_session.isRunning())
            return Status { StatusCode::FAILED_PRECONDITION,
                "run " + std::to_string(m_session.lastRunId()) + " is still active: stop it or let it finish first" };
        const StartMode mode = req->pause_at_entry() ? StartMode::PauseAtEntry : StartMode::Run;
        try {
            reply->set_run_id(req->train_step() ? m_session.startTrainStep(mode) : m_session.start(mode));
        } catch (const UsageError& e) {
            return Status { StatusCode::FAILED_PRECONDITION, e.what() };
        }
        return Status::OK;
    });
}

Status ServerImpl::Command(grpc::ServerContext* ctx, const pb::CommandRequest* req, pb::CommandReply* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    return guarded([&] {
        bool accepted = false;
        switch (req->kind()) {
        case pb::CommandRequest::CONTINUE: accepted = m_session.continueRun(); break;
        case pb::CommandRequest::STEP: accepted = m_session.step(); break;
        case pb::CommandRequest::STEP_OVER: accepted = m_session.stepOver(); break;
        case pb::CommandRequest::STEP_OUT: accepted = m_session.stepOut(); break;
        case pb::CommandRequest::PAUSE: accepted = m_session.pause(); break;
        case pb::CommandRequest::STOP: accepted = m_session.stop(); break;
        case pb::CommandRequest::RUN_TO:
            accepted = m_session.runTo(req->node());
            if (!accepted && m_session.isRunning())
                return Status { StatusCode::NOT_FOUND, "run to " + req->node() + ": the running graph has no node of that name" };
            break;
        default:
            return Status { StatusCode::INVALID_ARGUMENT, "unknown command " + std::to_string(static_cast<int>(req->kind())) };
        }
        if (!accepted) return noRun(m_session);
        reply->set_accepted(true);
        return Status::OK;
    });
}

Status ServerImpl::AddBreakpoint(grpc::ServerContext* ctx, const pb::Breakpoint* req, pb::Breakpoint* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    return guarded([&] {
        Breakpoint b = remote::fromProto(*req);
        b.hitCount = 0;
        const int bid = m_session.addBreakpoint(b);
        b.id = bid;
        const std::optional<Breakpoint> added = m_session.breakpoint(bid);
        remote::toProto(added ? *added : b, reply); // (removed already by a concurrent call: as added)
        return Status::OK;
    });
}

Status ServerImpl::UpdateBreakpoint(grpc::ServerContext* ctx, const pb::Breakpoint* req, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    return guarded([&] {
        if (!m_session.updateBreakpoint(req->id(), remote::fromProto(*req)))
            return Status { StatusCode::NOT_FOUND, "no breakpoint #" + std::to_string(req->id()) };
        return Status::OK;
    });
}

Status ServerImpl::RemoveBreakpoint(grpc::ServerContext* ctx, const pb::BreakpointId* req, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    if (!m_session.removeBreakpoint(req->id()))
        return { StatusCode::NOT_FOUND, "no breakpoint #" + std::to_string(req->id()) };
    return Status::OK;
}

Status ServerImpl::ClearBreakpoints(grpc::ServerContext* ctx, const pb::Empty*, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    m_session.clearBreakpoints();
    return Status::OK;
}

Status ServerImpl::ListBreakpoints(grpc::ServerContext* ctx, const pb::Empty*, pb::BreakpointList* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    for (const Breakpoint& b : m_session.breakpoints())
        remote::toProto(b, reply->add_breakpoints());
    return Status::OK;
}

Status ServerImpl::GetSummary(grpc::ServerContext* ctx, const pb::SummaryRequest* req, pb::TensorSummary* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    return guarded([&] {
        std::string what;
        std::optional<Tensor> t = findTensor(req->tensor(), &what);
        if (!t) return notFound(what, req->tensor());
        if (!std::isfinite(req->lo()) || !std::isfinite(req->hi()))
            return Status { StatusCode::INVALID_ARGUMENT, "a histogram's range must be finite" };
        if (req->bins() < 0 || req->bins() > 65536)
            return Status { StatusCode::INVALID_ARGUMENT, "histogram bins " + std::to_string(req->bins()) + " (0 to 65536)" };
        const TensorStats stats = computeStats(t->view());
        remote::toProto(t->shape(), reply->mutable_shape());
        reply->set_dtype(remote::toProto(t->dtype()));
        remote::toProto(stats, reply->mutable_stats());
        remote::toProto(computeHistogram(t->view(), stats, req->bins() ? req->bins() : 64,
                            req->log_magnitude() ? HistogramScale::LogMagnitude : HistogramScale::Linear, req->lo(), req->hi()),
            reply->mutable_histogram());
        return Status::OK;
    });
}

Status ServerImpl::GetSlice(grpc::ServerContext* ctx, const pb::SliceRequest* req, pb::Slice* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    return guarded([&] {
        std::string what;
        std::optional<Tensor> t = findTensor(req->tensor(), &what);
        if (!t) return notFound(what, req->tensor());
        SliceRequest r;
        r.index.assign(req->index().begin(), req->index().end());
        r.rowBegin = req->row_begin();
        r.rowCount = req->row_count() == 0 ? -1 : req->row_count();
        r.colBegin = req->col_begin();
        r.colCount = req->col_count() == 0 ? -1 : req->col_count();
        if (r.rowCount < -1 || r.colCount < -1 || r.rowBegin < 0 || r.colBegin < 0)
            return Status { StatusCode::OUT_OF_RANGE, what + ": a negative row or column" };
        // At most rows × cols values, and never more than the tensor has: refused before it is built.
        constexpr int64_t kMaxValues = (int64_t(remote::kMaxReplyBytes) - 1024) / int64_t(sizeof(double));
        int64_t bound = t->size();
        if (r.rowCount >= 0 && r.colCount >= 0 && (r.colCount == 0 || r.rowCount <= kMaxValues / std::max<int64_t>(r.colCount, 1)))
            bound = std::min(bound, r.rowCount * r.colCount);
        if (bound > kMaxValues) {
            // The window may still be small: its rows and columns are the tensor's last two axes.
            const int64_t cols = t->ndim() >= 1 ? t->shape().dim(-1) : 1;
            const int64_t rows = t->ndim() >= 2 ? t->shape().dim(-2) : 1;
            const int64_t wr = r.rowCount >= 0 ? std::min(r.rowCount, rows) : rows;
            const int64_t wc = r.colCount >= 0 ? std::min(r.colCount, cols) : cols;
            if (wc > 0 && wr > kMaxValues / wc)
                return Status { StatusCode::RESOURCE_EXHAUSTED,
                    what + ": a slice of " + std::to_string(wr) + "x" + std::to_string(wc)
                        + " values is above the reply limit; ask for fewer rows or columns, or FetchTensor" };
        }
        try {
            const TensorSlice slice = sliceOf(t->view(), r);
            remote::toProto(slice, reply);
        } catch (const UsageError& e) {
            return Status { StatusCode::OUT_OF_RANGE, what + ": " + e.what() };
        }
        return Status::OK;
    });
}

Status ServerImpl::FetchTensor(grpc::ServerContext* ctx, const pb::TensorRef* req, grpc::ServerWriter<pb::TensorChunk>* writer)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    LongCall busy(*this, id);
    return guarded([&] {
        std::string what;
        std::optional<Tensor> t = findTensor(*req, &what);
        if (!t) return notFound(what, *req);
        const size_t total = t->bytes();
        pb::TensorChunk head;
        pb::TensorInfo* info = head.mutable_header();
        info->set_name(req->what_case() == pb::TensorRef::kOutput ? "output" + std::to_string(req->output())
                : req->what_case() == pb::TensorRef::kComparedA     ? req->compared_a()
                : req->what_case() == pb::TensorRef::kComparedB     ? req->compared_b()
                                                                    : req->name());
        remote::toProto(t->shape(), info->mutable_shape());
        info->set_dtype(remote::toProto(t->dtype()));
        head.set_total_bytes(total);
        if (!writer->Write(head)) return Status { StatusCode::CANCELLED, "the client went away" };
        const char* data = static_cast<const char*>(t->raw());
        pb::TensorChunk chunk;
        chunk.set_total_bytes(total);
        for (size_t offset = 0; offset < total; offset += remote::kChunkBytes) {
            const size_t n = std::min(remote::kChunkBytes, total - offset);
            chunk.set_offset(offset);
            chunk.mutable_data()->assign(data + offset, n);
            if (ctx->IsCancelled() || !writer->Write(chunk))
                return Status { StatusCode::CANCELLED, "the client went away" };
        }
        return Status::OK;
    });
}

Status ServerImpl::GetRecord(grpc::ServerContext* ctx, const pb::Empty*, pb::Record* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    return guarded([&] {
        remote::toProto(m_session.record(), reply);
        return Status::OK;
    });
}

} // namespace opscope::debug
