#pragma once

// What a debugger front end drives: a debug session in this process (LocalEngine) or on a server
// (remote::RemoteEngine). One interface, so that the window and the command line have one code path
// whichever the engine is; the local session is simply the in-process case.

#include "debug/breakpoint.h"
#include "debug/compare_request.h"
#include "debug/explain.h"
#include "debug/model_description.h"
#include "debug/pause_event.h"
#include "debug/run_record.h"
#include "debug/session.h"
#include "debug/session_options.h"
#include "debug/tensor_slice.h"
#include "debug/tensor_stats.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

/// A pause as every engine reports it: the event, and per tensor (in the event's order) its shape,
/// type and statistics. `event.tensors[i].values` hold the values only when the engine runs here
/// (`valuesHere`); otherwise fetch them by name.
struct PauseReport {
    PauseEvent event;
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    std::vector<TensorStats> stats;
    bool valuesHere = false;
};
/// The report of a local pause: statistics of every tensor computed now (on the calling thread),
/// or with `statistics` false only shapes and types.
PauseReport reportOf(const PauseEvent& event, bool statistics = true);

/// `own` with each input `given` has in its place (Engine::setInputs), for a model of `count`
/// inputs. Throws UsageError for more given than `count`, or an input left to `own` that it lacks.
std::vector<Tensor> mergeInputs(std::vector<Tensor> own, const std::vector<std::optional<Tensor>>& given, size_t count);

/// An output of a finished run, as its end reports it (the values: Engine::fetchOutput).
struct OutputInfo {
    Shape shape;
    DType dtype = DType::Float32;
    TensorStats stats;
};

/// Who is attached to an engine, and who holds control (a local engine: only this process, which
/// holds it).
struct ControlInfo {
    uint64_t holder = 0;
    std::string holderName;
    bool youHold = false;
    struct Attached {
        uint64_t id = 0;
        std::string name, peer;
        bool subscribed = false;
    };
    std::vector<Attached> clients;
};

/// What an engine reports, on a thread of its own (a local session's worker, a client's event
/// thread), one call at a time and in order. A listener must not destroy its engine from a call.
class EngineListener {
public:
    virtual ~EngineListener() = default;
    virtual void runStarted(uint64_t runId) { }
    virtual void paused(const PauseReport& pause) { }
    virtual void runFinished(uint64_t runId, bool stopped, const std::vector<OutputInfo>& outputs) { }
    virtual void runFailed(uint64_t runId, const std::string& error) { }
    virtual void trainStep(const Session::TrainStepResult& step) { }
    virtual void controlChanged(const ControlInfo& control) { }
    /// The engine is gone (a server that went away: `why`); nothing more comes. Never for a local one.
    virtual void disconnected(const std::string& why) { }
};

/// A debug session, here or elsewhere. Every method may be called from any thread. A call the
/// engine refuses throws (UsageError locally, remote::RemoteError from a server) with a message
/// that names what and why; commands return false when no run is active, as Session's do.
class Engine {
public:
    virtual ~Engine() = default;

    /// Where the engine runs, for people: "this process", or the server's HOST:PORT.
    virtual std::string where() const = 0;
    virtual bool isRemote() const = 0;
    /// Whether start() may be called: false where the served program starts every run itself.
    virtual bool acceptsStart() const { return true; }
    /// The model, its graph and shapes (the graph of the last run for a program's own session; no
    /// graph before its first run).
    virtual ModelDescription model() = 0;
    /// The graph of the current or last run (a training step's, or the model's), and the shape of
    /// each of its entries by entry id; null / empty before the first run when the engine does not
    /// know its model's graph otherwise.
    virtual std::shared_ptr<const Graph> graph() = 0;
    virtual std::vector<Shape> graphShapes() = 0;

    /// The listener (not owned; null: none). Replacing it waits until the old one is no longer called.
    virtual void setListener(EngineListener* listener) = 0;

    virtual SessionOptions options() = 0;
    /// All but the reference run of `diff>T` conditions: that is the engine's comparison's (compare()).
    virtual void setOptions(const SessionOptions& options) = 0;
    /// The inputs of the next runs, by position among the model's inputs: a tensor, or nothing for
    /// the engine's own (what it was started with; a server's); inputs not listed (labels) are its
    /// own too. Idle only. Throws UsageError (remotely RemoteError) for more inputs than the model
    /// has, during a run, or where the served program feeds its own.
    virtual void setInputs(const std::vector<std::optional<Tensor>>& inputs) = 0;
    /// A run (a forward pass, or a training step) with the inputs the engine has; its id.
    virtual uint64_t start(StartMode mode = StartMode::Run, bool trainStep = false) = 0;
    virtual bool isRunning() = 0;
    virtual uint64_t lastRunId() = 0;
    /// Both at once (remotely, one request).
    struct RunState {
        bool running = false;
        uint64_t lastRunId = 0;
    };
    virtual RunState runState() { return { isRunning(), lastRunId() }; }

    virtual bool continueRun() = 0;
    virtual bool step() = 0;
    virtual bool stepOver() = 0;
    virtual bool stepOut() = 0;
    virtual bool runTo(const std::string& node) = 0;
    virtual bool pause() = 0;
    virtual bool stop() = 0;

    virtual int addBreakpoint(const Breakpoint& b) = 0;
    virtual bool updateBreakpoint(int id, const Breakpoint& b) = 0;
    virtual bool removeBreakpoint(int id) = 0;
    virtual void clearBreakpoints() = 0;
    virtual std::vector<Breakpoint> breakpoints() = 0;
    /// By id, from breakpoints() unless the engine answers it directly.
    virtual std::optional<Breakpoint> breakpoint(int id);
    /// As updateBreakpoint with `enabled` changed, unless the engine answers it directly.
    virtual bool setBreakpointEnabled(int id, bool enabled);

    /// The pause going on, or nothing.
    virtual std::optional<PauseReport> currentPause() = 0;
    /// A tensor of the paused node or of the run record, by name ("<node>_<slot>"); nothing when
    /// there is no such tensor. Statistics and histogram computed where the engine runs.
    /// `pin`: only from where the tensor was seen (Session::tensorAt); moved on, it throws
    /// (MovedOnError here, RemoteError FAILED_PRECONDITION from a server).
    virtual std::optional<Session::TensorSummary> summary(const std::string& tensorName, int bins = 64,
        HistogramScale scale = HistogramScale::Linear, double lo = 0, double hi = 0, const TensorPin& pin = {}) = 0;
    virtual std::optional<TensorSlice> slice(const std::string& tensorName, const SliceRequest& request = {}, const TensorPin& pin = {}) = 0;
    /// The whole tensor; `progress(received, total bytes)` as it arrives (remote).
    using Progress = std::function<void(size_t received, size_t total)>;
    /// `pin`: only from where it was seen (as summary()); MovedOnError once the engine moved on.
    virtual std::optional<Tensor> fetch(const std::string& tensorName, const Progress& progress = {}, const TensorPin& pin = {}) = 0;
    /// Output `index` of the last finished run.
    virtual std::optional<Tensor> fetchOutput(int index, const Progress& progress = {}) = 0;
    /// The current run's record so far, or the last run's. A remote one keeps no values (its
    /// keptNames() is empty): fetch() finds a kept tensor by name wherever the engine runs.
    virtual RunRecord record() = 0;

    /// A comparison (debug/compare_request.h) computed where the engine runs, on threads of its own
    /// (a run going on shares no ops with it). Its run B becomes the reference of `diff>T` conditions;
    /// the engine keeps both runs for fetchCompared() until endComparison() or a later comparison.
    /// Throws UsageError when the engine cannot compare (no model it can load again), and what
    /// loading or running throws (a server's message).
    virtual std::shared_ptr<const CompareOutcome> compare(const CompareRequest& request) = 0;
    /// Forgets the comparison's runs and the reference.
    virtual void endComparison() = 0;
    /// A tensor of the last comparison's run A or B; nothing when that run lacks it (or there is no
    /// comparison).
    /// `comparison` (a CompareOutcome::id, 0: whichever is kept): from that comparison only;
    /// MovedOnError naming it (from a server, its FAILED_PRECONDITION) once a later one replaced
    /// it or it ended.
    virtual std::optional<Tensor> fetchCompared(
        CompareSide side, const std::string& tensorName, const Progress& progress = {}, uint64_t comparison = 0) = 0;

    /// Why the engine's model gives its answer for the input its runs take now (debug/explain.h),
    /// computed where the engine runs with a model of its own, loaded again (the run going on is
    /// untouched). Explanation::input is that input. `options.progress` hears the work done and
    /// cancels it by returning false (Explanation::cancelled). Throws UsageError when the engine
    /// cannot explain (no model it can load again) or its model or input cannot be explained (a
    /// server's engine: remote::RemoteError with the server's status, UNIMPLEMENTED or
    /// INVALID_ARGUMENT, and its reason).
    virtual Explanation explain(const ExplainOptions& options) = 0;

    virtual ControlInfo control() = 0;
    /// Control of an engine several clients share: take it (when nobody holds it or its holder has
    /// gone), give it up, hand it to another attached client. Each returns who holds it afterwards;
    /// a refusal throws with the reason. A local engine: this process always holds it.
    virtual ControlInfo takeControl() { return control(); }
    virtual ControlInfo releaseControl() { return control(); }
    virtual ControlInfo handOverControl(uint64_t /*client*/) { return control(); }
};

} // namespace opscope::debug
