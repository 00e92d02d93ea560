// The executor's static_alloc run loops over the kernel steps made with the plan: the kernels
// alone when nothing is watched (runUnobserved), and the same kernels with the observer calls
// around each when something is (runWatched). Neither allocates, times or looks up anything per
// step.

#include "exec/executor.h"

#include "core/error.h"

namespace opscope {

void Executor::makeKernelSteps()
{
    m_kernelSteps.clear();
    for (uint32_t i = 0; i < m_steps.size(); ++i) {
        const Step& s = m_steps[i];
        if (s.absorbed) continue;
        const std::span<const Tensor* const> in = runInputs(s);
        m_kernelSteps.push_back(KernelStep { s.kernel, in.data(), m_outPtrs.data() + s.runOut,
            static_cast<uint32_t>(in.size()), s.outCount, i, 0, 0, 0 });
    }
    m_allCalled = false;
    listWatchCalls();
}

void Executor::runUnobserved(RunContext& ctx)
{
    const KernelStep* const steps = m_kernelSteps.data();
    const size_t n = m_kernelSteps.size();
    const auto markCalled = [&](size_t ran) { // the first `ran` kernels ran
        for (size_t k = 0; k < ran; ++k)
            m_steps[steps[k].step].called = true;
    };
    size_t i = 0;
    try {
        for (; i < n; ++i) {
            const KernelStep& s = steps[i];
            s.kernel->run(std::span<const Tensor* const>(s.in, s.inCount), std::span<Tensor* const>(s.out, s.outCount), ctx);
        }
    } catch (const Error& e) {
        markCalled(i);
        rethrowAt(m_steps[steps[i].step].node, e);
    } catch (...) {
        markCalled(i);
        throw;
    }
    if (!m_allCalled) {
        markCalled(n);
        m_allCalled = true;
    }
}

void Executor::listWatchCalls()
{
    // Each kernel's observers by phase (recomputeWants' lists), each call naming the event it is
    // given (m_events, by step and phase).
    m_watchCalls.clear();
    for (KernelStep& k : m_kernelSteps) {
        for (uint32_t after = 0; after < 2; ++after) {
            const uint32_t slot = 2 * k.step + after;
            (after ? k.after : k.before) = static_cast<uint32_t>(m_watchCalls.size());
            const Step& s = m_steps[k.step];
            const uint32_t slots = after ? s.outCount : s.inCount;
            for (uint32_t c = m_callRange[slot]; c < m_callRange[slot + 1]; ++c) {
                const CallTensors& t = m_callTensors[c];
                if (t.whole) {
                    m_watchCalls.push_back(WatchCall { m_calls[c], slot, kWholeOp, 0 });
                    continue;
                }
                for (uint32_t l = t.begin; l < t.end; ++l)
                    if (m_tensorCalls[l].slot < slots)
                        m_watchCalls.push_back(WatchCall { m_calls[c], slot, m_tensorCalls[l].slot, l });
            }
        }
        k.end = static_cast<uint32_t>(m_watchCalls.size());
    }
}

// Calls kernel step t's observers of one phase (onOp, or the callbacks on single tensors an
// observer listed instead); true when one asked to stop. Observers may not
// attach or detach during a run; should one, the calls are listed again (the kernel steps stay)
// and the loop reads the list afresh each time round, staying inside it and inside this step's
// phase: a detached observer is never called, nor one given another step's or phase's event
// (which of the phase's other observers are called then is not defined).
// Inlined into runWatched: a call of its own costs a watched node a third more instructions.
template <bool After>
[[gnu::always_inline]] inline bool Executor::callWatchers(size_t t, bool firstCall)
{
    bool stop = false;
    const uint32_t slot = 2 * m_kernelSteps[t].step + (After ? 1 : 0);
    for (uint32_t c = After ? m_kernelSteps[t].after : m_kernelSteps[t].before;
         c < (After ? m_kernelSteps[t].end : m_kernelSteps[t].after); ++c) {
        const WatchCall& w = m_watchCalls[c];
        if (w.event != slot) [[unlikely]]
            break; // listed again, and another phase's calls now lie here
        OpEvent& ev = m_events[w.event];
        if (w.slot != kWholeOp) { // a callback on one tensor
            const TensorCall& call = m_tensorCalls[w.call];
            (*call.callback)(call.name, call.op, (After ? ev.outputs : ev.inputs)[w.slot]);
            continue;
        }
        ev.firstCall = firstCall;
        if (w.observer->onOp(ev) == ObserverAction::Stop) stop = true;
    }
    return stop;
}

void Executor::runWatched(RunContext& ctx, RunResult& result)
{
    // Until every kernel has run once since the plan, each step's first call is noted.
    const bool allCalled = m_allCalled;
    // The table stays put through the run (observers listed again change its call ranges in place).
    const KernelStep* const steps = m_kernelSteps.data();
    const size_t n = m_kernelSteps.size();
    for (size_t t = 0; t < n; ++t) {
        const KernelStep& k = steps[t];
        const bool first = !allCalled && !m_steps[k.step].called;
        if (k.before != k.after && callWatchers<false>(t, first)) {
            result = stoppedRun(m_steps[k.step].node, OpPhase::Before);
            return;
        }
        try {
            k.kernel->run(std::span<const Tensor* const>(k.in, k.inCount), std::span<Tensor* const>(k.out, k.outCount), ctx);
        } catch (const Error& e) {
            rethrowAt(m_steps[k.step].node, e);
        }
        if (!allCalled) m_steps[k.step].called = true;
        if (k.after != k.end && callWatchers<true>(t, first)) {
            result = stoppedRun(m_steps[k.step].node, OpPhase::After);
            return;
        }
    }
    m_allCalled = true;
}

} // namespace opscope
