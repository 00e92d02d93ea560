#include "remote/server.h"

#include "core/error.h"
#include "remote/protocol.h"
#include "remote/server_impl.h"

#include <cstdio>
#include <random>
#include <string_view>

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <algorithm>
#include <sstream>

namespace opscope::debug {

namespace {
    // Events a subscriber may lag behind before its stream is ended (RESOURCE_EXHAUSTED).
    constexpr size_t kMaxQueuedEvents = 4096;

    std::string readFile(const std::string& path, const char* what)
    {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw UsageError(std::string(what) + " " + path + ": cannot be read");
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
    }

    std::string hostName()
    {
        char buf[256] = {};
        if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
        return buf;
    }
}

bool isLoopback(const std::string& hostPort)
{
    std::string host = hostPort;
    if (!host.empty() && host[0] == '[') { // [::1]:port
        const size_t close = host.find(']');
        host = host.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    } else if (const size_t colon = host.rfind(':'); colon != std::string::npos && host.find(':') == colon) {
        host = host.substr(0, colon);
    }
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

ServerImpl::ServerImpl(Session& session, ServeOptions options)
    : m_session(session)
    , m_options(std::move(options))
    , m_comparison(session)
{
    if (m_options.serverName.empty()) m_options.serverName = "opscope 0.1.0 on " + hostName();
    if (m_options.modelName.empty() && m_options.model) m_options.modelName = m_options.model->source;
    std::random_device random;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", random(), random());
    m_instance = hex;
}

ServerImpl::~ServerImpl()
{
    shutdown();
}

void ServerImpl::start()
{
    if (!isLoopback(m_options.listen) && m_options.token.empty())
        throw UsageError("listening on " + m_options.listen + " (not loopback) needs a token");
    if (m_options.tlsCertFile.empty() != m_options.tlsKeyFile.empty())
        throw UsageError("TLS needs both a certificate and its key");
    std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
    if (!m_options.tlsCertFile.empty()) {
        grpc::SslServerCredentialsOptions ssl;
        ssl.pem_key_cert_pairs.push_back(
            { readFile(m_options.tlsKeyFile, "TLS key"), readFile(m_options.tlsCertFile, "TLS certificate") });
        creds = grpc::SslServerCredentials(ssl);
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort(m_options.listen, creds, &m_port);
    builder.RegisterService(this);
    builder.SetMaxReceiveMessageSize(remote::kMaxRequestBytes);
    builder.SetMaxSendMessageSize(remote::kMaxReplyBytes);
    m_server = builder.BuildAndStart();
    if (!m_server || m_port == 0) throw UsageError("cannot listen on " + m_options.listen);
    const size_t colon = m_options.listen.rfind(':');
    m_address = m_options.listen.substr(0, colon) + ":" + std::to_string(m_port);
    m_session.setListener(this);
    m_reaper = std::thread([this] { reapStaleHolder(); });
}

void ServerImpl::reapStaleHolder()
{
    const auto tick = std::clamp<std::chrono::milliseconds>(
        m_options.staleHolder / 2, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
    std::unique_lock lock(m_mutex);
    while (!m_shutdown) {
        m_reaperCv.wait_for(lock, tick);
        if (m_shutdown || m_holder == 0) continue;
        bool freed = false;
        const std::string note = freeStaleHolder(&freed);
        if (!freed) continue;
        lock.unlock();
        holderGone(note);
        lock.lock();
    }
}

ServerImpl::LongCall::LongCall(ServerImpl& server, uint64_t client)
    : m_server(server)
    , m_client(client)
{
    std::lock_guard lock(m_server.m_mutex);
    if (auto c = m_server.m_clients.find(m_client); c != m_server.m_clients.end()) ++c->second.longCalls;
}

ServerImpl::LongCall::~LongCall()
{
    std::lock_guard lock(m_server.m_mutex);
    if (auto c = m_server.m_clients.find(m_client); c != m_server.m_clients.end()) {
        --c->second.longCalls;
        c->second.lastSeen = std::chrono::steady_clock::now();
    }
}

void ServerImpl::holderGone(const std::string& note, bool applyPolicy)
{
    if (!note.empty()) log(note);
    broadcastControl();
    if (applyPolicy && m_options.onDetach == OnDetach::Continue && m_session.isPaused()) {
        log("the run goes on (--on-detach continue)");
        m_session.continueRun();
    }
}

void ServerImpl::shutdown()
{
    {
        std::unique_lock lock(m_mutex);
        if (m_shutdown) { // another thread shuts down: wait until it is done
            m_shutdownCv.wait(lock, [&] { return m_shutdownDone; });
            return;
        }
        m_shutdown = true;
    }
    m_eventCv.notify_all();
    m_reaperCv.notify_all();
    if (m_reaper.joinable()) m_reaper.join();
    if (m_server) {
        m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        m_server->Wait();
    }
    // End the run (a program's loop may start another meanwhile: stop that too) and take this
    // listener out; setListener waits for a finished run's last callback.
    for (;;) {
        m_session.stop();
        m_session.waitUntilIdle(std::chrono::seconds(1));
        try {
            m_session.setListener(m_options.forward);
            break;
        } catch (const UsageError&) { // a run began again: stop it
        }
    }
    {
        std::lock_guard lock(m_mutex);
        m_shutdownDone = true;
    }
    m_shutdownCv.notify_all();
}

void ServerImpl::wait()
{
    if (m_server) m_server->Wait();
    std::unique_lock lock(m_mutex);
    m_shutdownCv.wait(lock, [&] { return m_shutdownDone || !m_shutdown; });
}

size_t ServerImpl::clientCount() const
{
    std::lock_guard lock(m_mutex);
    return m_clients.size();
}

void ServerImpl::log(const std::string& message) const
{
    if (m_options.log)
        m_options.log(message);
    else
        std::cerr << "opscope-server: " << message << "\n";
}

grpc::Status ServerImpl::checkToken(grpc::ServerContext* ctx)
{
    if (m_options.token.empty()) return grpc::Status::OK;
    const auto& md = ctx->client_metadata();
    auto it = md.find(remote::kAuthorizationKey);
    if (it == md.end()) {
        log("refused " + ctx->peer() + ": no token");
        return { grpc::StatusCode::UNAUTHENTICATED, "this server needs a token (authorization: Bearer <token>)" };
    }
    const std::string given(it->second.data(), it->second.size());
    const std::string want = "Bearer " + m_options.token;
    // Compared in time independent of where the first difference is.
    unsigned diff = given.size() != want.size();
    for (size_t i = 0; i < std::min(given.size(), want.size()); ++i)
        diff |= static_cast<unsigned char>(given[i] ^ want[i]);
    if (diff) {
        log("refused " + ctx->peer() + ": wrong token");
        return { grpc::StatusCode::UNAUTHENTICATED, "wrong token" };
    }
    return grpc::Status::OK;
}

grpc::Status ServerImpl::admit(grpc::ServerContext* ctx, uint64_t* client, bool control)
{
    if (grpc::Status s = checkToken(ctx); !s.ok()) return s;
    const auto& md = ctx->client_metadata();
    auto it = md.find(remote::kClientIdKey);
    uint64_t id = 0;
    if (it != md.end()) {
        try {
            id = std::stoull(std::string(it->second.data(), it->second.size()));
        } catch (const std::exception&) {
            id = 0;
        }
    }
    if (auto inst = md.find(remote::kInstanceKey);
        inst != md.end() && std::string_view(inst->second.data(), inst->second.size()) != m_instance)
        return { grpc::StatusCode::UNAUTHENTICATED,
            "client " + std::to_string(id) + " attached to an earlier run of this server (it was started again): attach again" };
    bool controlChanged = false, holderFreed = false;
    std::optional<grpc::Status> refused;
    std::string note; // logged after the lock (a log callback may call back)
    {
        std::lock_guard lock(m_mutex);
        auto c = m_clients.find(id);
        if (c == m_clients.end() && id > 0 && id < m_nextClient)
            return { grpc::StatusCode::UNAUTHENTICATED,
                "client " + std::to_string(id) + " is no longer attached (it detached, or was forgotten after "
                    + std::to_string(m_options.idleClientExpiry.count()) + " s without a call or an event stream): attach again" };
        if (c == m_clients.end())
            return { grpc::StatusCode::UNAUTHENTICATED,
                "unknown client " + std::to_string(id) + ": call Hello first (and send its client id as "
                    + remote::kClientIdKey + ")" };
        c->second.lastSeen = std::chrono::steady_clock::now();
        *client = id;
        if (control && m_holder != id) {
            note = freeStaleHolder(&holderFreed);
            if (m_holder != 0 || c->second.watchOnly) {
                const std::string holder = m_holder ? "client " + std::to_string(m_holder) + " ("
                        + m_clients.at(m_holder).name + ") holds control"
                                                    : "this client attached to watch";
                refused = grpc::Status { grpc::StatusCode::PERMISSION_DENIED,
                    holder + ": client " + std::to_string(id) + " may only watch until control is handed over to it" };
            } else {
                m_holder = id;
                controlChanged = true;
            }
        }
    }
    if (holderFreed) holderGone(note, !controlChanged); // taken by this client at once: its command decides
    if (refused) return *refused;
    if (controlChanged) broadcastControl();
    return grpc::Status::OK;
}

std::string ServerImpl::freeStaleHolder(bool* freed)
{
    *freed = false;
    auto h = m_clients.find(m_holder);
    if (h == m_clients.end()) { // its client is gone
        m_holder = 0;
        return {};
    }
    if (h->second.subscriptions > 0 || h->second.longCalls > 0
        || std::chrono::steady_clock::now() - h->second.lastSeen <= m_options.staleHolder)
        return {};
    const std::string note = "client " + std::to_string(m_holder) + " (" + h->second.name + ") went quiet: control is free";
    m_clients.erase(h);
    m_holder = 0;
    *freed = true;
    return note;
}

std::vector<std::string> ServerImpl::expireIdleClients(bool* holderExpired)
{
    *holderExpired = false;
    std::vector<std::string> notes;
    const auto now = std::chrono::steady_clock::now();
    for (auto c = m_clients.begin(); c != m_clients.end();) {
        if (c->second.subscriptions > 0 || c->second.longCalls > 0 || now - c->second.lastSeen <= m_options.idleClientExpiry) {
            ++c;
            continue;
        }
        notes.push_back("client " + std::to_string(c->first) + " (" + c->second.name + ") expired: no event stream and no call for "
            + std::to_string(m_options.idleClientExpiry.count()) + " s");
        if (m_holder == c->first) {
            m_holder = 0;
            *holderExpired = true;
        }
        c = m_clients.erase(c);
    }
    return notes;
}

void ServerImpl::controlState(uint64_t client, pb::ControlState* out) const
{
    out->set_holder(m_holder);
    if (auto h = m_clients.find(m_holder); h != m_clients.end()) out->set_holder_name(h->second.name);
    out->set_you_hold(client != 0 && client == m_holder);
    for (const auto& [id, c] : m_clients) {
        pb::ClientInfo* ci = out->add_clients();
        ci->set_id(id);
        ci->set_name(c.name);
        ci->set_peer(c.peer);
        ci->set_subscribed(c.subscriptions > 0);
    }
}

void ServerImpl::broadcast(std::shared_ptr<pb::Event> event)
{
    {
        std::lock_guard lock(m_mutex);
        for (const auto& s : m_subscribers) {
            if (event->what_case() == pb::Event::kPaused && s->givenPause
                && *s->givenPause == std::pair<uint64_t, uint64_t>(event->paused().run_id(), event->paused().sequence()))
                continue; // it had this one when it subscribed
            if (s->queue.size() >= kMaxQueuedEvents)
                s->overflow = true;
            else
                s->queue.push_back(event);
        }
    }
    m_eventCv.notify_all();
}

void ServerImpl::broadcastControl()
{
    auto e = std::make_shared<pb::Event>();
    {
        std::lock_guard lock(m_mutex);
        controlState(0, e->mutable_control());
    }
    broadcast(std::move(e));
}

void ServerImpl::clientVanished(uint64_t client)
{
    bool wasHolder = false;
    std::string name;
    {
        std::lock_guard lock(m_mutex);
        auto c = m_clients.find(client);
        if (m_shutdown || c == m_clients.end() || c->second.subscriptions > 0) return;
        name = c->second.name;
        m_clients.erase(c);
        wasHolder = m_holder == client;
        if (wasHolder) m_holder = 0;
    }
    log("client " + std::to_string(client) + " (" + name + ") vanished");
    broadcastControl(); // who is attached changed
    if (wasHolder && m_options.onDetach == OnDetach::Continue && m_session.isPaused()) m_session.continueRun();
}

void ServerImpl::runStarted(uint64_t runId)
{
    auto e = std::make_shared<pb::Event>();
    e->set_run_started(runId);
    broadcast(std::move(e));
    if (m_options.forward) m_options.forward->runStarted(runId);
}

void ServerImpl::paused(const PauseEvent& event)
{
    auto e = std::make_shared<pb::Event>();
    remote::toProto(event, e->mutable_paused());
    broadcast(std::move(e));
    if (m_options.forward) m_options.forward->paused(event);
}

void ServerImpl::runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record)
{
    std::vector<Tensor> copies; // with static_alloc the next run writes into the same buffers
    for (const Tensor& t : outputs)
        copies.push_back(t.copy());
    {
        std::lock_guard lock(m_mutex);
        m_outputs = std::move(copies);
        m_outputsRun = runId;
    }
    auto e = std::make_shared<pb::Event>();
    pb::RunFinished* f = e->mutable_run_finished();
    f->set_run_id(runId);
    f->set_stopped(record.status == RunStatus::Stopped);
    for (size_t i = 0; i < outputs.size(); ++i) {
        pb::TensorInfo* t = f->add_outputs();
        t->set_name("output" + std::to_string(i));
        t->set_index(static_cast<int>(i));
        remote::toProto(outputs[i].shape(), t->mutable_shape());
        t->set_dtype(remote::toProto(outputs[i].dtype()));
        remote::toProto(computeStats(outputs[i].view()), t->mutable_stats());
    }
    if (std::optional<Session::TrainStepResult> step = m_session.lastTrainStep(); step && step->runId == runId) {
        auto t = std::make_shared<pb::Event>();
        pb::TrainStep* s = t->mutable_train_step();
        s->set_run_id(runId);
        s->set_completed(step->completed);
        s->set_updated(step->updated);
        s->set_loss_sum(step->lossSum);
        s->set_batch(step->batch);
        s->set_error(step->error);
        broadcast(std::move(t));
    }
    broadcast(std::move(e));
    if (m_options.forward) m_options.forward->runFinished(runId, outputs, record);
}

void ServerImpl::runFailed(uint64_t runId, const std::string& error)
{
    auto e = std::make_shared<pb::Event>();
    e->set_run_failed(error);
    e->set_failed_run_id(runId);
    broadcast(std::move(e));
    if (m_options.forward) m_options.forward->runFailed(runId, error);
}

std::optional<Tensor> ServerImpl::findTensor(const pb::TensorRef& ref, std::string* what) const
{
    if (ref.what_case() == pb::TensorRef::kOutput) {
        std::lock_guard lock(m_mutex);
        *what = "output " + std::to_string(ref.output());
        if (ref.output() < 0 || static_cast<size_t>(ref.output()) >= m_outputs.size()) return std::nullopt;
        return m_outputs[static_cast<size_t>(ref.output())];
    }
    if (ref.what_case() == pb::TensorRef::kComparedA || ref.what_case() == pb::TensorRef::kComparedB) {
        const bool runB = ref.what_case() == pb::TensorRef::kComparedB;
        const std::string& name = runB ? ref.compared_b() : ref.compared_a();
        *what = "tensor '" + name + "' of the comparison's run " + (runB ? "B" : "A");
        return m_comparison.tensor(runB ? CompareSide::B : CompareSide::A, name, ref.pin_comparison());
    }
    *what = "tensor '" + ref.name() + "'";
    return m_session.tensorAt(ref.name(), { ref.pin_run(), ref.pin_pause() });
}

Server::Server(std::unique_ptr<ServerImpl> impl)
    : m_impl(std::move(impl))
{
}

Server::~Server() = default;

std::string Server::address() const { return m_impl->address(); }
int Server::port() const { return m_impl->port(); }
void Server::wait() { m_impl->wait(); }
void Server::shutdown() { m_impl->shutdown(); }
size_t Server::clientCount() const { return m_impl->clientCount(); }

std::unique_ptr<Server> serve(Session& session, ServeOptions options)
{
    auto impl = std::make_unique<ServerImpl>(session, std::move(options));
    impl->start();
    return std::make_unique<Server>(std::move(impl));
}

} // namespace opscope::debug
