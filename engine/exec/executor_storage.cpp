// The executor's buffers under static_alloc. Every tensor an observer can see (a watched node's
// inputs and outputs), every graph output and every variable keeps a buffer of its own. With fuse,
// the other float32 tensors share buffers: one whose last reader has run lends its buffer to a
// tensor made later, as MXNet's static memory plan does. The working set of a pass then stays in
// the caches instead of walking through a fresh buffer for every tensor of the network.

#include "exec/executor.h"

#include "core/error.h"

#include <algorithm>
#include <functional>

namespace opscope {

void Executor::planStorage()
{
    const size_t n = m_values.size();
    m_storageSlot.assign(n, -1);
    m_slotElements.clear();
    m_storageSteps.clear();
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    const Graph& g = *m_graph;

    // When each tensor is made (the step whose kernel writes it; an unwritten one, inside a fused
    // chain, at its own node's step) and when it is read last; whether it may share at all.
    constexpr int64_t none = -1;
    std::vector<int64_t> born(n, none), lastUse(n, none);
    std::vector<bool> own(n, false);
    for (const NodeEntry& h : g.heads())
        own[g.entryId(h)] = true;
    for (size_t e = 0; e < n; ++e)
        if (m_isVariableEntry[e] || m_types[e] != DType::Float32 || m_shapes[e].size() == 0) own[e] = true;
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Step& s = m_steps[i];
        for (uint32_t k = 0; k < s.outCount; ++k)
            if (born[s.outBegin + k] == none) born[s.outBegin + k] = static_cast<int64_t>(i);
        if (s.absorbed) continue;
        for (uint32_t k = 0; k < s.outCount; ++k) {
            born[s.runOut + k] = static_cast<int64_t>(i);
            if (!stepIsFree(s)) own[s.runOut + k] = own[s.outBegin + k] = true;
        }
        for (const Tensor* t : runInputs(s)) {
            const int64_t e = entryIndex(t);
            if (e < 0) continue; // a fold's scale or shift: not a graph tensor
            lastUse[static_cast<size_t>(e)] = static_cast<int64_t>(i);
            if (!stepIsFree(s)) own[static_cast<size_t>(e)] = true;
        }
    }

    // A convolution's residual (a sum post-op's operand) in the convolution's own layout is copied
    // whole into its output before the output is written: when the convolution reads it last, and
    // only as the residual, the output takes its buffer, and the copy is skipped (the sum then adds in place, as oneDNN's sum
    // post-op does into its destination).
    std::vector<int64_t> inPlace(m_steps.size(), none); // by step: the residual whose buffer its output takes
    for (size_t i = 0; i < m_steps.size() && !m_nativeElements.empty(); ++i) {
        const Step& s = m_steps[i];
        if (s.absorbed || s.outCount != 1 || s.extraCount == 0 || !nativeLayout(s.runOut)) continue;
        const auto in = runInputs(s);
        for (size_t k = s.inCount; k < in.size(); ++k) {
            const int64_t r = entryIndex(in[k]);
            const bool readOnce = std::count(in.begin(), in.end(), in[k]) == 1; // not the convolution's input too
            // The same number of values in their layouts too: the output may be converted into
            // a padded layout its readers read (Kernel::outputIn) while the residual is not padded.
            if (r >= 0 && readOnce && nativeLayout(static_cast<uint32_t>(r)) && !own[static_cast<size_t>(r)] && !own[s.runOut]
                && lastUse[static_cast<size_t>(r)] == static_cast<int64_t>(i)
                && m_shapes[static_cast<size_t>(r)].size() == m_shapes[s.runOut].size()
                && nativeElements(static_cast<uint32_t>(r)) == nativeElements(s.runOut)) {
                inPlace[i] = r;
                break;
            }
        }
    }

    // Steps in order: the tensors made at a step take buffers no longer read, then those whose last
    // reader is this step give theirs back. Apart from a residual taken in place, a tensor never
    // shares with another input or output of the step that writes it, so no kernel reads and writes
    // one buffer.
    std::vector<std::vector<uint32_t>> bornAt(m_steps.size()), freedAt(m_steps.size());
    for (size_t e = 0; e < n; ++e) {
        if (own[e] || born[e] == none) continue;
        bornAt[static_cast<size_t>(born[e])].push_back(static_cast<uint32_t>(e));
        freedAt[static_cast<size_t>(std::max(born[e], lastUse[e]))].push_back(static_cast<uint32_t>(e));
    }
    std::vector<uint32_t> freeSlots;
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const int64_t handed = inPlace[i] >= 0 && m_storageSlot[static_cast<size_t>(inPlace[i])] >= 0 ? inPlace[i] : none;
        for (uint32_t e : bornAt[i]) {
            const int64_t want = std::max(m_shapes[e].size(), nativeElements(e)); // a padded layout's too
            if (handed != none && e == m_steps[i].runOut) { // the residual's buffer (the same size, checked above)
                m_storageSlot[e] = m_storageSlot[static_cast<size_t>(handed)];
                continue;
            }
            // The smallest free buffer that holds it, else the largest free one, grown.
            auto pick = freeSlots.end();
            for (auto it = freeSlots.begin(); it != freeSlots.end(); ++it) {
                const int64_t have = m_slotElements[*it], best = pick == freeSlots.end() ? 0 : m_slotElements[*pick];
                const bool fits = have >= want, bestFits = pick != freeSlots.end() && best >= want;
                if (pick == freeSlots.end() || (fits && (!bestFits || have < best)) || (!fits && !bestFits && have > best))
                    pick = it;
            }
            uint32_t slot = 0;
            if (pick == freeSlots.end()) {
                slot = static_cast<uint32_t>(m_slotElements.size());
                m_slotElements.push_back(want);
            } else {
                slot = *pick;
                freeSlots.erase(pick);
                m_slotElements[slot] = std::max(m_slotElements[slot], want);
            }
            m_storageSlot[e] = slot;
        }
        for (uint32_t e : freedAt[i])
            if (static_cast<int64_t>(e) != handed) freeSlots.push_back(static_cast<uint32_t>(m_storageSlot[e]));
    }
    // The steps that write or read a shared tensor: one of them watched later makes the buffers again.
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Step& s = m_steps[i];
        if (s.absorbed) continue;
        bool shares = false;
        for (uint32_t k = 0; k < s.outCount; ++k)
            shares = shares || m_storageSlot[s.runOut + k] >= 0;
        for (const Tensor* t : runInputs(s)) {
            const int64_t e = entryIndex(t);
            shares = shares || (e >= 0 && m_storageSlot[static_cast<size_t>(e)] >= 0);
        }
        if (shares) m_storageSteps.push_back(static_cast<uint32_t>(i));
    }
}

bool Executor::storageStale() const
{
    for (uint32_t step : m_storageSteps)
        if (!stepIsFree(m_steps[step])) return true;
    return false;
}

int64_t Executor::nativeElements(uint32_t entryId) const
{
    return entryId < m_nativeElements.size() ? m_nativeElements[entryId] : 0;
}

int64_t Executor::sharedBufferBytes() const
{
    int64_t bytes = 0;
    for (int64_t elements : m_slotElements)
        bytes += elements * static_cast<int64_t>(sizeof(float));
    return bytes;
}

void Executor::allocateBuffers()
{
    const Graph& g = *m_graph;
    planStorage();
    std::vector<Tensor> slots(m_slotElements.size());
    for (const Step& s : m_steps) {
        try {
            for (uint32_t k = 0; k < s.outCount; ++k) {
                const uint32_t e = s.outBegin + k;
                const int64_t slot = m_storageSlot[e];
                if (slot < 0) {
                    const int64_t padded = nativeElements(e);
                    m_values[e] = padded > m_shapes[e].size()
                        ? Tensor(Shape { padded }).slice(0, m_shapes[e].size()).reshape(m_shapes[e])
                        : Tensor(m_shapes[e], m_types[e]);
                    continue;
                }
                Tensor& buffer = slots[static_cast<size_t>(slot)];
                if (!buffer.defined()) buffer = Tensor(Shape(std::vector<int64_t> { m_slotElements[static_cast<size_t>(slot)] }));
                m_values[e] = buffer.slice(0, m_shapes[e].size()).reshape(m_shapes[e]);
            }
        } catch (const ResourceError& e) {
            for (const Step& t : m_steps) // what was allocated goes, so a retry starts clean
                for (uint32_t k = 0; k < t.outCount; ++k)
                    m_values[t.outBegin + k] = Tensor();
            throw ResourceError(g.describe(s.node) + ": " + e.what());
        }
    }
    m_buffersReady = true;
    m_viewsReady = false;
}

} // namespace opscope
