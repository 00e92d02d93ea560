// The executor's layout pass: a tensor that only oneDNN convolutions write and read, none of them
// watched, stays in their blocked layout (nChw16c and the like) from one to the next instead of
// being converted to plain and back around every one of them.

#include "exec/executor.h"

#include <algorithm>
#include <memory>

namespace opscope {

void Executor::keepNativeLayouts()
{
    m_nativeEntries.assign(m_values.size(), false);
    m_layoutSteps.clear();
    m_layoutWatched.clear();
    // Training changes nothing here: a backward node reading a tensor is not a convolution, so that
    // tensor stays plain.
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    // A node in reduced precision counts as watched, as for fusion.
    const auto free = [this](const Step& s) {
        return s.wants == PhaseMask::None && (s.node >= m_precision.size() || m_precision[s.node] == Precision::Float32);
    };
    const auto runInputs = [this](const Step& s) {
        return s.extraCount == 0 ? std::span<const Tensor* const>(m_inPtrs.data() + s.inBegin, s.inCount)
                                 : std::span<const Tensor* const>(m_fusedInPtrs.data() + s.extraBegin, s.inCount + s.extraCount);
    };
    struct Decision {
        std::vector<bool> inputs;
        bool output = false;
        bool any = false;
    };
    std::vector<Decision> decided(m_steps.size());
    std::vector<std::pair<size_t, size_t>> readers; // (step, input slot)
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
        readers.clear();
        bool ok = true;
        for (size_t r = w + 1; ok && r < m_steps.size(); ++r) {
            const Step& reader = m_steps[r];
            if (reader.absorbed) continue;
            const auto in = runInputs(reader);
            for (size_t k = 0; ok && k < in.size(); ++k) {
                if (in[k] != &m_values[e]) continue;
                ok = reader.kernel->nativeInput(k).key == layout.key;
                readers.emplace_back(r, k);
            }
        }
        if (!ok || readers.empty() || readers.size() != m_useCount[e]) continue;
        // ... and none of them watched. Those that are make the plan again once no longer watched.
        bool watched = !free(writer);
        if (watched) m_layoutWatched.push_back(static_cast<uint32_t>(w));
        for (const auto& [r, k] : readers) {
            if (free(m_steps[r])) continue;
            watched = true;
            m_layoutWatched.push_back(static_cast<uint32_t>(r));
        }
        if (watched) continue;
        decided[w].output = decided[w].any = true;
        for (const auto& [r, k] : readers) {
            Decision& d = decided[r];
            d.inputs.resize(runInputs(m_steps[r]).size(), false);
            d.inputs[k] = d.any = true;
        }
        m_nativeEntries[e] = true;
    }
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Decision& d = decided[i];
        if (!d.any) continue;
        m_layoutSteps.push_back(static_cast<uint32_t>(i));
        const size_t n = d.inputs.size();
        const auto flags = std::make_unique<bool[]>(std::max<size_t>(n, 1));
        for (size_t k = 0; k < n; ++k)
            flags[k] = d.inputs[k];
        m_steps[i].kernel->setNative(std::span<const bool>(flags.get(), n), d.output);
    }
}

} // namespace opscope
