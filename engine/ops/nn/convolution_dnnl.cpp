#include "ops/nn/convolution_dnnl_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace opscope {

namespace dnnlutil {

using dnnl::memory;

bool ConvolutionDnnl::setPostOps(std::span<const PostOp> ops)
{
    clearNative(); // layouts are asked again after
    const bool hadDepthwise = m_dw != nullptr;
    if (hadDepthwise) {
        m_dw.reset();
        m_blocked = m_blockedAsked;
    }
    const auto dw = std::find_if(ops.begin(), ops.end(), [](const PostOp& o) { return o.kind == PostOp::Kind::Depthwise; });
    if (dw != ops.end()) {
        const auto at = static_cast<size_t>(dw - ops.begin());
        if (setDepthwise(ops.first(at), *dw, ops.subspan(at + 1))) return true;
    } else if (dnnlutil::PostOpList::takes(ops)) {
        m_post.set(ops, m_output.ndim(), m_output[1]);
        try {
            build();
            return true;
        } catch (const dnnl::error&) { // no implementation with these post-ops: none
        }
    }
    if (!m_post.empty() || hadDepthwise) {
        m_post.set({}, m_output.ndim(), m_output[1]);
        build();
    }
    return false;
}

bool ConvolutionDnnl::outputIn(const NativeLayout& layout)
{
    if (m_dw) return false;
    const std::optional<memory::desc> desc = dnnlutil::layoutDesc(layout.key);
    if (!desc || desc->dims() != dnnlutil::toDims(m_output) || desc->data_type() != memory::data_type::f32) return false;
    try { // a reorder from the primitive's format into it
        dnnl::reorder::primitive_desc(dnnlutil::cpuEngine(), m_dstInner, dnnlutil::cpuEngine(), *desc);
    } catch (const dnnl::error&) {
        return false;
    }
    m_outputIn = desc;
    m_outputInLayout = layout;
    return true;
}

void ConvolutionDnnl::computeBlocked(bool on)
{
    on = on && m_data.ndim() == 4;
    m_blockedAsked = on;
    if (m_dw) return; // channel-blocked while it computes a depthwise convolution
    if (on == m_blocked) return;
    m_blocked = on;
    clearNative();
    build();
}

void ConvolutionDnnl::setNative(std::span<const bool> inputs, bool output)
{
    const auto flagged = [&inputs](int i) { return i >= 0 && static_cast<size_t>(i) < inputs.size() && inputs[static_cast<size_t>(i)]; };
    m_nativeSrc = flagged(0) && !m_srcLayout.plain();
    m_nativeResidual = flagged(residualIndex()) && !m_dstLayout.plain();
    m_nativeDst = output && !m_dstLayout.plain() && !m_dw;
    if (m_dw) { // the output is the depthwise convolution's
        const bool mid[] = { m_midNative };
        m_dw->setNative(mid, output);
        m_nativeOut = output && !m_dw->m_dstLayout.plain();
    }
    build();
}

void ConvolutionDnnl::build()
{
    const ConvolutionParams& p = m_params;
    const ConvGeometry g = ConvGeometry::from(p, m_data, m_output);
    memory::dims strides, dilates, pads;
    for (int i = 0; i < p.spatialDims(); ++i) {
        const auto si = static_cast<size_t>(i);
        strides.push_back(p.stride[si]);
        dilates.push_back(p.dilate[si] - 1); // oneDNN counts the gaps: 0 is dense
        pads.push_back(p.pad[si]);
    }
    // MXNet's (O, I/g, k...) weights are oneDNN's (g, O/g, I/g, k...) in the same memory.
    Shape weights = g.groups > 1 ? Shape { g.groups, g.outChannelsPerGroup(), g.inChannelsPerGroup() }
                                 : Shape { g.outChannels, g.inChannels };
    for (int64_t k : p.kernel)
        weights.push_back(k);
    const memory::desc srcPlain = dnnlutil::plainDesc(m_data);
    const memory::desc weightsPlain = dnnlutil::plainDesc(weights);
    const memory::desc dstPlain = dnnlutil::plainDesc(m_output);
    const memory::desc biasPlain = dnnlutil::plainDesc(Shape { g.outChannels });

    // Fused element-wise work runs on each output value before it is stored: a sum adds what
    // the destination holds (the residual, put there first). The nodes' arithmetic, though
    // not always their order: the channel-blocked direct kernel adds the residual to the
    // products before the bias (to the first block of input channels' products when there
    // are several), the unfused add comes after both.
    const dnnl::primitive_attr& attr = m_post.attr();
    // Padding on the right as on the left: oneDNN's output-size check floors as MXNet does.
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::convolution_direct;
    const auto convolution = [&](const memory::desc& src, const memory::desc& weights, const memory::desc& dst) {
        return p.noBias
            ? dnnl::convolution_forward::desc(kind, algo, src, weights, dst, strides, dilates, pads, pads)
            : dnnl::convolution_forward::desc(kind, algo, src, weights, biasPlain, dst, strides, dilates, pads, pads);
    };
    // Weights in the format oneDNN chooses for this source and destination.
    const auto describe = [&](const memory::desc& src, const memory::desc& dst) {
        return dnnl::convolution_forward::primitive_desc(
            convolution(src, anyFormat(weightsPlain), dst), attr, dnnlutil::cpuEngine());
    };
    // Every input in the format oneDNN prefers: the layouts the kernel names (nativeInput,
    // nativeOutput) are that primitive's. An image's few channels are the exception while
    // none of its tensors stays in such a layout (its output is seen, or read by other
    // kernels): oneDNN's direct kernel reads plain NCHW itself and writes a blocked layout,
    // which converts to plain far faster than the channels-last one its preferred kernel
    // writes (ResNet's 7x7 stem with its output plain: 1.2-1.4 times the speed). Once the
    // output stays in the preferred layout, that kernel and the transposition into it take
    // about the time of the direct one, and it writes what the next convolutions read (ResNet's
    // stem then hands MaxPool a tensor it need not reorder after).
    // In a network kept channel-blocked (computeBlocked), nChw16c in and out instead, the
    // image read plain by the direct kernel; unless only oneDNN's reference kernel computes so.
    const bool imageInput = g.inChannels < 8 && g.groups == 1;
    dnnl::convolution_forward::primitive_desc preferred;
    if (m_blocked) {
        const auto blocked = [](const memory::desc& d) {
            return memory::desc(d.dims(), memory::data_type::f32, memory::format_tag::nChw16c);
        };
        try {
            preferred = describe(imageInput ? srcPlain : blocked(srcPlain), blocked(dstPlain));
            if (std::string(preferred.impl_info_str()).rfind("ref", 0) == 0) preferred = {};
        } catch (const dnnl::error&) {
        }
    }
    const bool inBlocked = static_cast<bool>(preferred);
    if (!inBlocked) preferred = describe(anyFormat(srcPlain), anyFormat(dstPlain));
    const bool direct = imageInput && !inBlocked && !m_nativeSrc && !m_nativeDst && !m_nativeResidual;
    const dnnl::convolution_forward::primitive_desc pd = direct ? describe(srcPlain, anyFormat(dstPlain)) : preferred;
    m_conv = dnnl::convolution_forward(pd);
    // oneDNN's JIT post-op relu is a max with 0, which turns NaN into 0; its reference one
    // (s > 0 ? s : s·alpha) keeps NaN. Only the first lets the output be recorded as NaN-free.
    const std::string impl = pd.impl_info_str();
    m_reluDropsNaN = impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0;
    // The same convolution in the formats chosen, for a primitive that also applies the op left
    // to finish() (made when a run first can).
    m_exact = convolution(pd.src_desc(), pd.weights_desc(), pd.dst_desc());
    m_finishing.reset();
    m_srcLayout = dnnlutil::nativeLayout(preferred.src_desc(), srcPlain);
    m_dstLayout = dnnlutil::nativeLayout(preferred.dst_desc(), dstPlain);
    m_src = std::make_unique<Port>(srcPlain, pd.src_desc(), true, nullptr, m_nativeSrc);
    m_weights = std::make_unique<Port>(weightsPlain, pd.weights_desc(), true);
    m_dstInner = preferred.dst_desc();
    // Kept in the readers' layout (outputIn): reordered into it from the primitive's format.
    // With a depthwise convolution after it, its own output (on runs apart) in the layout both
    // compute in, where they agree.
    const bool nativeDst = m_dw ? m_midNative : m_nativeDst;
    m_dst = m_nativeDst && m_outputIn ? std::make_unique<Port>(*m_outputIn, pd.dst_desc(), false)
                                      : std::make_unique<Port>(dstPlain, pd.dst_desc(), false, nullptr, nativeDst);
    m_residual.reset();
    if (m_post.hasSum())
        m_residual = std::make_unique<Port>(dstPlain, pd.dst_desc(), true, &m_dst->inner(), m_nativeResidual);
    m_convArgs = { { DNNL_ARG_SRC, m_src->inner() }, { DNNL_ARG_WEIGHTS, m_weights->inner() },
        { DNNL_ARG_DST, m_dst->inner() } };
    m_bias = memory();
    if (!p.noBias) {
        m_bias = memory(biasPlain, dnnlutil::cpuEngine(), DNNL_MEMORY_NONE);
        m_convArgs[DNNL_ARG_BIAS] = m_bias;
    }
    m_post.addArgs(m_convArgs);
    m_weightsFrom = nullptr; // a new weights buffer: reordered on the next run
    if (m_dw) buildFused();
}

void ConvolutionDnnl::runOwn(std::span<const Tensor* const> in, Tensor& y)
{
    dnnl::stream& s = dnnlutil::threadStream();
    m_dst->bind(y.data());
    bindInputs(in, s);
    // What the post-ops read comes after the kernel's own inputs.
    const Tensor* residual = m_post.bind(in, m_params.noBias ? 2 : 3);
    if (residual) { // the residual into the destination first
        const Tensor& r = *residual;
        if (m_residual->converts()) {
            m_residual->bind(r.data());
            m_residual->convert(s);
        } else { // already in the destination's layout (plain, or native on both sides)
            void* into = m_dst->inner().get_data_handle();
            if (r.data() != into) std::memcpy(into, r.data(), static_cast<size_t>(m_residual->userElements()) * sizeof(float));
        }
    }
    const dnnl::convolution_forward* finishing = finishesInside(in, y);
    const bool inside = finishing != nullptr;
    (inside ? *finishing : m_conv).execute(s, m_convArgs);
    s.wait();
    m_dst->convert(s);
    s.wait();
    if (m_post.endsWithPlainRelu() && m_reluDropsNaN) { // no NaN, whatever came in
        dnnlutil::recordBounds(y, 0.0f, std::numeric_limits<float>::infinity());
    } else if (!inside) {
        m_post.finish(y.data(), m_dst->userElements()); // a native output's padding too
    } else if (m_post.finishesWithClip()) { // finite, and within the clip's bounds
        const std::pair<float, float> bounds = m_post.finishBounds();
        dnnlutil::recordBounds(y, bounds.first, bounds.second);
    } else if (m_post.isReluAlone()) { // finite, and within [0, the product's bound]
        dnnlutil::recordBounds(y, 0.0f, m_finite.outputBound(m_inputBound));
    }
}

void ConvolutionDnnl::bindWeights(Port& port, const Tensor& weights, const float*& from, uint64_t& version, dnnl::stream& s)
{
    // Only read: oneDNN's handle is not const, for sources either. Taking it by data() would
    // count as a write and reorder on every run.
    float* w = const_cast<float*>(weights.view().data());
    if (!port.converts()) {
        port.bind(w);
        return;
    }
    if (w != from || weights.version() != version) {
        port.bind(w);
        port.convert(s);
        version = weights.version();
        from = w;
    }
}

const dnnl::convolution_forward* ConvolutionDnnl::finishesInside(std::span<const Tensor* const> in, const Tensor& out)
{
    if (!m_post.finishesFinite()) return nullptr;
    const std::pair<float, float> bounds = m_post.finishBounds();
    if (!(bounds.first <= bounds.second)) return nullptr; // oneDNN clips in another order then
    if (!inputFinite(in, out.size())) return nullptr;
    return m_finishing.get(bounds, [&] { // none (finish() stays) when oneDNN has no implementation with it
        return dnnl::convolution_forward(
            dnnl::convolution_forward::primitive_desc(*m_exact, m_post.attrWithFinish(bounds), dnnlutil::cpuEngine()));
    });
}

bool ConvolutionDnnl::inputFinite(std::span<const Tensor* const> in, int64_t outSize)
{
    m_finite.update(*in[1], m_params.noBias ? nullptr : in[2]);
    const auto known = dnnlutil::recordedBounds(*in[0]); // by the kernel before (a clip or relu inside it)
    const float knownBound = known ? std::max(std::fabs(known->first), std::fabs(known->second)) : 0.0f;
    if (known && knownBound <= m_finite.limit()) {
        m_inputBound = knownBound;
        return true;
    }
    const int64_t count = m_src->userElements(); // a native input's padding too (zeros, or finite)
    const std::optional<float> scanned = count > 2 * outSize ? std::nullopt : m_finite.bound(in[0]->view().data(), count);
    if (scanned) m_inputBound = *scanned;
    return scanned.has_value();
}

} // namespace dnnlutil

std::unique_ptr<Kernel> makeConvolutionDnnl(
    const ConvolutionParams& p, std::span<const Shape> in, std::span<const Shape> out)
{
    try {
        return std::make_unique<dnnlutil::ConvolutionDnnl>(p, in[0], out[0]);
    } catch (const dnnl::error&) {
        return nullptr; // no oneDNN implementation for this geometry: the reference kernel runs
    }
}

} // namespace opscope
