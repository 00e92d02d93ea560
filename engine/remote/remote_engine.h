#pragma once

// Engine for a session on a server: the same interface as the local one, over a Client.

#include "debug/engine.h"
#include "remote/client.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace opscope::remote {

/// Drives a served session through a Client (owned). What the server refuses for a reason the
/// local session reports as false or nothing (no run active, an unknown breakpoint, node or tensor)
/// is reported so here too; anything else (no control, a server gone) throws RemoteError.
class RemoteEngine : public debug::Engine, private RemoteListener {
public:
    /// Connects (throws RemoteError as Client does).
    explicit RemoteEngine(ConnectOptions options);
    explicit RemoteEngine(std::unique_ptr<Client> client);
    ~RemoteEngine() override;

    Client& client() { return *m_client; }

    std::string where() const override { return m_client->options().address; }
    bool isRemote() const override { return true; }
    bool acceptsStart() const override { return !m_client->programStartsRuns(); }
    debug::ModelDescription model() override { return m_client->model(); }
    /// From the server's model description, asked again once per run.
    std::shared_ptr<const Graph> graph() override { return description().graph; }
    std::vector<Shape> graphShapes() override;
    /// Subscribes to the server's events (null: unsubscribes).
    void setListener(debug::EngineListener* listener) override;

    debug::SessionOptions options() override { return m_client->state().options; }
    void setOptions(const debug::SessionOptions& options) override { m_client->setOptions(options); }
    void setInputs(const std::vector<std::optional<Tensor>>& inputs) override { m_client->setInputs(inputs); }
    uint64_t start(debug::StartMode mode, bool trainStep) override { return m_client->start(mode, trainStep); }
    bool isRunning() override { return m_client->state().running; }
    uint64_t lastRunId() override { return m_client->state().lastRunId; }
    RunState runState() override
    {
        const remote::Client::State s = m_client->state();
        return { s.running, s.lastRunId };
    }

    bool continueRun() override;
    bool step() override;
    bool stepOver() override;
    bool stepOut() override;
    bool runTo(const std::string& node) override;
    bool pause() override;
    bool stop() override;

    int addBreakpoint(const debug::Breakpoint& b) override { return m_client->addBreakpoint(b); }
    bool updateBreakpoint(int id, const debug::Breakpoint& b) override;
    bool removeBreakpoint(int id) override;
    void clearBreakpoints() override { m_client->clearBreakpoints(); }
    std::vector<debug::Breakpoint> breakpoints() override { return m_client->breakpoints(); }

    std::optional<debug::PauseReport> currentPause() override { return m_client->state().pause; }
    std::optional<debug::Session::TensorSummary> summary(const std::string& tensorName, int bins,
        debug::HistogramScale scale, double lo, double hi, const debug::TensorPin& pin) override;
    std::optional<debug::TensorSlice> slice(
        const std::string& tensorName, const debug::SliceRequest& request, const debug::TensorPin& pin) override;
    std::optional<Tensor> fetch(const std::string& tensorName, const Progress& progress, const debug::TensorPin& pin) override;
    std::optional<Tensor> fetchOutput(int index, const Progress& progress) override;
    debug::RunRecord record() override { return m_client->record(); }
    std::shared_ptr<const debug::CompareOutcome> compare(const debug::CompareRequest& request) override
    {
        return std::make_shared<const debug::CompareOutcome>(m_client->compare(request));
    }
    void endComparison() override { m_client->endComparison(); }
    std::optional<Tensor> fetchCompared(
        debug::CompareSide side, const std::string& tensorName, const Progress& progress, uint64_t comparison) override;
    debug::Explanation explain(const debug::ExplainOptions& options) override { return m_client->explain(options); }
    /// Client::cancelPending: what waits on this engine's long calls is let go (a detach, a window closing).
    void cancelPending() { m_client->cancelPending(); }
    debug::ControlInfo control() override { return m_client->control(); }
    debug::ControlInfo takeControl() override { return m_client->takeControl(); }
    debug::ControlInfo releaseControl() override { return m_client->releaseControl(); }
    debug::ControlInfo handOverControl(uint64_t client) override { return m_client->handOver(client); }

private:
    void runStarted(uint64_t runId) override;
    void paused(const RemotePause& pause) override;
    void runFinished(uint64_t runId, bool stopped, const std::vector<OutputInfo>& outputs) override;
    void runFailed(uint64_t runId, const std::string& error) override;
    void trainStep(const debug::Session::TrainStepResult& step) override;
    void controlChanged(const ControlInfo& control) override;
    void disconnected(const std::string& why) override;

    /// The server's model description, asked for again when a run has started since.
    debug::ModelDescription description();

    std::unique_ptr<Client> m_client;
    std::atomic<uint64_t> m_runsSeen { 0 }; // the last run started, from the events
    std::mutex m_modelMutex;
    std::optional<debug::ModelDescription> m_model;
    uint64_t m_modelRun = 0;
    debug::EngineListener* m_listener = nullptr; // set while unsubscribed only
};

} // namespace opscope::remote
