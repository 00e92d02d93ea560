#pragma once

#include "debug/breakpoint_table.h"
#include "debug/gate.h"
#include "debug/run_record.h"
#include "debug/session_listener.h"
#include "debug/session_options.h"
#include "exec/executor.h"
#include "exec/observer.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

/// The session's execution observer: runs on the worker thread only. It decides at each op event
/// whether to pause (breakpoints, watchpoints, stepping), records the op, and on a hit publishes
/// a PauseEvent and waits at the gate.
///
/// Cost: wants() is asked once per executor plan, and the observer wants both phases of every node
/// of a debugged run, so pause() and breakpoints added while it runs act at the next op. onOp
/// decides cheaply: one atomic load for stop, one for pending commands, one for the breakpoint
/// version, and a per-node list of breakpoints (compiled against the run's graph: the model's or a
/// training step's). Statistics are computed only for tensors a condition tests.
class DebugObserver : public ExecutionObserver {
public:
    DebugObserver(Gate& gate, BreakpointTable& breakpoints, std::mutex& recordMutex, RunRecord& record);

    /// Prepares a run (worker thread, before the executor asks wants()).
    /// `exec` runs it (its kernels' preparation times and plan go into the record).
    void beginRun(uint64_t runId, const Graph& graph, const Executor& exec, const SessionOptions& options,
        StartMode mode, SessionListener* listener);
    bool watchesEveryNode() const { return m_watchAll; }
    /// "node 'x' (Op), inputs (2,3) (3,3)" for the node that began but did not finish, or "".
    std::string unfinishedOp() const;

    PhaseMask wants(const Graph& graph, uint32_t nodeId) override;
    ObserverAction onOp(const OpEvent& event) override;

private:
    enum class Mode : uint8_t { None, Entry, Step, StepOver, StepOut, RunTo, Pause };
    struct Compiled {
        int id;
        Breakpoint::Kind kind;
        OpPhase phase;
        int tensor; // Tensor kind: input index (Before) or output index (After); else -1
        Condition condition;
    };

    void compile(const Graph& graph);
    /// A `diff>T` condition on tensor k of the event: its relative L2 difference from the reference.
    bool differs(const OpEvent& e, bool input, size_t k, double threshold) const;
    void apply(const Command& c, const Graph& graph);
    bool stepHits(const OpEvent& e) const;
    const TensorStats& statsOf(const OpEvent& e, bool input, size_t k);
    void record(const OpEvent& e, int64_t timeNs);
    /// SessionOptions::recordInputs: the inputs before the op runs, for its record at its end.
    void recordInputs(const OpEvent& e);
    std::shared_ptr<const PauseEvent> makeEvent(const OpEvent& e, PauseReason reason, std::vector<int> ids, int focus);

    Gate& m_gate;
    BreakpointTable& m_breakpoints;
    std::mutex& m_recordMutex;
    RunRecord& m_record;
    SessionListener* m_listener = nullptr;
    SessionOptions m_options;
    uint64_t m_runId = 0;
    uint64_t m_pauses = 0;
    bool m_watchAll = false;

    uint64_t m_bpVersion = 0;
    std::vector<std::vector<Compiled>> m_byNode; // by node id
    std::vector<Compiled> m_watches;

    Mode m_mode = Mode::None;
    std::optional<uint32_t> m_anchorNode; // the event a step counts from
    OpPhase m_anchorPhase = OpPhase::Before;
    std::string m_anchorPath; // Step Out: the frame to leave
    const Graph* m_framesOf = nullptr; // the graph m_paths and m_frames belong to
    std::vector<std::string> m_paths, m_frames; // blockPaths and framePaths, by node id
    std::optional<uint32_t> m_runTo;

    // The last warm time of each node (by id) while the same executor keeps the same plan.
    const Executor* m_exec = nullptr;
    const Executor* m_warmExec = nullptr;
    uint64_t m_warmPlan = 0;
    std::vector<int64_t> m_warmNs;

    std::chrono::steady_clock::time_point m_beforeTime;
    std::optional<uint32_t> m_open; // node between its before and after events
    const Graph* m_graph = nullptr;
    std::vector<Shape> m_openInputShapes;
    OpRecord m_inputs; // the open node's inputs (recordInputs), for its record
    std::optional<uint32_t> m_inputsOf;

    // Statistics of the current event's tensors, computed at most once each.
    std::vector<TensorStats> m_inStats, m_outStats;
    std::vector<char> m_inHave, m_outHave;
};

} // namespace opscope::debug
