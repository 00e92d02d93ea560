#include "debug/debug_observer.h"

#include "exec/gradient.h"
#include "graph/block_paths.h"
#include "graph/graph.h"

namespace opscope::debug {

namespace {
std::string slotName(const std::vector<std::string>& slots, size_t k, const char* fallback)
{
    return k < slots.size() ? slots[k] : fallback + std::to_string(k);
}
} // namespace

DebugObserver::DebugObserver(Gate& gate, BreakpointTable& breakpoints, std::mutex& recordMutex, RunRecord& record)
    : m_gate(gate)
    , m_breakpoints(breakpoints)
    , m_recordMutex(recordMutex)
    , m_record(record)
{
}

void DebugObserver::beginRun(uint64_t runId, const Graph& graph, const Executor& exec, const SessionOptions& options,
    StartMode mode, SessionListener* listener)
{
    m_runId = runId;
    m_exec = &exec;
    if (m_graph != &graph) m_framesOf = nullptr; // another graph (perhaps at the same address)
    m_graph = &graph;
    m_options = options;
    m_listener = listener;
    m_pauses = 0;
    m_mode = mode == StartMode::PauseAtEntry ? Mode::Entry : Mode::None;
    m_anchorNode.reset();
    m_runTo.reset();
    m_open.reset();
    m_inputsOf.reset();
    m_bpVersion = 0; // forces a compile at the first event
    // Every node of a debugged run is watched, so pause() and breakpoints added while it runs act
    // at the next op; onOp decides cheaply (docs/BENCHMARKS.md: a few percent on lenet).
    m_watchAll = true;
}

PhaseMask DebugObserver::wants(const Graph&, uint32_t)
{
    return m_watchAll ? PhaseMask::Both : PhaseMask::None;
}

std::string DebugObserver::unfinishedOp() const
{
    if (!m_open || !m_graph) return {};
    std::string s = m_graph->describe(*m_open);
    if (!m_openInputShapes.empty()) {
        s += ", inputs";
        for (const Shape& sh : m_openInputShapes) {
            s += ' ';
            s += sh.str();
        }
    }
    return s;
}

void DebugObserver::compile(const Graph& graph)
{
    const std::vector<Breakpoint> bps = m_breakpoints.snapshot(m_bpVersion);
    m_byNode.assign(graph.size(), {});
    m_watches.clear();
    for (const Breakpoint& b : bps) {
        switch (b.kind) {
        case Breakpoint::Kind::Watch:
            m_watches.push_back({ b.id, b.kind, b.phase, -1, b.condition });
            break;
        case Breakpoint::Kind::Node:
            if (auto id = graph.findNode(b.location); id && !graph.node(*id).isVariable()) {
                m_byNode[*id].push_back({ b.id, b.kind, b.phase, -1, b.condition });
            } else if (id) {
                // A variable (input, parameter): before the first op that reads it, on that input.
                if (auto reader = graph.firstReader(*id))
                    m_byNode[reader->first].push_back(
                        { b.id, b.kind, OpPhase::Before, static_cast<int>(reader->second), b.condition });
            }
            break;
        case Breakpoint::Kind::Tensor:
            // "<node>_<slot>": node names contain '_' too, so try every split.
            for (size_t cut = b.location.find('_'); cut != std::string::npos; cut = b.location.find('_', cut + 1)) {
                auto id = graph.findNode(b.location.substr(0, cut));
                if (!id || graph.node(*id).isVariable()) continue;
                const Node& n = graph.node(*id);
                const std::string slot = b.location.substr(cut + 1);
                for (size_t k = 0; k < n.inputSlots.size(); ++k)
                    if (n.inputSlots[k] == slot)
                        m_byNode[*id].push_back({ b.id, b.kind, OpPhase::Before, static_cast<int>(k), b.condition });
                for (size_t k = 0; k < n.outputSlots.size(); ++k)
                    if (n.outputSlots[k] == slot)
                        m_byNode[*id].push_back({ b.id, b.kind, OpPhase::After, static_cast<int>(k), b.condition });
            }
            break;
        }
    }
}

void DebugObserver::apply(const Command& c, const Graph& graph)
{
    m_runTo.reset();
    switch (c.kind) {
    case Command::Kind::Continue:
        m_mode = Mode::None;
        break;
    case Command::Kind::Step:
        m_mode = Mode::Step;
        break;
    case Command::Kind::Pause:
        m_mode = Mode::Pause;
        break;
    case Command::Kind::StepOver:
        m_mode = Mode::StepOver;
        break;
    case Command::Kind::StepOut:
        // Out of the innermost frame the graph view draws around the current node (the deepest
        // block holding more than one op), computed once per graph on the first Step Out.
        if (m_framesOf != &graph) {
            m_paths = blockPaths(graph);
            m_frames = framePaths(graph, m_paths);
            m_framesOf = &graph;
        }
        m_mode = Mode::StepOut;
        m_anchorPath = m_anchorNode && *m_anchorNode < m_frames.size() ? m_frames[*m_anchorNode] : std::string();
        break;
    case Command::Kind::RunTo:
        m_runTo = graph.findNode(c.node);
        m_mode = m_runTo ? Mode::RunTo : Mode::None;
        break;
    }
}

bool DebugObserver::stepHits(const OpEvent& e) const
{
    switch (m_mode) {
    case Mode::None:
        return false;
    case Mode::Entry:
    case Mode::Step:
    case Mode::Pause:
        return true;
    case Mode::StepOver:
        // From a node's before event: its own after event. Otherwise the next node's after event.
        return e.phase == OpPhase::After
            && !(m_anchorNode && m_anchorPhase == OpPhase::After && *m_anchorNode == e.nodeId);
    case Mode::StepOut:
        return e.phase == OpPhase::Before && e.nodeId < m_paths.size() && !pathWithin(m_paths[e.nodeId], m_anchorPath);
    case Mode::RunTo:
        return e.phase == OpPhase::Before && m_runTo && *m_runTo == e.nodeId;
    }
    return false;
}

const TensorStats& DebugObserver::statsOf(const OpEvent& e, bool input, size_t k)
{
    auto& have = input ? m_inHave : m_outHave;
    auto& stats = input ? m_inStats : m_outStats;
    if (!have[k]) {
        stats[k] = computeStats(input ? e.inputs[k] : e.outputs[k]);
        have[k] = 1;
    }
    return stats[k];
}

void DebugObserver::record(const OpEvent& e, int64_t timeNs)
{
    OpRecord r;
    r.nodeId = e.nodeId;
    r.node = e.node.name;
    r.op = e.node.opName();
    r.timeNs = timeNs;
    r.firstCall = e.firstCall;
    if (m_exec != m_warmExec || m_exec->planGeneration() != m_warmPlan) {
        m_warmExec = m_exec; // new kernels: earlier warm times are of others
        m_warmPlan = m_exec->planGeneration();
        m_warmNs.assign(e.graph.size(), 0);
    }
    if (e.nodeId < m_warmNs.size() && !e.firstCall) m_warmNs[e.nodeId] = timeNs;
    r.warmNs = e.nodeId < m_warmNs.size() ? m_warmNs[e.nodeId] : 0;
    if (e.firstCall) r.prepareNs = m_exec->prepareNs(e.nodeId);
    const bool stats = m_options.record == RecordLevel::Stats || m_options.record == RecordLevel::Tensors;
    for (size_t k = 0; k < e.outputs.size(); ++k) {
        r.outputNames.push_back(e.node.name + "_" + slotName(e.node.outputSlots, k, ""));
        r.outputShapes.push_back(e.outputs[k].shape());
        if (stats) {
            const TensorStats& s = statsOf(e, false, k);
            r.outputStats.push_back(s);
            r.outputHistograms.push_back(computeHistogram(e.outputs[k], s, m_options.recordHistogramBins));
        }
    }
    if (m_inputsOf == e.nodeId) {
        r.inputNames = std::move(m_inputs.inputNames);
        r.inputShapes = std::move(m_inputs.inputShapes);
        r.inputStats = std::move(m_inputs.inputStats);
    }
    m_inputsOf.reset();
    std::lock_guard lock(m_recordMutex);
    if (m_options.record == RecordLevel::Tensors)
        for (size_t k = 0; k < e.outputs.size(); ++k)
            m_record.keepTensor(r.outputNames[k], e.outputs[k]);
    m_record.ops.push_back(std::move(r));
}

void DebugObserver::recordInputs(const OpEvent& e)
{
    const bool stats = m_options.record == RecordLevel::Stats || m_options.record == RecordLevel::Tensors;
    m_inputs = {};
    m_inputsOf = e.nodeId;
    for (size_t k = 0; k < e.inputs.size(); ++k) {
        m_inputs.inputNames.push_back(e.graph.inputName(e.nodeId, k));
        m_inputs.inputShapes.push_back(e.inputs[k].shape());
        if (stats) m_inputs.inputStats.push_back(statsOf(e, true, k));
    }
    if (m_options.record != RecordLevel::Tensors) return;
    std::lock_guard lock(m_recordMutex);
    for (size_t k = 0; k < e.inputs.size(); ++k)
        m_record.keepTensor(m_inputs.inputNames[k], e.inputs[k]);
}

std::shared_ptr<const PauseEvent> DebugObserver::makeEvent(
    const OpEvent& e, PauseReason reason, std::vector<int> ids, int focus)
{
    auto ev = std::make_shared<PauseEvent>();
    ev->runId = m_runId;
    ev->sequence = ++m_pauses;
    ev->nodeId = e.nodeId;
    ev->node = e.node.name;
    ev->op = e.node.opName();
    ev->phase = e.phase;
    ev->blockPath = e.node.blockPath;
    ev->reason = reason;
    ev->breakpointIds = std::move(ids);
    for (size_t k = 0; k < e.inputs.size(); ++k) {
        const std::string slot = slotName(e.node.inputSlots, k, "input");
        ev->tensors.push_back(
            { e.node.name + "_" + slot, slot, true, static_cast<int>(k), Tensor::copyOf(e.inputs[k]) });
    }
    for (size_t k = 0; k < e.outputs.size(); ++k) {
        const std::string slot = slotName(e.node.outputSlots, k, "");
        ev->tensors.push_back(
            { e.node.name + "_" + slot, slot, false, static_cast<int>(k), Tensor::copyOf(e.outputs[k]) });
    }
    if (focus < 0 && !ev->tensors.empty()) focus = e.outputs.empty() ? 0 : static_cast<int>(e.inputs.size());
    ev->focus = focus;
    if (const PausedTensor* t = ev->focusTensor()) {
        const size_t k = static_cast<size_t>(t->index);
        ev->focusStats = statsOf(e, t->isInput, k);
        ev->focusHistogram
            = computeHistogram(t->values.view(), ev->focusStats, m_options.histogramBins, m_options.histogramScale);
    }
    return ev;
}

bool DebugObserver::differs(const OpEvent& e, bool input, size_t k, double threshold) const
{
    if (!m_options.reference) return false;
    const std::string name
        = input ? e.graph.inputName(e.nodeId, k) : e.graph.outputName({ e.nodeId, static_cast<uint32_t>(k), 0 });
    const auto it = m_options.reference->tensors.find(name);
    if (it == m_options.reference->tensors.end()) return false;
    const TensorView& mine = input ? e.inputs[k] : e.outputs[k];
    const TensorDiff d = compareTensors(name, mine, it->second.view(), {});
    if (!d.problem.empty() || d.nanOnlyA || d.nanOnlyB) return true;
    return d.relL2 > threshold;
}

ObserverAction DebugObserver::onOp(const OpEvent& e)
{
    const auto now = std::chrono::steady_clock::now();
    if (m_gate.stopRequested()) return ObserverAction::Stop;
    if (m_gate.hasCommand())
        if (std::optional<Command> c = m_gate.takeCommand()) apply(*c, e.graph);
    if (m_breakpoints.version() != m_bpVersion) compile(e.graph);

    m_inStats.resize(e.inputs.size());
    m_outStats.resize(e.outputs.size());
    m_inHave.assign(e.inputs.size(), 0);
    m_outHave.assign(e.outputs.size(), 0);

    // Breakpoints and watchpoints. `focus` indexes the pause event's tensors (inputs, then outputs).
    std::vector<int> hitIds;
    int focus = -1;
    bool nodeHit = false; // a node or tensor breakpoint (not only watchpoints) hit
    auto check = [&](const Compiled& b) {
        if (b.phase != e.phase) return;
        const bool input = e.phase == OpPhase::Before;
        const size_t n = input ? e.inputs.size() : e.outputs.size();
        const size_t base = input ? 0 : e.inputs.size();
        int found = -1;
        const bool gradients = b.condition.gradientsOnly;
        if (gradients && !isGradientNode(e.node)) return; // not a node of the backward pass
        for (size_t k = b.tensor >= 0 ? static_cast<size_t>(b.tensor) : 0; k < n; ++k) {
            const bool eligible = !gradients || (input ? isGradientInput(e.node, k) : isGradientNode(e.node));
            const bool holds = b.condition.needsReference() ? differs(e, input, k, b.condition.threshold)
                : !b.condition.needsStats() || b.condition.test(statsOf(e, input, k));
            if (eligible && holds) {
                found = static_cast<int>(base + k);
                break;
            }
            if (b.tensor >= 0) break;
        }
        const bool hit = found >= 0 || (!gradients && !b.condition.needsStats() && n == 0);
        if (hit && m_breakpoints.hit(b.id)) {
            hitIds.push_back(b.id);
            nodeHit = nodeHit || b.kind != Breakpoint::Kind::Watch;
            if (focus < 0) focus = found;
        }
    };
    if (e.nodeId < m_byNode.size())
        for (const Compiled& b : m_byNode[e.nodeId])
            check(b);
    for (const Compiled& b : m_watches)
        check(b);
    const bool stepHit = stepHits(e);

    if (e.phase == OpPhase::After) {
        const int64_t ns = m_open && *m_open == e.nodeId
            ? std::chrono::duration_cast<std::chrono::nanoseconds>(now - m_beforeTime).count()
            : 0;
        m_open.reset();
        if (m_options.record != RecordLevel::None) record(e, ns);
    }

    if (!hitIds.empty() || stepHit) {
        PauseReason reason = PauseReason::Step;
        if (!hitIds.empty())
            reason = nodeHit ? PauseReason::Breakpoint : PauseReason::Watchpoint;
        else if (m_mode == Mode::Entry)
            reason = PauseReason::Entry;
        else if (m_mode == Mode::StepOver)
            reason = PauseReason::StepOver;
        else if (m_mode == Mode::StepOut)
            reason = PauseReason::StepOut;
        else if (m_mode == Mode::RunTo)
            reason = PauseReason::RunTo;
        else if (m_mode == Mode::Pause)
            reason = PauseReason::Pause;
        std::shared_ptr<const PauseEvent> ev = makeEvent(e, reason, std::move(hitIds), focus);
        m_gate.enterPause(ev);
        if (m_listener) m_listener->paused(*ev);
        std::optional<Command> c = m_gate.waitWhilePaused();
        if (!c) return ObserverAction::Stop;
        m_anchorNode = e.nodeId;
        m_anchorPhase = e.phase;
        apply(*c, e.graph);
    } else {
        m_anchorNode = e.nodeId;
        m_anchorPhase = e.phase;
    }
    if (e.phase == OpPhase::Before) {
        m_open = e.nodeId;
        m_openInputShapes.clear();
        for (const TensorView& v : e.inputs)
            m_openInputShapes.push_back(v.shape());
        if (m_options.record != RecordLevel::None && m_options.recordInputs) recordInputs(e);
        m_beforeTime = std::chrono::steady_clock::now(); // the op's time starts here
    }
    return ObserverAction::Continue;
}

} // namespace opscope::debug
