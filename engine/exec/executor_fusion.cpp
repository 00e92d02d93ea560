// The executor's fusion pass (ExecFlags::fuse): which chains of nodes after a convolution (or a
// fully connected layer, or a matrix product) run as its kernel's post-ops in the current plan, and
// what those post-ops read at each run.

#include "exec/executor.h"
#include "exec/fusion_rules.h"

#include <algorithm>

namespace opscope {

std::vector<uint32_t> Executor::fusedWith(uint32_t nodeId) const
{
    std::vector<uint32_t> out;
    for (const FusionCandidate& c : m_candidates)
        if (m_steps[c.producer].node == nodeId)
            for (size_t k = 0; k < c.fusedCount; ++k) {
                for (uint32_t part : c.parts[k])
                    out.push_back(m_steps[part].node);
                out.push_back(m_steps[c.consumers[k]].node);
            }
    return out;
}

size_t Executor::unwatchedPrefix(const FusionCandidate& c) const
{
    // A node in reduced precision counts as watched: it runs its own kernel, which rounds.
    const auto free = [this](uint32_t step) { return stepIsFree(m_steps[step]); };
    if (!free(c.producer)) return 0;
    size_t n = 0;
    while (n < c.consumers.size() && free(c.consumers[n]) && std::all_of(c.parts[n].begin(), c.parts[n].end(), free))
        ++n;
    return n;
}

void Executor::fuseCandidate(FusionCandidate& c)
{
    Step& producer = m_steps[c.producer];
    c.unwatched = unwatchedPrefix(c);
    if (producer.absorbed) { // a depthwise convolution fused into the 1x1 before it, with its post-ops
        c.fusedCount = 0;
        return;
    }
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
    // The kernel's inputs with what the post-ops read after them, made once per plan (the
    // pointers stay valid while the plan stands).
    producer.runOut = m_steps[c.consumers[n - 1]].outBegin;
    producer.extraBegin = static_cast<uint32_t>(m_fusedInPtrs.size());
    producer.extraCount = static_cast<uint32_t>(extras);
    m_fusedInPtrs.insert(m_fusedInPtrs.end(), m_inPtrs.begin() + producer.inBegin,
        m_inPtrs.begin() + producer.inBegin + producer.inCount);
    m_fusedInPtrs.insert(m_fusedInPtrs.end(), c.extra.begin(), c.extra.begin() + static_cast<std::ptrdiff_t>(extras));
    for (size_t k = 0; k < n; ++k) {
        for (uint32_t step : c.parts[k]) {
            m_steps[step].absorbed = true;
            m_fusedInto[m_steps[step].node] = producer.node;
        }
        m_steps[c.consumers[k]].absorbed = true;
        m_fusedInto[m_steps[c.consumers[k]].node] = producer.node;
    }
}

void Executor::fuse()
{
    const Graph& g = *m_graph;
    m_candidates.clear();
    m_fusedInPtrs.clear();
    m_foldTensors.clear();
    m_fusedInto.assign(g.size(), -1);
    m_fusionDirty = false;
    m_planTraining = m_runTraining;
    m_trainingMatters = false;
    if (!m_flags.fuse || !m_flags.static_alloc) return;
    std::vector<int64_t> stepOf(g.size(), -1);
    for (size_t i = 0; i < m_steps.size(); ++i) {
        stepOf[m_steps[i].node] = static_cast<int64_t>(i);
        const Node& n = g.node(m_steps[i].node);
        m_trainingMatters = m_trainingMatters || fusion::isNormalization(n, false) != fusion::isNormalization(n, true);
    }
    // A node whose kernel can be another kernel's post-op as a whole (a depthwise convolution).
    const auto asPostOp = [&](uint32_t node) -> std::optional<PostOp> {
        const int64_t s = stepOf[node];
        return s >= 0 && m_steps[static_cast<size_t>(s)].kernel ? m_steps[static_cast<size_t>(s)].kernel->asPostOp() : std::nullopt;
    };
    for (const fusion::Chain& chain : fusion::chains(g, m_shapes, m_types, m_planTraining, asPostOp)) {
        FusionCandidate cand;
        cand.producer = static_cast<uint32_t>(stepOf[chain.producer]);
        cand.ops = chain.ops;
        const Shape channels { m_shapes[g.entryId(chain.producer, 0)][1] };
        size_t bound = 0; // the next of chain.bounds
        for (size_t k = 0; k < chain.consumers.size(); ++k) {
            cand.consumers.push_back(static_cast<uint32_t>(stepOf[chain.consumers[k]]));
            std::vector<uint32_t>& parts = cand.parts.emplace_back();
            for (uint32_t id : chain.parts[k])
                parts.push_back(static_cast<uint32_t>(stepOf[id]));
            if (chain.ops[k].kind == PostOp::Kind::Sum || chain.ops[k].kind == PostOp::Kind::Bias) {
                cand.extra.push_back(&m_values[static_cast<size_t>(chain.residuals[k])]);
            } else if (chain.ops[k].kind == PostOp::Kind::Affine) {
                Tensor& scale = m_foldTensors.emplace_back(channels);
                Tensor& shift = m_foldTensors.emplace_back(channels);
                cand.folds.push_back({ k, &scale, &shift });
                cand.extra.push_back(&scale);
                cand.extra.push_back(&shift);
            } else {
                // a clip's bounds, a GELU's scalars, a depthwise convolution's weights and bias
                for (int b = 0; b < chain.ops[k].extraInputs(); ++b)
                    cand.extra.push_back(&m_values[chain.bounds[bound++]]);
            }
        }
        fuseCandidate(cand);
        m_candidates.push_back(std::move(cand));
    }
}

bool Executor::fusionStale() const
{
    for (const FusionCandidate& c : m_candidates)
        if (unwatchedPrefix(c) != c.unwatched) return true;
    // A tensor kept in a native layout is never seen: its writer and readers must stay unwatched.
    for (uint32_t step : m_layoutSteps)
        if (m_steps[step].wants != PhaseMask::None) return true;
    for (uint32_t step : m_layoutWatched)
        if (m_steps[step].wants == PhaseMask::None) return true;
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
