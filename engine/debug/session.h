#pragma once

#include "debug/breakpoint.h"
#include "debug/breakpoint_table.h"
#include "debug/debug_observer.h"
#include "debug/gate.h"
#include "debug/pause_event.h"
#include "debug/query_queue.h"
#include "debug/run_record.h"
#include "debug/session_listener.h"
#include "debug/session_options.h"
#include "debug/tensor_slice.h"
#include "debug/training_graph.h"
#include "gluon/block.h"
#include "gluon/trainer.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace opscope::debug {

/// A debugging session: one model, its inputs, breakpoints, and one worker thread that runs the
/// model's graph and pauses it. No Qt; the GUI and the CLI adapt it.
///
/// Threads. Every public method may be called from any thread at any time, except the
/// destructor, which must not be called from a listener callback (it joins the worker).
/// The listener is called on the worker thread. Commands (continueRun, step, stepOver, stepOut,
/// runTo, pause, stop) only change the pause gate's state under its mutex and notify it; the
/// worker, paused inside the executor's observer, waits on that gate. They return false when no
/// run is active (the command is dropped). A command given while the run is going on applies at
/// the next op event (one slot: a newer command replaces an older one not yet taken).
///
/// Paused-state requests (statsOf, histogramOf, slice) are served on the caller's thread from
/// the copied tensors of the current pause (immutable, so no lock is held while computing), or
/// from the tensors kept in the run record (looked up under the record's mutex). They never
/// resume the run and are independent of each other, so a newer request simply replaces what the
/// caller shows.
///
/// Cost: see DebugObserver (every node of a run is watched, so commands and breakpoints given during
/// a run act at its next op; an op with no breakpoint costs a few atomic loads).
///
/// A training step (startTrainStep) is a run like a forward pass, over the graph TrainingGraph
/// builds: the model, the loss and the backward pass, then the trainer's update on the worker.
///
/// The model (and, during a training step, the loss and the trainer) is used only by the worker
/// while a run is active: do not call them elsewhere meanwhile. stop() and the destructor end a
/// paused or running run at its next op event.
class Session {
public:
    explicit Session(SessionListener* listener = nullptr);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    /// The listener (not owned; must outlive the session or be replaced). Only while idle; waits
    /// for the last callback of a finished run (runFinished / runFailed come just after the run is
    /// over) to return, so the old listener may be destroyed as soon as this returns.
    void setListener(SessionListener* listener);

    /// A model: a HybridBlock (a sample, a SymbolBlock…) and the names its graph gives its inputs.
    /// The block is hybridized at the first run if it is not already (its flags are kept). Idle only.
    void load(std::shared_ptr<gluon::HybridBlock> block, std::vector<std::string> inputNames);
    /// Inputs, in the order of the input names. Idle only.
    void setInputs(std::vector<Tensor> inputs);
    /// The inputs set (copies sharing storage).
    std::vector<Tensor> inputs() const;
    /// The names load() was given.
    std::vector<std::string> inputNames() const;
    void setOptions(const SessionOptions& options);
    /// Changes the options in one step (no other change comes between reading and writing them);
    /// `change` must not call the session.
    void updateOptions(const std::function<void(SessionOptions&)>& change);
    SessionOptions options() const;

    /// Starts one forward pass on the worker; returns its run id (1, 2, …). Throws UsageError when
    /// a run is active or no model / wrong number of inputs is set. Errors of the model itself are
    /// reported to the listener (runFailed). Once the destructor has begun, starts nothing and
    /// returns 0 (a listener that starts the next run from runFinished cannot keep the session alive).
    uint64_t start(StartMode mode = StartMode::Run);

    /// What a training step needs besides the model: a loss block called as loss(prediction, label)
    /// (traced into the step's graph; its own parameters, if any, are bound but not trained) and a
    /// trainer over the model's parameters. Idle only; null `loss` ends training.
    void setTraining(std::shared_ptr<gluon::HybridBlock> loss, std::shared_ptr<gluon::Trainer> trainer);
    /// The labels of the next training step's mini-batch (the inputs are setInputs'). Idle only.
    void setLabel(Tensor label);
    /// Starts one training step on the worker as a run: forward, loss, backward (breakpoints and
    /// watchpoints apply to every node, `<node>_backward` ones too; see TrainingGraph), then, when the
    /// run completed, the gradients are written into the parameters' grad() (by their grad_req), the
    /// running statistics (auxiliary states, which the step computes on copies) are written back, and
    /// the trainer steps with the batch size (the inputs' first axis). A stopped or failed step
    /// changes nothing: a stop accepted until the update begins cancels it. runFinished gets the graph's heads: the loss per sample, then each parameter's
    /// gradient (lastTrainStep() names them). Throws UsageError as start() does, and when no
    /// training or label is set.
    uint64_t startTrainStep(StartMode mode = StartMode::Run);

    /// What the last training step did.
    struct TrainStepResult {
        uint64_t runId = 0;
        bool completed = false; ///< ran to its end (not stopped, not failed)
        bool updated = false; ///< the trainer stepped
        double lossSum = 0; ///< the loss summed over the batch
        int64_t batch = 0;
        std::vector<std::string> parameters; ///< the gradients among runFinished's outputs, after the loss
        std::string error; ///< why it failed, else empty
    };
    /// The last training step's result (set before its runFinished / runFailed), or nothing.
    std::optional<TrainStepResult> lastTrainStep() const;
    bool isRunning() const;
    /// The id of the last run started (0 before the first).
    uint64_t lastRunId() const;
    bool isPaused() const { return m_gate.paused(); }
    /// Waits until no run is active (true), or the timeout passes (false). A run is over, and a
    /// new one may be started, just before runFinished / runFailed is called.
    bool waitUntilIdle(std::chrono::milliseconds timeout) const;

    // Commands.
    bool continueRun();
    /// To the next tensor event: the before or after phase of the next op.
    bool step();
    /// To the end of the next op: from a node's before event, its own after event; otherwise the
    /// after event of the next node.
    bool stepOver();
    /// To the first node outside the innermost frame around the current node: the deepest block
    /// (graph/block_paths.h, the frames the window draws) holding more than one op. Runs to the end
    /// when there is none (the node is at the top level).
    bool stepOut();
    /// To the before event of `node`. False also for a node the current graph does not have.
    bool runTo(const std::string& node);
    /// Pauses at the next op event.
    bool pause();
    /// Ends the run (RunStatus::Stopped reported through runFinished).
    bool stop();

    // Breakpoints (ids from 1; hit counts restart with each run).
    int addBreakpoint(const Breakpoint& b) { return m_breakpoints.add(b); }
    bool removeBreakpoint(int id) { return m_breakpoints.remove(id); }
    bool updateBreakpoint(int id, const Breakpoint& b) { return m_breakpoints.update(id, b); }
    bool setBreakpointEnabled(int id, bool enabled) { return m_breakpoints.setEnabled(id, enabled); }
    void clearBreakpoints() { m_breakpoints.clear(); }
    std::vector<Breakpoint> breakpoints() const { return m_breakpoints.list(); }
    std::optional<Breakpoint> breakpoint(int id) const { return m_breakpoints.get(id); }

    // The paused state.
    /// The current pause, or null when not paused.
    std::shared_ptr<const PauseEvent> currentPause() const { return m_gate.currentPause(); }
    /// A tensor of the paused node or kept in the run record (current or last run), else a
    /// parameter of the model by its name (a copy: see parameter()), else an input of the runs by
    /// its name (as setInputs set it), or nothing.
    std::optional<Tensor> tensor(const std::string& tensorName) const;
    /// As tensor(), but only from where `pin` says it was seen: the pause (run, sequence), or run
    /// `pin.run`'s record (sequence 0; a parameter is read as it is now). Throws MovedOnError when
    /// the session has moved on from there (another pause, another run's record). A pin of run 0:
    /// tensor().
    std::optional<Tensor> tensorAt(const std::string& tensorName, const TensorPin& pin) const;
    /// A copy of a parameter (or auxiliary state) of the model, by its full name; nothing when the
    /// model has none of that name or it is not initialised yet. Read while no run is active or while
    /// the run is paused (a run, a training step's update, writes them); otherwise throws UsageError.
    std::optional<Tensor> parameter(const std::string& name) const;
    std::optional<TensorStats> statsOf(const std::string& tensorName) const;
    /// Over [lo, hi] when lo < hi, else over the tensor's finite range.
    std::optional<Histogram> histogramOf(const std::string& tensorName, int bins = 64,
        HistogramScale scale = HistogramScale::Linear, double lo = 0, double hi = 0) const;
    /// Throws UsageError for an index out of range.
    std::optional<TensorSlice> slice(const std::string& tensorName, const SliceRequest& request = {}, const TensorPin& pin = {}) const;

    /// Statistics and a histogram of one tensor, answered together.
    struct TensorSummary {
        Shape shape;
        TensorStats stats;
        Histogram histogram;
    };
    template <typename T> using Reply = std::function<void(const std::string& tensorName, std::optional<T> result, const std::string& error)>;
    /// The same questions, answered asynchronously on the session's query thread (not the worker,
    /// which may be paused; not the caller's): a newer request of the same kind replaces an older one
    /// not yet started, whose reply never comes. Replies run on the query thread; `error` names the
    /// tensor and what is wrong (no such tensor in the paused node or the record; index out of range).
    void requestSummary(const std::string& tensorName, Reply<TensorSummary> reply, int bins = 64,
        HistogramScale scale = HistogramScale::Linear, double lo = 0, double hi = 0);
    void requestSlice(const std::string& tensorName, const SliceRequest& request, Reply<TensorSlice> reply);
    /// The query thread's counters (tests).
    const QueryQueue& queries() const { return m_queries; }

    /// A copy of the current run's record so far, or of the last run's.
    RunRecord record() const;
    /// The graph of the current or last run (null before the first): the model's, or a training
    /// step's (TrainingGraph).
    std::shared_ptr<const Graph> graph() const;
    /// The shapes of every entry of graph(), by entry id, as that run inferred them.
    std::vector<Shape> graphShapes() const;

private:
    void workerLoop();
    enum class Job : uint8_t { Forward, TrainStep };
    void runOnce(uint64_t runId, StartMode mode, Job job);
    uint64_t startJob(StartMode mode, Job job);
    // The graph a run executes and its variables (worker only).
    std::shared_ptr<const Graph> modelGraph(gluon::HybridBlock& block, const std::vector<Tensor>& inputs, bool modelChanged);
    void prepareTrainStep(const std::shared_ptr<const Graph>& model, gluon::HybridBlock& block,
        const std::vector<Tensor>& inputs, const Tensor& label, const std::shared_ptr<gluon::HybridBlock>& loss,
        bool modelChanged);
    void applyUpdate(const RunResult& result, const std::vector<std::pair<gluon::ParamPtr, Tensor>>& auxCopies,
        gluon::Trainer& trainer, TrainStepResult& step);
    std::vector<Tensor> bindVariables(
        const Graph& g, const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& extra = {}) const;

    mutable std::mutex m_mutex; // guards the members below up to m_exec
    std::condition_variable m_cv; // worker: job or shutdown
    mutable std::condition_variable m_idleCv;
    SessionListener* m_listener = nullptr;
    std::shared_ptr<gluon::HybridBlock> m_block;
    std::vector<std::string> m_inputNames;
    std::vector<Tensor> m_inputs;
    SessionOptions m_options;
    bool m_running = false;
    int m_finalCallbacks = 0; // runFinished / runFailed calls going on (after m_running is false)
    bool m_jobPending = false;
    bool m_shutdown = false;
    StartMode m_startMode = StartMode::Run;
    Job m_job = Job::Forward;
    std::shared_ptr<gluon::HybridBlock> m_loss;
    std::shared_ptr<gluon::Trainer> m_trainer;
    Tensor m_label;
    std::optional<TrainStepResult> m_lastTrainStep;
    uint64_t m_lastRunId = 0;
    bool m_modelChanged = false; // since the last run: retrace, new executor
    std::shared_ptr<const Graph> m_graph;
    std::vector<Shape> m_graphShapes;

    // Worker only.
    std::vector<Shape> m_tracedShapes;
    std::unique_ptr<Executor> m_exec;
    // The training step's graph and executor, kept while the model graph, the loss and the shapes stay.
    TrainingGraph m_train;
    std::unique_ptr<Executor> m_trainExec;
    std::shared_ptr<const Graph> m_trainModelGraph;
    std::shared_ptr<gluon::HybridBlock> m_trainLoss;
    std::vector<Shape> m_trainShapes; // inputs, then the label
    std::pair<bool, bool> m_trainFlags; // static_alloc, static_shape
    Shape m_headGradShape;

    Gate m_gate;
    BreakpointTable m_breakpoints;
    mutable std::mutex m_recordMutex;
    RunRecord m_record;
    DebugObserver m_observer;
    QueryQueue m_queries; // after what its jobs read: destroyed (joined) before them
    std::thread m_worker; // last: starts after everything it uses exists
};

} // namespace opscope::debug
