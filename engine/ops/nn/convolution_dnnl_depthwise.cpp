// A depthwise 3x3 convolution computed inside the 1x1 convolution before it (oneDNN's fused
// depthwise post-op, PostOp::Kind::Depthwise): the 1x1's output is never stored whole.

#include "ops/nn/convolution_dnnl_kernel.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace opscope::dnnlutil {

using dnnl::memory;

std::optional<PostOp> ConvolutionDnnl::asPostOp() const
{
    const ConvGeometry g = ConvGeometry::from(m_params, m_data, m_output);
    if (m_data.ndim() != 4 || m_params.noBias || g.groups != g.inChannels || g.outChannels != g.inChannels
        || g.kernelH != 3 || g.kernelW != 3 || g.padH != 1 || g.padW != 1 || g.dilateH != 1 || g.dilateW != 1
        || g.strideH != g.strideW || (g.strideH != 1 && g.strideH != 2))
        return std::nullopt;
    PostOp op { PostOp::Kind::Depthwise };
    op.stride = static_cast<uint8_t>(g.strideH);
    return op;
}

bool ConvolutionDnnl::setDepthwise(std::span<const PostOp> pre, const PostOp& dw, std::span<const PostOp> post)
{
    const ConvGeometry g = ConvGeometry::from(m_params, m_data, m_output);
    const bool pointwise = m_data.ndim() == 4 && g.kernelH == 1 && g.kernelW == 1 && g.strideH == 1 && g.strideW == 1
        && g.padH == 0 && g.padW == 0 && g.groups == 1;
    const auto elementwise = [](const PostOp& o) {
        return o.kind == PostOp::Kind::Relu || o.kind == PostOp::Kind::Clip || o.kind == PostOp::Kind::Sigmoid
            || o.kind == PostOp::Kind::Tanh;
    };
    if (m_dwRefused || !pointwise || (dw.stride != 1 && dw.stride != 2) || !std::all_of(pre.begin(), pre.end(), elementwise)
        || !std::all_of(post.begin(), post.end(), elementwise) || !dnnlutil::PostOpList::takes(pre)
        || !dnnlutil::PostOpList::takes(post))
        return false;
    const int64_t channels = m_output[1];
    ConvolutionParams q;
    q.kernel = { 3, 3 };
    q.stride = { dw.stride, dw.stride };
    q.dilate = { 1, 1 };
    q.pad = { 1, 1 };
    q.numFilter = q.numGroup = channels;
    const Shape out { m_output[0], channels, (m_output[2] - 1) / dw.stride + 1, (m_output[3] - 1) / dw.stride + 1 };
    // A NaN-keeping op runs inside only on finite products; the one after the depthwise
    // convolution only when the one before bounds its input.
    dnnlutil::PostOpList before, after;
    before.set(pre, m_output.ndim(), channels);
    after.set(post, out.ndim(), channels);
    if ((before.hasFinish() && !before.finishesFinite())
        || (after.hasFinish() && !(after.finishesFinite() && (before.finishesWithClip() || before.isReluAlone()))))
        return false;
    try {
        auto apart = std::make_unique<ConvolutionDnnl>(q, m_output, out, true);
        if (!apart->setPostOps(post)) return false;
        m_post = std::move(before);
        m_dw = std::move(apart);
        m_dwOp = dw;
        m_dwAt = m_params.noBias ? 2 : 3;
        for (const PostOp& op : pre)
            m_dwAt += static_cast<size_t>(op.extraInputs());
        m_blocked = true;
        m_midNative = false;
        build();
        if (m_fusedAvailable) {
            // On runs apart the 1x1 hands its output on in the layout both compute in.
            m_midNative = !m_dstLayout.plain() && m_dstLayout.key == m_dw->m_srcLayout.key;
            const bool mid[] = { m_midNative };
            m_dw->setNative(mid, false);
            build();
            if (m_fusedAvailable) return true;
        }
        // oneDNN has no kernel of its own for the pair here (the 1x1's output fits in the
        // caches, or its channels are not a multiple of 16): refused again without asking.
        m_dwRefused = true;
    } catch (const dnnl::error&) {
    }
    m_dw.reset();
    m_midNative = false;
    m_blocked = m_blockedAsked;
    m_post.set({}, m_output.ndim(), channels);
    build();
    return false;
}

dnnl::primitive_attr ConvolutionDnnl::fusedAttr(std::pair<float, float> before, std::pair<float, float> after) const
{
    // Both lists' ops are element-wise; copied out of attributes kept alive meanwhile (a
    // post_ops taken from an attribute only refers to the attribute's own).
    dnnl::post_ops list;
    const auto append = [&list](const dnnlutil::PostOpList& l, std::pair<float, float> bounds) {
        const dnnl::primitive_attr from = l.hasFinish() ? l.attrWithFinish(bounds) : l.attr();
        const dnnl::post_ops ops = from.get_post_ops();
        for (int i = 0; i < ops.len(); ++i) {
            float scale = 1, alpha = 0, beta = 0;
            dnnl::algorithm alg {};
            ops.get_params_eltwise(i, scale, alg, alpha, beta);
            list.append_eltwise(scale, alg, alpha, beta);
        }
    };
    append(m_post, before);
    list.append_dw(memory::data_type::f32, memory::data_type::f32, memory::data_type::f32, 3, m_dwOp.stride, 1, 0, {});
    append(m_dw->m_post, after);
    dnnl::primitive_attr attr;
    attr.set_post_ops(list);
    return attr;
}

void ConvolutionDnnl::buildFused()
{
    m_fused.reset();
    m_fusedAvailable = false;
    dnnl::convolution_forward::primitive_desc pd;
    try {
        pd = dnnl::convolution_forward::primitive_desc(*m_exact, fusedAttr({ 0, 1 }, { 0, 1 }), dnnlutil::cpuEngine());
    } catch (const dnnl::error&) {
        return;
    }
    if (std::string(pd.impl_info_str()).rfind("jit", 0) != 0 || pd.dst_desc() != m_dw->m_dstInner) return;
    const int64_t channels = m_output[1];
    m_fusedDst = std::make_unique<Port>(dnnlutil::plainDesc(m_dw->m_output), pd.dst_desc(), false, nullptr, m_nativeOut);
    m_dwWeights = std::make_unique<Port>(dnnlutil::plainDesc(Shape { channels, 1, 1, 3, 3 }),
        pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS), true);
    m_dwBias = memory(dnnlutil::plainDesc(Shape { channels }), dnnlutil::cpuEngine(), DNNL_MEMORY_NONE);
    m_fusedArgs = m_convArgs;
    m_fusedArgs[DNNL_ARG_DST] = m_fusedDst->inner();
    m_fusedArgs[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS] = m_dwWeights->inner();
    m_fusedArgs[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS] = m_dwBias;
    m_dwWeightsFrom = nullptr;
    m_fusedAvailable = true;
}

void ConvolutionDnnl::runDepthwise(std::span<const Tensor* const> in, Tensor& y, RunContext& ctx)
{
    // The depthwise kernel's inputs: its operand (the 1x1's output), weights, bias, then what
    // its post-ops read.
    m_dwIn.assign(in.begin() + static_cast<std::ptrdiff_t>(m_dwAt) - 1, in.end());
    m_post.bind(in, m_params.noBias ? 2 : 3);
    m_dw->m_post.bind(m_dwIn, 3);
    const Tensor& weights = *m_dwIn[1];
    const Tensor& bias = *m_dwIn[2];
    // Both lists inside: the 1x1's input keeps it finite, and what its clip or relu leaves
    // keeps the depthwise convolution's.
    std::pair<float, float> before { 0, 0 }, after { 0, 0 };
    float dwBound = -1; // a bound on the depthwise convolution's input, when known
    bool fused = m_fusedAvailable;
    if (fused && m_post.hasFinish()) {
        before = m_post.finishBounds();
        fused = before.first <= before.second && inputFinite(in, m_output.size());
        if (fused)
            dwBound = m_post.finishesWithClip() ? std::max(std::fabs(before.first), std::fabs(before.second))
                                                : m_finite.outputBound(m_inputBound);
    }
    if (fused && m_dw->m_post.hasFinish()) {
        after = m_dw->m_post.finishBounds();
        m_dw->m_finite.update(weights, &bias);
        fused = after.first <= after.second && dwBound >= 0 && dwBound <= m_dw->m_finite.limit();
    }
    const dnnl::convolution_forward* both = !fused ? nullptr : m_fused.get({ before, after }, [&] {
        return dnnl::convolution_forward(
            dnnl::convolution_forward::primitive_desc(*m_exact, fusedAttr(before, after), dnnlutil::cpuEngine()));
    });
    if (!both) { // apart, as without fusion
        // Flat, as many values as the layout between them holds (padded channels too).
        if (!m_mid) m_mid.emplace(Shape { m_midNative ? m_dstLayout.bytes / static_cast<int64_t>(sizeof(float)) : m_output.size() });
        runOwn(in, *m_mid);
        m_dwIn[0] = &*m_mid;
        Tensor* const out[] = { &y };
        m_dw->run(m_dwIn, out, ctx);
        return;
    }
    dnnl::stream& s = dnnlutil::threadStream();
    m_fusedDst->bind(y.data());
    bindInputs(in, s);
    m_dwBias.set_data_handle(const_cast<float*>(bias.view().data())); // only read
    bindWeights(*m_dwWeights, weights, m_dwWeightsFrom, m_dwWeightsVersion, s);
    both->execute(s, m_fusedArgs);
    s.wait();
    m_fusedDst->convert(s);
    s.wait();
    if (m_dw->m_post.finishesWithClip()) // finite, and within the clip's bounds
        dnnlutil::recordBounds(y, after.first, after.second);
    else if (m_dw->m_post.isReluAlone())
        dnnlutil::recordBounds(y, 0.0f, m_dw->m_finite.outputBound(dwBound));
}

} // namespace opscope::dnnlutil
