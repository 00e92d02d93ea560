// The executor's fusion pass (ExecFlags::fuse): which chains of nodes after a convolution run as
// its kernel's post-ops in the current plan, and what those post-ops read at each run.

#include "exec/executor.h"
#include "exec/fusion_rules.h"

#include <algorithm>

namespace opscope {

std::vector<uint32_t> Executor::fusedWith(uint32_t nodeId) const
{
    std::vector<uint32_t> out;
    for (const FusionCandidate& c : m_candidates)
        if (m_steps[c.producer].node == nodeId)
            for (size_t k = 0; k < c.fusedCount; ++k)
                out.push_back(m_steps[c.consumers[k]].node);
    return out;
}

size_t Executor::unwatchedPrefix(const FusionCandidate& c) const
{
    if (m_steps[c.producer].wants != PhaseMask::None) return 0;
    size_t n = 0;
    while (n < c.consumers.size() && m_steps[c.consumers[n]].wants == PhaseMask::None)
        ++n;
    return n;
}

void Executor::fuseCandidate(FusionCandidate& c)
{
    Step& producer = m_steps[c.producer];
    c.unwatched = unwatchedPrefix(c);
    // The longest unwatched start of the chain the kernel takes (a watched node ends it: its
    // input and output must exist).
    size_t n = c.unwatched;
    while (n > 0 && !producer.kernel->setPostOps(std::span<const PostOp>(c.ops.data(), n)))
        --n;
    c.fusedCount = n;
    if (n == 0) return;
    size_t extras = 0;
    for (size_t k = 0; k < n; ++k)
        extras += static_cast<size_t>(c.ops[k].extraInputs());
    producer.runOut = m_steps[c.consumers[n - 1]].outBegin;
    producer.extraBegin = static_cast<uint32_t>(m_extraPtrs.size());
    producer.extraCount = static_cast<uint32_t>(extras);
    m_extraPtrs.insert(m_extraPtrs.end(), c.extra.begin(), c.extra.begin() + static_cast<std::ptrdiff_t>(extras));
    for (size_t k = 0; k < n; ++k) {
        m_steps[c.consumers[k]].absorbed = true;
        m_fusedInto[m_steps[c.consumers[k]].node] = producer.node;
    }
}

void Executor::fuse()
{
    const Graph& g = *m_graph;
    m_candidates.clear();
    m_extraPtrs.clear();
    m_foldTensors.clear();
    m_fusedInto.assign(g.size(), -1);
    m_fusionDirty = false;
    m_planTraining = m_runTraining;
    m_trainingMatters = false;
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    std::vector<int64_t> stepOf(g.size(), -1);
    std::vector<std::vector<uint32_t>> readers(m_values.size());
    for (size_t i = 0; i < m_steps.size(); ++i) {
        stepOf[m_steps[i].node] = static_cast<int64_t>(i);
        for (uint32_t k = 0; k < m_steps[i].inCount; ++k)
            readers[m_inEntries[m_steps[i].inBegin + k]].push_back(static_cast<uint32_t>(i));
        const Node& n = g.node(m_steps[i].node);
        m_trainingMatters = m_trainingMatters || fusion::isNormalization(n, false) != fusion::isNormalization(n, true);
    }
    // The step that alone reads `entry` (no other op, not a head), or -1.
    auto soleReader = [&](uint32_t entry) -> int64_t {
        return m_useCount[entry] == 1 && readers[entry].size() == 1 ? static_cast<int64_t>(readers[entry][0]) : -1;
    };
    std::vector<uint32_t> entryNode(m_values.size(), 0);
    for (uint32_t id = 0; id < g.size(); ++id)
        for (uint32_t k = 0; k < static_cast<uint32_t>(g.node(id).numOutputs); ++k)
            entryNode[g.entryId(id, k)] = id;
    // Ready before step `c` runs: a variable, or made by an earlier step.
    auto readyBefore = [&](uint32_t entry, size_t c) {
        return m_isVariableEntry[entry] || stepOf[entryNode[entry]] < static_cast<int64_t>(c);
    };
    auto floatOf = [&](uint32_t entry, const Shape& shape) {
        return m_types[entry] == DType::Float32 && m_shapes[entry] == shape;
    };

    for (size_t c = 0; c < m_steps.size(); ++c) {
        const Step& conv = m_steps[c];
        if (!fusion::takesPostOps(g.node(conv.node)) || conv.outCount != 1 || m_types[conv.outBegin] != DType::Float32)
            continue;
        FusionCandidate cand;
        cand.producer = static_cast<uint32_t>(c);
        const Shape shape = m_shapes[conv.outBegin];
        uint32_t cur = conv.outBegin;
        bool sum = false;
        for (int64_t r; (r = soleReader(cur)) >= 0;) {
            const Step& rs = m_steps[static_cast<size_t>(r)];
            const Node& n = g.node(rs.node);
            if (!floatOf(rs.outBegin, shape)) break;
            const bool dataFirst = !n.inputs.empty() && g.entryId(n.inputs[0]) == cur;
            if (fusion::isAdd(n)) {
                // An add of the chain's value and a residual ready before the convolution runs.
                const uint32_t a = g.entryId(n.inputs[0]), b = g.entryId(n.inputs[1]);
                const uint32_t other = a == cur ? b : a;
                if (sum || a == b || !floatOf(other, shape) || !readyBefore(other, c)) break;
                cand.ops.push_back(PostOp { PostOp::Kind::Sum });
                cand.extra.push_back(&m_values[other]);
                sum = true;
            } else if (fusion::isNormalization(n, m_planTraining)) {
                // Its four per-channel parameters are variables; its other outputs nobody reads.
                if (!dataFirst || shape.ndim() < 3) break;
                const Shape channels { shape[1] };
                bool ok = true;
                for (size_t k = 1; k < 5; ++k) {
                    const uint32_t e = g.entryId(n.inputs[k]);
                    ok = ok && m_isVariableEntry[e] && floatOf(e, channels);
                }
                for (uint32_t k = 1; k < rs.outCount; ++k)
                    ok = ok && m_useCount[rs.outBegin + k] == 0;
                if (!ok) break;
                cand.ops.push_back(PostOp { PostOp::Kind::Affine });
                Tensor& scale = m_foldTensors.emplace_back(channels);
                Tensor& shift = m_foldTensors.emplace_back(channels);
                cand.folds.push_back({ cand.consumers.size(), &scale, &shift });
                cand.extra.push_back(&scale);
                cand.extra.push_back(&shift);
            } else if (const auto op = fusion::elementwise(n)) {
                // One input, or ONNX Clip's bounds (known before the run: their values are in op).
                if (!dataFirst || (n.inputs.size() != 1 && op->kind != PostOp::Kind::Clip)) break;
                cand.ops.push_back(*op);
                if (op->keepNaN) { // the kernel applies it after storing its output: nothing after it
                    cand.consumers.push_back(static_cast<uint32_t>(r));
                    break;
                }
            } else {
                break;
            }
            cand.consumers.push_back(static_cast<uint32_t>(r));
            cur = rs.outBegin;
        }
        if (cand.consumers.empty()) continue;
        fuseCandidate(cand);
        m_candidates.push_back(std::move(cand));
    }
}

bool Executor::fusionStale() const
{
    for (const FusionCandidate& c : m_candidates)
        if (unwatchedPrefix(c) != c.unwatched) return true;
    return false;
}

void Executor::computeFolds()
{
    // A folded normalisation's scale and shift from its parameters as they are at this run.
    for (const FusionCandidate& c : m_candidates) {
        for (const auto& [k, scale, shift] : c.folds) {
            if (k >= c.fusedCount) continue;
            const Step& s = m_steps[c.consumers[k]];
            const Tensor* const* in = m_inPtrs.data() + s.inBegin;
            fusion::normalizationAffine(m_graph->node(s.node), *in[1], *in[2], *in[3], *in[4], *scale, *shift);
        }
    }
}

} // namespace opscope
