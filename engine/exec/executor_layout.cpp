// The executor's layout pass: a tensor that only oneDNN kernels write and read (convolutions and
// poolings), none of them watched, stays in their layout (nChw16c, nhwc and the like) from one to
// the next instead of being converted to plain and back around every one of them.

#include "exec/executor.h"

#include <functional>
#include <memory>
#include <utility>

namespace opscope {

void Executor::keepNativeLayouts()
{
    m_nativeElements.assign(m_values.size(), 0);
    m_layoutSteps.clear();
    m_layoutWatched.clear();
    // A network with a kernel that favours it (a depthwise convolution, a batch of images)
    // computes every convolution in oneDNN's channel-blocked layout, so that they agree with each
    // other. In every mode, fused or not: the same primitives then give a watched node the same
    // values.
    bool blocked = false;
    for (const Step& s : m_steps)
        blocked = blocked || (!s.absorbed && s.kernel && s.kernel->favoursBlocked());
    for (Step& s : m_steps)
        if (!s.absorbed && s.kernel) s.kernel->computeBlocked(blocked);
    // Training changes nothing here: a backward node reading a tensor is not a convolution, so that
    // tensor stays plain.
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    // A node in reduced precision counts as watched, as for fusion (stepIsFree).
    // Who reads each entry: (step, input slot), gathered once so the pass stays linear.
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> readersOf(m_values.size());
    for (size_t r = 0; r < m_steps.size(); ++r) {
        if (m_steps[r].absorbed) continue;
        const auto in = runInputs(m_steps[r]);
        for (size_t k = 0; k < in.size(); ++k)
            if (const int64_t e = entryIndex(in[k]); e >= 0)
                readersOf[static_cast<size_t>(e)].emplace_back(static_cast<uint32_t>(r), static_cast<uint32_t>(k));
    }
    followNeighbours(readersOf);
    offerReadersLayout(readersOf);
    struct Decision {
        std::unique_ptr<bool[]> inputs; // by input slot, when any
        size_t count = 0;
        bool output = false;
        bool any = false;
    };
    std::vector<Decision> decided(m_steps.size());
    for (size_t w = 0; w < m_steps.size(); ++w) {
        const Step& writer = m_steps[w];
        if (writer.absorbed || writer.outCount != 1) continue;
        const NativeLayout layout = writer.kernel->nativeOutput();
        const uint32_t e = writer.runOut;
        // (A layout that pads the channels takes more room: the tensor's buffer is made that large.
        // An empty tensor stays plain: nativeElements() > 0 is what marks a native one.)
        if (layout.plain() || m_types[e] != DType::Float32 || layout.bytes <= 0
            || layout.bytes < m_shapes[e].size() * static_cast<int64_t>(sizeof(float)))
            continue;
        // Every use of the tensor (a graph output counts as one no kernel makes) must be a kernel
        // reading it in the same layout...
        const auto& readers = readersOf[e];
        if (readers.empty() || readers.size() != m_useCount[e]) continue;
        bool ok = true;
        for (const auto& [r, k] : readers)
            ok = ok && m_steps[r].kernel->nativeInput(k).key == layout.key;
        if (!ok) continue;
        // ... and none of them watched. Those that are make the plan again once no longer watched.
        bool watched = !stepIsFree(writer);
        if (watched) m_layoutWatched.push_back(static_cast<uint32_t>(w));
        for (const auto& [r, k] : readers) {
            if (stepIsFree(m_steps[r])) continue;
            watched = true;
            m_layoutWatched.push_back(r);
        }
        if (watched) continue;
        decided[w].output = decided[w].any = true;
        for (const auto& [r, k] : readers) {
            Decision& d = decided[r];
            if (!d.inputs) {
                d.count = runInputs(m_steps[r]).size();
                d.inputs = std::make_unique<bool[]>(d.count); // all false
            }
            d.inputs[k] = d.any = true;
        }
        m_nativeElements[e] = layout.bytes / static_cast<int64_t>(sizeof(float));
    }
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Decision& d = decided[i];
        if (!d.any) continue;
        m_layoutSteps.push_back(static_cast<uint32_t>(i));
        m_steps[i].kernel->setNative(std::span<const bool>(d.inputs.get(), d.count), d.output);
    }
}

void Executor::followNeighbours(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& readersOf)
{
    // A kernel that runs in its neighbours' layout (a pooling) takes the one the kernel writing its
    // first input computes in, and the one every reader of its output wants, where it can. Whether
    // they are used is decided after, as for any kernel (nobody watching, every use a kernel).
    std::vector<int64_t> writerOf(m_values.size(), -1);
    for (size_t w = 0; w < m_steps.size(); ++w)
        if (!m_steps[w].absorbed && m_steps[w].outCount == 1) writerOf[m_steps[w].runOut] = static_cast<int64_t>(w);
    const auto fixed = [](const Kernel& k) { return k.nativeChoices().empty(); };
    for (Step& s : m_steps) {
        if (s.absorbed || s.outCount != 1) continue;
        const std::vector<NativeLayout> choices = s.kernel->nativeChoices();
        if (choices.empty()) continue;
        const auto choiceOf = [&choices](const NativeLayout& l) {
            for (size_t i = 0; i < choices.size(); ++i)
                if (!l.plain() && choices[i].key == l.key) return static_cast<int>(i);
            return -1;
        };
        int in = -1, out = -1;
        const auto ins = runInputs(s);
        if (const int64_t e = ins.empty() ? -1 : entryIndex(ins[0]); e >= 0) {
            const int64_t w = writerOf[static_cast<size_t>(e)];
            if (w >= 0 && fixed(*m_steps[static_cast<size_t>(w)].kernel))
                in = choiceOf(m_steps[static_cast<size_t>(w)].kernel->nativeOutput());
        }
        const auto& readers = readersOf[s.runOut];
        if (!readers.empty()) {
            const Step& r0 = m_steps[readers.front().first];
            out = fixed(*r0.kernel) ? choiceOf(r0.kernel->nativeInput(readers.front().second)) : -1;
            for (const auto& [r, k] : readers)
                if (!fixed(*m_steps[r].kernel) || out < 0 || m_steps[r].kernel->nativeInput(k).key != choices[static_cast<size_t>(out)].key)
                    out = -1;
        }
        s.kernel->chooseNative(in, out);
    }
}

void Executor::offerReadersLayout(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& readersOf)
{
    // A kernel whose readers all read one native layout other than the one it computes in (the
    // stem convolution's nChw16c before depthwise convolutions in nhwc) converts its output into
    // theirs, where it can: one reorder instead of one into plain and another out of it. Whether the
    // tensor stays in that layout is decided after, as for any (nobody watching, every use a kernel).
    for (Step& w : m_steps) {
        if (w.absorbed || w.outCount != 1 || !w.kernel->nativeChoices().empty()) continue;
        const NativeLayout own = w.kernel->nativeOutput();
        const auto& readers = readersOf[w.runOut];
        if (own.plain() || readers.empty() || readers.size() != m_useCount[w.runOut]) continue;
        const NativeLayout wanted = m_steps[readers.front().first].kernel->nativeInput(readers.front().second);
        if (wanted.plain() || wanted.key == own.key) continue;
        bool same = true;
        for (const auto& [r, k] : readers)
            same = same && m_steps[r].kernel->nativeInput(k).key == wanted.key;
        if (same) w.kernel->outputIn(wanted);
    }
}

} // namespace opscope
