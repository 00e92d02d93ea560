#pragma once

// The in-process case of Engine: a Session of this process.

#include "debug/comparison_slot.h"
#include "debug/engine.h"

#include <mutex>

namespace opscope::debug {

/// Drives a Session (not owned; it must outlive this engine). The engine is the session's listener
/// while it has one of its own: a pause is reported with every tensor's statistics (computed on the
/// worker) and its values; copies of the outputs of the last finished run are kept for fetchOutput.
class LocalEngine : public Engine, private SessionListener {
public:
    /// `description`: the model as the front end loaded it (its source and header lines); the graph
    /// and shapes of the session's last run replace its own once there has been one.
    explicit LocalEngine(Session& session, ModelDescription description = {});
    ~LocalEngine() override;

    Session& session() { return m_session; }
    void setDescription(ModelDescription description);
    /// Whether the pauses the listener hears carry every tensor's statistics (default: yes). A
    /// listener that looks only at the event (its tensors have their values here) turns this off and
    /// spares the worker a pass over every paused tensor; currentPause() always has them.
    void setPauseStatistics(bool on);
    /// What compare() runs (null: comparing is refused); the front end that loaded the model gives it.
    void setComparer(Comparer comparer);
    /// What explain() runs (null: explaining is refused); the front end that loaded the model gives it.
    void setExplainer(Explainer explainer);

    std::string where() const override { return "this process"; }
    bool isRemote() const override { return false; }
    ModelDescription model() override;
    std::shared_ptr<const Graph> graph() override { return m_session.graph(); }
    std::vector<Shape> graphShapes() override { return m_session.graphShapes(); }
    void setListener(EngineListener* listener) override;

    SessionOptions options() override { return m_session.options(); }
    /// All but the reference run, which is the engine's comparison's (compare(), endComparison()).
    void setOptions(const SessionOptions& options) override;
    /// Nothing in `inputs`: the session's input there stays as it is.
    void setInputs(const std::vector<std::optional<Tensor>>& inputs) override;
    uint64_t start(StartMode mode, bool trainStep) override;
    bool isRunning() override { return m_session.isRunning(); }
    uint64_t lastRunId() override { return m_session.lastRunId(); }

    bool continueRun() override { return m_session.continueRun(); }
    bool step() override { return m_session.step(); }
    bool stepOver() override { return m_session.stepOver(); }
    bool stepOut() override { return m_session.stepOut(); }
    bool runTo(const std::string& node) override { return m_session.runTo(node); }
    bool pause() override { return m_session.pause(); }
    bool stop() override { return m_session.stop(); }

    int addBreakpoint(const Breakpoint& b) override { return m_session.addBreakpoint(b); }
    bool updateBreakpoint(int id, const Breakpoint& b) override { return m_session.updateBreakpoint(id, b); }
    bool removeBreakpoint(int id) override { return m_session.removeBreakpoint(id); }
    void clearBreakpoints() override { m_session.clearBreakpoints(); }
    std::vector<Breakpoint> breakpoints() override { return m_session.breakpoints(); }
    std::optional<Breakpoint> breakpoint(int id) override { return m_session.breakpoint(id); }
    bool setBreakpointEnabled(int id, bool enabled) override { return m_session.setBreakpointEnabled(id, enabled); }

    std::optional<PauseReport> currentPause() override;
    std::optional<Session::TensorSummary> summary(const std::string& tensorName, int bins, HistogramScale scale,
        double lo, double hi, const TensorPin& pin) override;
    std::optional<TensorSlice> slice(const std::string& tensorName, const SliceRequest& request, const TensorPin& pin) override;
    std::optional<Tensor> fetch(const std::string& tensorName, const Progress& progress, const TensorPin& pin) override;
    std::optional<Tensor> fetchOutput(int index, const Progress& progress) override;
    RunRecord record() override { return m_session.record(); }
    std::shared_ptr<const CompareOutcome> compare(const CompareRequest& request) override;
    Explanation explain(const ExplainOptions& options) override;
    void endComparison() override;
    std::optional<Tensor> fetchCompared(
        CompareSide side, const std::string& tensorName, const Progress& progress, uint64_t comparison) override;
    ControlInfo control() override;

private:
    EngineListener* listener() const;
    void runStarted(uint64_t runId) override;
    void paused(const PauseEvent& event) override;
    void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record) override;
    void runFailed(uint64_t runId, const std::string& error) override;

    Session& m_session;
    mutable std::mutex m_mutex; // guards the members below
    EngineListener* m_listener = nullptr;
    bool m_pauseStatistics = true;
    ModelDescription m_description;
    std::vector<Tensor> m_outputs; // of the last finished run
    Comparer m_comparer;
    Explainer m_explainer;
    ComparisonSlot m_comparison;
};

} // namespace opscope::debug
