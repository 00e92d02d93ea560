#include "exec/executor.h"

#include "core/error.h"
#include "tensor/memory_limit.h"
#include "tensor/random.h"

#include <algorithm>
#include <chrono>

namespace opscope {

namespace {
    int64_t nowNs()
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
}

Executor::Executor(std::shared_ptr<const Graph> graph, ExecFlags flags, KernelKind kind)
    : m_graph(std::move(graph))
    , m_flags(flags)
    , m_kind(kind)
{
    if (!m_graph || !m_graph->finalized())
        throw UsageError("an executor needs a finalized graph");
    if (m_flags.static_shape && !m_flags.static_alloc)
        throw UsageError("static_shape requires static_alloc (hybridize(static_alloc=true, static_shape=true))");
    for (uint32_t v : m_graph->variables())
        m_variableEntries.push_back(m_graph->entryId(v, 0));
    m_movedVariables.reserve(m_variableEntries.size());
}

Executor::~Executor() = default;

void Executor::attach(ExecutionObserver* observer)
{
    if (std::find(m_observers.begin(), m_observers.end(), observer) == m_observers.end())
        m_observers.push_back(observer);
    recomputeWants();
}

void Executor::detach(ExecutionObserver* observer)
{
    m_observers.erase(std::remove(m_observers.begin(), m_observers.end(), observer), m_observers.end());
    recomputeWants();
}

void Executor::setPrecision(std::vector<Precision> byNode)
{
    if (byNode.size() > m_graph->size())
        throw UsageError("precision given for " + std::to_string(byNode.size()) + " nodes, the graph has "
            + std::to_string(m_graph->size()));
    m_precision = std::move(byNode);
    m_precisionDirty = true;
}

void Executor::refreshWants()
{
    recomputeWants();
}

void Executor::recomputeWants()
{
    // Each step's observers by phase, in the order they attached, so that notify() calls exactly
    // those that want the phase: m_calls[m_callRange[2i + p] … m_callRange[2i + p + 1]) for step i,
    // p 0 before and 1 after.
    // Until the lists are whole again (an observer's wants() or tensorCalls() may throw), the
    // static_alloc table calls nobody, and the next run lists again.
    m_wantsStale = true;
    m_watchCalls.clear();
    for (KernelStep& k : m_kernelSteps)
        k.before = k.after = k.end = 0;
    const size_t n = m_steps.size();
    std::vector<PhaseMask> masks(m_observers.size(), PhaseMask::None);
    m_calls.clear();
    m_callRange.assign(2 * n + 1, 0);
    m_anyWants = false;
    for (size_t i = 0; i < n; ++i) {
        Step& s = m_steps[i];
        PhaseMask m = PhaseMask::None;
        for (size_t o = 0; o < m_observers.size(); ++o) {
            masks[o] = m_observers[o]->wants(*m_graph, s.node);
            m = m | masks[o];
        }
        for (const OpPhase p : { OpPhase::Before, OpPhase::After }) {
            for (size_t o = 0; o < m_observers.size(); ++o)
                if (hasPhase(masks[o], p)) m_calls.push_back(m_observers[o]);
            m_callRange[2 * i + (p == OpPhase::After ? 2 : 1)] = static_cast<uint32_t>(m_calls.size());
        }
        s.wants = m;
        m_anyWants = m_anyWants || m != PhaseMask::None;
    }
    // Then, every wants() asked, the callbacks on single tensors observers hand out instead of onOp().
    m_callTensors.clear();
    m_tensorCalls.clear();
    for (size_t i = 0; i < n; ++i) {
        for (uint32_t after = 0; after < 2; ++after) {
            const OpPhase p = after ? OpPhase::After : OpPhase::Before;
            for (uint32_t c = m_callRange[2 * i + after]; c < m_callRange[2 * i + after + 1]; ++c) {
                const auto begin = static_cast<uint32_t>(m_tensorCalls.size());
                const bool direct = m_calls[c]->tensorCalls(m_steps[i].node, p, m_tensorCalls);
                if (!direct) m_tensorCalls.resize(begin);
                m_callTensors.push_back(CallTensors { begin, static_cast<uint32_t>(m_tensorCalls.size()), !direct });
            }
        }
    }
    listWatchCalls();
    m_wantsStale = false;
    m_fusionDirty = !m_candidates.empty() || !m_layoutSteps.empty() || !m_layoutWatched.empty() || !m_storageSteps.empty();
}

int64_t Executor::prepareNs(uint32_t nodeId) const
{
    return nodeId < m_prepareByNode.size() ? m_prepareByNode[nodeId] : 0;
}

std::vector<std::string> Executor::kernelBackends() const
{
    std::vector<std::string> out(m_graph->size());
    for (const Step& s : m_steps)
        out[s.node] = s.kernel ? s.kernel->backend() : "";
    return out;
}

void Executor::plan(std::span<const Tensor> variables)
{
    const Graph& g = *m_graph;
    std::vector<Shape> varShapes;
    varShapes.reserve(variables.size());
    for (const Tensor& t : variables)
        varShapes.push_back(t.shape());
    std::vector<Shape> shapes = g.inferShapes(varShapes);
    std::vector<DType> varTypes;
    varTypes.reserve(variables.size());
    for (const Tensor& t : variables)
        varTypes.push_back(t.dtype());
    std::vector<DType> types = g.inferTypes(varTypes);
    for (size_t v = 0; v < variables.size(); ++v) {
        const uint32_t id = g.variables()[v];
        if (shapes[g.entryId(id, 0)] != varShapes[v])
            throw ShapeError(g.describe(id) + ": expected shape " + shapes[g.entryId(id, 0)].str() + ", got "
                + varShapes[v].str());
    }
    // Variables that do not fit leave the last plan as it was (shapes and types included).
    m_shapes = std::move(shapes);
    m_types = std::move(types);

    // From here the old plan is gone: a plan that fails (a kernel refused, memory) is made again
    // at the next run.
    m_planned = false;
    m_buffersReady = false;
    m_candidates.clear();
    m_steps.clear();
    m_layoutSteps.clear();
    m_layoutWatched.clear();
    m_nativeElements.clear();
    m_storageSteps.clear();
    m_storageSlot.clear();
    m_slotElements.clear();
    m_kernels.clear();
    m_kernelSteps.clear(); // it points into what is made again here
    m_inPtrs.clear();
    m_inEntries.clear();
    m_outPtrs.clear();
    m_values.assign(g.numEntries(), Tensor());
    m_useCount.assign(g.numEntries(), 0);
    m_isVariableEntry.assign(g.numEntries(), false);
    m_prepareByNode.assign(g.size(), 0);
    ++m_planGeneration;
    size_t maxIn = 0, maxOut = 0;
    std::vector<Shape> inShapes, outShapes;
    for (uint32_t id = 0; id < g.size(); ++id) {
        const Node& n = g.node(id);
        if (n.isVariable()) {
            m_isVariableEntry[g.entryId(id, 0)] = true;
            continue;
        }
        Step s {};
        s.node = id;
        s.inBegin = static_cast<uint32_t>(m_inEntries.size());
        s.inCount = static_cast<uint32_t>(n.inputs.size());
        inShapes.clear();
        for (const NodeEntry& e : n.inputs) {
            m_inEntries.push_back(g.entryId(e));
            ++m_useCount[g.entryId(e)];
            inShapes.push_back(m_shapes[g.entryId(e)]);
        }
        s.outBegin = g.entryId(id, 0);
        s.outCount = static_cast<uint32_t>(n.numOutputs);
        outShapes.assign(m_shapes.begin() + s.outBegin, m_shapes.begin() + s.outBegin + s.outCount);
        const auto prepareStart = std::chrono::steady_clock::now();
        try {
            auto kernel = n.def->makeKernel(*n.params, inShapes, outShapes, m_kind);
            if (id < m_precision.size()) kernel = withPrecision(std::move(kernel), m_precision[id]);
            m_kernels.push_back(std::move(kernel));
        } catch (const Error& e) {
            rethrowAt(id, e);
        }
        s.prepareNs
            = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - prepareStart).count();
        s.called = false;
        s.runOut = s.outBegin;
        s.absorbed = false;
        s.extraBegin = 0;
        s.extraCount = 0;
        s.kernel = m_kernels.back().get();
        m_prepareByNode[id] = s.prepareNs;
        maxIn = std::max(maxIn, n.inputs.size());
        maxOut = std::max(maxOut, static_cast<size_t>(n.numOutputs));
        m_steps.push_back(s);
    }
    for (const NodeEntry& h : g.heads())
        ++m_useCount[g.entryId(h)];
    // Pointer tables into m_values (sized once above, so the pointers stay valid).
    for (uint32_t i = 0; i < m_inEntries.size(); ++i)
        m_inPtrs.push_back(&m_values[m_inEntries[i]]);
    m_variableInputs.clear();
    m_variableInputBegin.assign(1, 0);
    {
        std::vector<std::vector<uint32_t>> readers(m_variableEntries.size());
        std::vector<int64_t> variableOf(m_values.size(), -1);
        for (size_t v = 0; v < m_variableEntries.size(); ++v)
            variableOf[m_variableEntries[v]] = static_cast<int64_t>(v);
        for (uint32_t i = 0; i < m_inEntries.size(); ++i)
            if (const int64_t v = variableOf[m_inEntries[i]]; v >= 0) readers[static_cast<size_t>(v)].push_back(i);
        for (const std::vector<uint32_t>& r : readers) {
            m_variableInputs.insert(m_variableInputs.end(), r.begin(), r.end());
            m_variableInputBegin.push_back(static_cast<uint32_t>(m_variableInputs.size()));
        }
    }
    m_outPtrs.resize(m_values.size());
    for (size_t e = 0; e < m_values.size(); ++e)
        m_outPtrs[e] = &m_values[e];
    m_remaining = m_useCount;
    checkPlanFits();
    m_inViews.resize(maxIn);
    m_outViews.resize(maxOut);
    m_planVariableShapes = varShapes;
    m_precisionDirty = false;
    m_buffersReady = false;
    m_viewsReady = false;
    m_candidates.clear();
    recomputeWants();
    fuse();
    keepNativeLayouts();
    makeKernelSteps();
    m_planned = true; // only now: a plan that threw on the way is made again at the next run
}

void Executor::rethrowAt(uint32_t node, const Error& e) const
{
    throw Error(m_graph->describe(node) + ": " + e.what());
}

void Executor::checkPlanFits()
{
    // The memory of the run at its peak, before the first buffer is allocated: with static_alloc
    // every output at once, otherwise as the run frees each intermediate after its last use.
    const Graph& g = *m_graph;
    std::vector<uint32_t> remaining = m_useCount;
    int64_t live = 0, peak = 0;
    uint32_t peakNode = 0;
    auto bytesOf = [&](uint32_t e) { return tensorBytes(m_shapes[e], static_cast<int64_t>(dtypeSize(m_types[e]))); };
    for (const Step& s : m_steps) {
        for (uint32_t k = 0; k < s.outCount; ++k)
            live += bytesOf(s.outBegin + k);
        if (live > peak) {
            peak = live;
            peakNode = s.node;
        }
        if (m_flags.static_alloc) continue;
        for (uint32_t k = 0; k < s.inCount; ++k) {
            const uint32_t e = m_inEntries[s.inBegin + k];
            if (!m_isVariableEntry[e] && --remaining[e] == 0) live -= bytesOf(e);
        }
        for (uint32_t k = 0; k < s.outCount; ++k)
            if (remaining[s.outBegin + k] == 0) live -= bytesOf(s.outBegin + k);
    }
    m_peakBytes = peak;
    if (peak > memoryLimit())
        throw ResourceError("the run needs " + formatBytes(peak) + " for its tensors at its peak (at "
            + g.describe(peakNode) + "), more than the memory the engine may use (" + formatBytes(memoryLimit())
            + "; OPSCOPE_MEMORY_LIMIT sets it)");
}

OpEvent Executor::makeEvent(uint32_t stepIndex, OpPhase phase, const TensorView* inViews, const TensorView* outViews) const
{
    const Step& s = m_steps[stepIndex];
    const bool after = phase == OpPhase::After;
    return OpEvent { *m_graph, s.node, m_graph->node(s.node), phase, std::span<const TensorView>(inViews, s.inCount),
        std::span<const TensorView>(outViews, after ? s.outCount : 0), firstCall(s, after) };
}

void Executor::makeEvents()
{
    m_events.clear();
    m_events.reserve(2 * m_steps.size());
    for (uint32_t i = 0; i < m_steps.size(); ++i)
        for (const OpPhase p : { OpPhase::Before, OpPhase::After })
            m_events.push_back(makeEvent(i, p, m_inViewsFlat.data() + m_steps[i].inBegin, m_entryViews.data() + m_steps[i].outBegin));
}

template <OpPhase P>
bool Executor::notify(uint32_t stepIndex)
{
    constexpr bool after = P == OpPhase::After;
    const size_t slot = 2 * static_cast<size_t>(stepIndex) + (after ? 1 : 0);
    // Observers may not attach or detach during a run; should one, the lists are made again and
    // the loop reads them afresh each time round, staying inside them.
    const auto callObservers = [this, slot](const OpEvent& ev) {
        bool stop = false;
        for (uint32_t c = m_callRange[slot]; c < m_callRange[slot + 1] && c < m_calls.size(); ++c)
            if (m_calls[c]->onOp(ev) == ObserverAction::Stop) stop = true;
        return stop;
    };
    if (!m_viewsReady) [[unlikely]] {
        // Without views made once per plan (dynamic mode), this step's are made now, out of the
        // way of the common path.
        return [&]() __attribute__((noinline, cold)) {
            const Step& s = m_steps[stepIndex];
            for (uint32_t k = 0; k < s.inCount; ++k)
                m_inViews[k] = m_inPtrs[s.inBegin + k]->view();
            for (uint32_t k = 0; after && k < s.outCount; ++k)
                m_outViews[k] = m_values[s.outBegin + k].view();
            return callObservers(makeEvent(stepIndex, P, m_inViews.data(), m_outViews.data()));
        }();
    }
    OpEvent& ev = m_events[slot];
    ev.firstCall = firstCall(m_steps[stepIndex], after);
    return callObservers(ev);
}

// The step loop: each step's observers around its kernel, and per run allocation and timing
// where the run needs them (a static_alloc run without a profile takes runWatched's table).
void Executor::runSteps(RunContext& ctx, RunResult& result, RunProfile* prof)
{
    const Graph& g = *m_graph;
    const bool keep = m_flags.static_alloc;
    for (uint32_t i = 0; i < m_steps.size(); ++i) {
        const Step& s = m_steps[i];
        if (s.absorbed) continue; // computed by the kernel it was fused into
        if (!keep) {
            try {
                for (uint32_t k = 0; k < s.outCount; ++k)
                    m_values[s.outBegin + k] = Tensor(m_shapes[s.outBegin + k], m_types[s.outBegin + k]);
            } catch (const ResourceError& e) {
                throw ResourceError(g.describe(s.node) + ": " + e.what());
            }
        }
        StepTiming* timing = nullptr;
        if (prof) {
            timing = &prof->steps.emplace_back();
            timing->node = s.node;
            timing->beforeBegin = timing->beforeEnd = nowNs();
        }
        if (hasPhase(s.wants, OpPhase::Before)) {
            const bool stop = notify<OpPhase::Before>(i);
            if (timing) timing->beforeEnd = nowNs();
            if (stop) {
                result = stoppedRun(s.node, OpPhase::Before);
                break;
            }
        }
        if (timing) timing->kernelBegin = timing->beforeEnd;
        try {
            s.kernel->run(runInputs(s), std::span<Tensor* const>(m_outPtrs.data() + s.runOut, s.outCount), ctx);
        } catch (const Error& e) {
            rethrowAt(s.node, e);
        }
        m_firstCallAfter = !s.called;
        m_steps[i].called = true;
        if (timing) {
            timing->kernelEnd = timing->afterBegin = timing->afterEnd = nowNs();
            timing->firstCall = m_firstCallAfter;
        }
        if (hasPhase(s.wants, OpPhase::After)) {
            const bool stop = notify<OpPhase::After>(i);
            if (timing) timing->afterEnd = nowNs();
            if (stop) {
                result = stoppedRun(s.node, OpPhase::After);
                break;
            }
        }
        if (!keep) {
            // Free each intermediate after its last consumer; variables belong to the caller.
            for (uint32_t k = 0; k < s.inCount; ++k) {
                const uint32_t e = m_inEntries[s.inBegin + k];
                if (!m_isVariableEntry[e] && --m_remaining[e] == 0)
                    m_values[e] = Tensor();
            }
            for (uint32_t k = 0; k < s.outCount; ++k)
                if (m_remaining[s.outBegin + k] == 0)
                    m_values[s.outBegin + k] = Tensor();
        }
    }
}

RunResult Executor::run(std::span<const Tensor> variables)
{
    RunContext ctx;
    ctx.rng = &globalGenerator();
    return run(variables, ctx);
}

RunResult Executor::run(std::span<const Tensor> variables, RunContext& ctx)
{
    const Graph& g = *m_graph;
    RunProfile* const prof = m_profile;
    m_runTraining = ctx.training;
    if (prof) {
        prof->steps.clear();
        prof->begin = nowNs();
        prof->end = prof->begin;
        prof->planNs = 0;
        prof->thread = currentThreadNumber();
    }
    if (variables.size() != g.variables().size())
        throw UsageError("graph has " + std::to_string(g.variables().size()) + " variables, "
            + std::to_string(variables.size()) + " tensors given");
    const auto replan = [&] {
        const int64_t planBegin = prof ? nowNs() : 0;
        plan(variables);
        if (prof) prof->planNs = nowNs() - planBegin;
    };
    const bool keep = m_flags.static_alloc;
    // Does the plan fit these variables (their shapes and types)? Under static_alloc the last run's
    // variables stay held until this one (a reference, not a copy), so that a variable given again
    // (a block's parameters) costs no reference counting and keeps its views. A held variable has
    // the plan's shape and type (a new plan drops them), so one with the same storage, start, shape
    // and type as the variable given fits and is already in place: the common case is this one pass.
    const uint64_t generation = m_planGeneration;
    bool same = m_planned;
    bool allHeld = keep && same;
    for (size_t v = 0; same && v < variables.size(); ++v) {
        const Tensor& t = variables[v];
        const uint32_t e = m_variableEntries[v];
        if (allHeld) {
            if (m_values[e].sameAs(t)) continue;
            allHeld = false;
        }
        same = t.dtype() == m_types[e] && t.shape() == m_planVariableShapes[v];
    }
    if (!same) {
        // Prepared once (even by a plan that threw after taking the shapes): static_shape holds them.
        if (!m_planVariableShapes.empty() && m_flags.static_shape) {
            for (size_t v = 0; v < variables.size(); ++v)
                if (variables[v].shape() != m_planVariableShapes[v])
                    throw ShapeError(g.describe(g.variables()[v]) + ": static_shape executor was prepared for "
                        + m_planVariableShapes[v].str() + ", called with " + variables[v].shape().str());
        }
        replan();
    } else if (m_precisionDirty) {
        replan();
    } else {
        if (m_wantsStale) recomputeWants(); // the lists failed half way when observers changed
        if (m_fusionDirty || (m_trainingMatters && ctx.training != m_planTraining)) {
            // Observers changed what they watch (a fused node now watched, or a watched one no
            // longer), or a BatchNorm folded for inference now trains: kernels are made again;
            // otherwise the plan stands.
            m_fusionDirty = false;
            if (fusionStale() || (m_trainingMatters && ctx.training != m_planTraining)) {
                replan();
            } else if (storageStale()) {
                m_buffersReady = false; // a tensor now seen gets a buffer of its own
            }
        }
    }
    if (m_planGeneration != generation) allHeld = false; // a new plan holds no variable
    if (prof) prof->steps.reserve(m_steps.size());
    // The variables not already in place (all of them without static_alloc). The plan holds (made
    // again above otherwise), so a held variable has the shape and type of the one given: the same
    // storage and start make it the same tensor.
    m_movedVariables.clear();
    for (uint32_t v = 0; !allHeld && v < variables.size(); ++v) {
        Tensor& held = m_values[m_variableEntries[v]];
        if (keep && held.sameStartAs(variables[v])) continue;
        held = variables[v];
        if (keep) m_movedVariables.push_back(v); // only static_alloc keeps views to refresh
    }
    computeFolds();

    if (!keep || !m_buffersReady) {
        if (keep) {
            allocateBuffers();
        } else {
            std::copy(m_useCount.begin(), m_useCount.end(), m_remaining.begin());
        }
    }

    if (keep && m_anyWants) {
        if (!m_viewsReady) {
            m_entryViews.resize(m_values.size());
            m_inViewsFlat.resize(m_inEntries.size());
        }
        // Every view once per plan; the caller's variables when they moved.
        if (!m_viewsReady) {
            for (size_t e = 0; e < m_values.size(); ++e)
                m_entryViews[e] = m_values[e].view();
            for (size_t i = 0; i < m_inEntries.size(); ++i)
                m_inViewsFlat[i] = m_entryViews[m_inEntries[i]];
            makeEvents();
        } else {
            // The plan's shapes and types hold (checked above), so a variable at the same address
            // as last run has the same view: only the inputs reading moved ones are made again.
            for (uint32_t v : m_movedVariables) {
                const TensorView view = m_values[m_variableEntries[v]].view();
                for (uint32_t k = m_variableInputBegin[v]; k < m_variableInputBegin[v + 1]; ++k)
                    m_inViewsFlat[m_variableInputs[k]] = view;
            }
        }
        m_viewsReady = true;
    } else {
        m_viewsReady = false;
    }

    RunResult result;
    if (keep && !prof) {
        if (m_anyWants) {
            runWatched(ctx, result);
        } else {
            runUnobserved(ctx); // nothing watched, profiled or allocated per run: the kernels alone
        }
    } else {
        runSteps(ctx, result, prof);
    }
    if (result.status == RunStatus::Completed) {
        result.outputs.reserve(g.heads().size());
        for (const NodeEntry& h : g.heads())
            result.outputs.push_back(m_values[g.entryId(h)]);
    }
    if (!keep) {
        // Drop what a stopped run left and the caller's variables.
        for (Tensor& t : m_values)
            t = Tensor();
    }
    if (prof) prof->end = nowNs();
    return result;
}

} // namespace opscope
