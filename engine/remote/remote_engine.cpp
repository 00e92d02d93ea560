#include "remote/remote_engine.h"

#include <grpcpp/support/status.h>

namespace opscope::remote {

namespace {
    // What the local session answers with false or nothing: true when `f` ran, false when the server
    // refused it with one of `codes`; other refusals are thrown on.
    template <class F> bool unlessRefused(F f, std::initializer_list<grpc::StatusCode> codes)
    {
        try {
            f();
            return true;
        } catch (const RemoteError& e) {
            for (grpc::StatusCode c : codes)
                if (e.code() == c) return false;
            throw;
        }
    }
    // A command: false when no run is active (as Session's commands).
    template <class F> bool command(F f) { return unlessRefused(f, { grpc::StatusCode::FAILED_PRECONDITION }); }
    // A tensor by name: nothing when the server has no such tensor (or no run to find it in).
    template <class T, class F> std::optional<T> lookup(F f)
    {
        std::optional<T> out;
        unlessRefused([&] { out = f(); }, { grpc::StatusCode::NOT_FOUND, grpc::StatusCode::FAILED_PRECONDITION });
        return out;
    }
}

RemoteEngine::RemoteEngine(ConnectOptions options)
    : m_client(std::make_unique<Client>(std::move(options)))
{
}

RemoteEngine::RemoteEngine(std::unique_ptr<Client> client)
    : m_client(std::move(client))
{
}

RemoteEngine::~RemoteEngine()
{
    if (m_listener) m_client->unsubscribe();
}

void RemoteEngine::setListener(debug::EngineListener* listener)
{
    if (m_listener) m_client->unsubscribe(); // joins the event thread: the old listener is called no more
    m_listener = listener;
    if (listener) m_client->subscribe(this);
}

debug::ModelDescription RemoteEngine::description()
{
    // Subscribed: the events say when a run began; otherwise ask.
    const uint64_t run = m_listener ? m_runsSeen.load() : lastRunId();
    std::lock_guard lock(m_modelMutex);
    if (!m_model || m_modelRun != run) {
        m_model = m_client->model();
        m_modelRun = run;
    }
    return *m_model;
}

std::vector<Shape> RemoteEngine::graphShapes()
{
    const debug::ModelDescription d = description();
    if (!d.graph) return {};
    const Graph& g = *d.graph;
    std::vector<Shape> out(g.numEntries());
    for (uint32_t i = 0; i < g.size(); ++i)
        for (int k = 0; k < g.node(i).numOutputs; ++k)
            out[g.entryId(i, static_cast<uint32_t>(k))] = d.shapeOf(g.node(i).name, static_cast<size_t>(k));
    return out;
}

bool RemoteEngine::continueRun() { return command([&] { m_client->continueRun(); }); }
bool RemoteEngine::step() { return command([&] { m_client->step(); }); }
bool RemoteEngine::stepOver() { return command([&] { m_client->stepOver(); }); }
bool RemoteEngine::stepOut() { return command([&] { m_client->stepOut(); }); }
bool RemoteEngine::pause() { return command([&] { m_client->pause(); }); }
bool RemoteEngine::stop() { return command([&] { m_client->stop(); }); }

bool RemoteEngine::runTo(const std::string& node)
{
    // The local session: false for a node the running graph lacks, as for no run.
    return unlessRefused([&] { m_client->runTo(node); }, { grpc::StatusCode::FAILED_PRECONDITION, grpc::StatusCode::NOT_FOUND });
}

bool RemoteEngine::updateBreakpoint(int id, const debug::Breakpoint& b)
{
    return unlessRefused([&] { m_client->updateBreakpoint(id, b); }, { grpc::StatusCode::NOT_FOUND });
}

bool RemoteEngine::removeBreakpoint(int id)
{
    return unlessRefused([&] { m_client->removeBreakpoint(id); }, { grpc::StatusCode::NOT_FOUND });
}

std::optional<debug::Session::TensorSummary> RemoteEngine::summary(
    const std::string& tensorName, int bins, debug::HistogramScale scale, double lo, double hi, const debug::TensorPin& pin)
{
    return lookup<debug::Session::TensorSummary>([&] { return m_client->summary(tensorName, bins, scale, lo, hi, pin); });
}

std::optional<debug::TensorSlice> RemoteEngine::slice(
    const std::string& tensorName, const debug::SliceRequest& request, const debug::TensorPin& pin)
{
    return lookup<debug::TensorSlice>([&] { return m_client->slice(tensorName, request, pin); });
}

std::optional<Tensor> RemoteEngine::fetch(const std::string& tensorName, const Progress& progress, const debug::TensorPin& pin)
{
    if (pin.run == 0) return lookup<Tensor>([&] { return m_client->fetch(tensorName, progress); });
    try {
        return m_client->fetch(tensorName, progress, pin);
    } catch (const RemoteError& e) {
        if (e.code() == grpc::StatusCode::NOT_FOUND) return std::nullopt;
        if (e.code() == grpc::StatusCode::FAILED_PRECONDITION) throw debug::MovedOnError(e.what()); // moved on
        throw;
    }
}

std::optional<Tensor> RemoteEngine::fetchCompared(
    debug::CompareSide side, const std::string& tensorName, const Progress& progress, uint64_t comparison)
{
    if (comparison == 0) return lookup<Tensor>([&] { return m_client->fetchCompared(side, tensorName, progress); });
    try {
        return m_client->fetchCompared(side, tensorName, progress, comparison);
    } catch (const RemoteError& e) {
        if (e.code() == grpc::StatusCode::NOT_FOUND) return std::nullopt;
        if (e.code() == grpc::StatusCode::FAILED_PRECONDITION) throw debug::MovedOnError(e.what()); // replaced or ended
        throw;
    }
}

std::optional<Tensor> RemoteEngine::fetchOutput(int index, const Progress& progress)
{
    return lookup<Tensor>([&] { return m_client->fetchOutput(index, progress); });
}

// The client's event thread; the listener changes only while no subscription runs.
void RemoteEngine::runStarted(uint64_t runId)
{
    m_runsSeen = runId;
    m_listener->runStarted(runId);
}
void RemoteEngine::paused(const RemotePause& pause) { m_listener->paused(pause); }
void RemoteEngine::runFinished(uint64_t runId, bool stopped, const std::vector<OutputInfo>& outputs)
{
    m_listener->runFinished(runId, stopped, outputs);
}
void RemoteEngine::runFailed(uint64_t runId, const std::string& error) { m_listener->runFailed(runId, error); }
void RemoteEngine::trainStep(const debug::Session::TrainStepResult& step) { m_listener->trainStep(step); }
void RemoteEngine::controlChanged(const ControlInfo& control) { m_listener->controlChanged(control); }
void RemoteEngine::disconnected(const std::string& why)
{
    // Our own unsubscribe() ends the stream too: that is no news for the listener.
    if (why != "unsubscribed") m_listener->disconnected(why);
}

} // namespace opscope::remote
