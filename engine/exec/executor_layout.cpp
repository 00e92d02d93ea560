// The executor's layout pass: a tensor that only oneDNN convolutions write and read, none of them
// watched, stays in their blocked layout (nChw16c and the like) from one to the next instead of
// being converted to plain and back around every one of them.

#include "exec/executor.h"

#include <functional>
#include <memory>
#include <utility>

namespace opscope {

void Executor::keepNativeLayouts()
{
    m_nativeEntries.assign(m_values.size(), false);
    m_layoutSteps.clear();
    m_layoutWatched.clear();
    // Training changes nothing here: a backward node reading a tensor is not a convolution, so that
    // tensor stays plain.
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    // A node in reduced precision counts as watched, as for fusion (stepIsFree).
    // Who reads each entry: (step, input slot), gathered once so the pass stays linear.
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> readersOf(m_values.size());
    const Tensor* const first = m_values.data();
    const Tensor* const last = first + m_values.size();
    for (size_t r = 0; r < m_steps.size(); ++r) {
        if (m_steps[r].absorbed) continue;
        const auto in = runInputs(m_steps[r]);
        for (size_t k = 0; k < in.size(); ++k)
            if (std::less_equal<>()(first, in[k]) && std::less<>()(in[k], last))
                readersOf[static_cast<size_t>(in[k] - first)].emplace_back(static_cast<uint32_t>(r), static_cast<uint32_t>(k));
    }
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
        if (layout.plain() || m_types[e] != DType::Float32
            || layout.bytes != m_shapes[e].size() * static_cast<int64_t>(sizeof(float)))
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
        m_nativeEntries[e] = true;
    }
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Decision& d = decided[i];
        if (!d.any) continue;
        m_layoutSteps.push_back(static_cast<uint32_t>(i));
        m_steps[i].kernel->setNative(std::span<const bool>(d.inputs.get(), d.count), d.output);
    }
}

} // namespace opscope
