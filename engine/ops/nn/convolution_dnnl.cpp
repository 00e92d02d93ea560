#include "ops/dnnl/dnnl_common.h"
#include "ops/dnnl/finite_input.h"
#include "ops/dnnl/post_ops.h"
#include "ops/nn/convolution.h"
#include "ops/nn/dnnl_port.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace opscope {

namespace {

using dnnl::memory;

using dnnlutil::anyFormat;
using dnnlutil::Port;

// The primitive and its reorders are made once; run() only points the user memories at the
// tensors' buffers. Weights in another format are reordered only when they are other weights or
// were written since the last run (Tensor::version): oneDNN's reorder of ResNet's 512x512x3x3
// weights costs about as much as the convolution itself, and even one read of them to see whether
// they changed a third of it at 7x7.
class ConvolutionDnnl final : public Kernel {
public:
    ConvolutionDnnl(const ConvolutionParams& p, const Shape& data, const Shape& output, bool blocked = false)
        : m_params(p)
        , m_data(data)
        , m_output(output)
        , m_blocked(blocked && data.ndim() == 4)
    {
        build();
    }

    bool setPostOps(std::span<const PostOp> ops) override
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

    NativeLayout nativeOutput() const override
    {
        if (m_dw) return m_dw->nativeOutput();
        return m_outputIn ? m_outputInLayout : m_dstLayout;
    }

    bool outputIn(const NativeLayout& layout) override
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

    bool favoursBlocked() const override
    {
        if (m_dw) return true; // a depthwise convolution computes in it
        if (m_data.ndim() != 4) return false;
        const ConvGeometry g = ConvGeometry::from(m_params, m_data, m_output);
        return (g.groups > 1 && g.groups == g.inChannels) || m_data[0] > 1;
    }

    void computeBlocked(bool on) override
    {
        on = on && m_data.ndim() == 4;
        m_blockedAsked = on;
        if (m_dw) return; // channel-blocked while it computes a depthwise convolution
        if (on == m_blocked) return;
        m_blocked = on;
        clearNative();
        build();
    }

    NativeLayout nativeInput(size_t index) const override
    {
        if (index == 0) return m_srcLayout;
        if (static_cast<int>(index) == residualIndex()) return m_dstLayout; // summed into the destination
        return {};
    }

    void setNative(std::span<const bool> inputs, bool output) override
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

    std::optional<PostOp> asPostOp() const override
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

    void build()
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
        m_finishing = {};
        m_finishingMade = m_finishingOk = false;
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

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        if (m_dw)
            runDepthwise(in, *out[0], ctx);
        else
            runOwn(in, *out[0]);
    }

    const char* backend() const override { return "dnnl"; }

private:
    // The convolution alone, with its post-ops.
    void runOwn(std::span<const Tensor* const> in, Tensor& y)
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
        const bool inside = finishesInside(in, y);
        (inside ? m_finishing : m_conv).execute(s, m_convArgs);
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

    // The source, bias and weights bound (the source converted, the weights reordered when other
    // or written since).
    void bindInputs(std::span<const Tensor* const> in, dnnl::stream& s)
    {
        m_src->bind(const_cast<float*>(in[0]->view().data())); // only read: data() would count as a write
        if (m_bias) m_bias.set_data_handle(const_cast<float*>(in[2]->view().data())); // only read
        m_src->convert(s);
        bindWeights(*m_weights, *in[1], m_weightsFrom, m_weightsVersion, s);
    }

    static void bindWeights(Port& port, const Tensor& weights, const float*& from, uint64_t& version, dnnl::stream& s)
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

    // Forgets the layouts the executor chose (setNative, outputIn): it asks again after a change.
    void clearNative()
    {
        m_nativeSrc = m_nativeDst = m_nativeResidual = m_nativeOut = false;
        m_outputIn.reset();
    }

    int residualIndex() const { return m_post.residualIndex(m_params.noBias ? 2 : 3); }

    // A NaN-keeping clip or relu left to finish() runs as oneDNN's post-op inside the primitive
    // when this run's product cannot be NaN or infinite (every input value finite and within the
    // weights' bound: dnnlutil::FiniteInput): on finite values both give the same numbers, and the
    // pass over the output is saved. Known without reading the input when the kernel that wrote it
    // recorded its bounds (dnnlutil::recordedBounds: a convolution with a clip or relu inside);
    // otherwise checked when reading the input costs less than that pass.
    // Either way the input's bound gives the output's, recorded in turn.
    bool finishesInside(std::span<const Tensor* const> in, const Tensor& out)
    {
        if (!m_post.finishesFinite()) return false;
        const std::pair<float, float> bounds = m_post.finishBounds();
        if (!(bounds.first <= bounds.second)) return false; // oneDNN clips in another order then
        if (!inputFinite(in, out.size())) return false;
        if (!m_finishingMade || bounds != m_finishingBounds) {
            m_finishingMade = true;
            m_finishingBounds = bounds;
            m_finishingOk = false;
            try {
                m_finishing = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
                    *m_exact, m_post.attrWithFinish(bounds), dnnlutil::cpuEngine()));
                m_finishingOk = true;
            } catch (const dnnl::error&) { // no implementation with it: finish() stays
            }
        }
        return m_finishingOk;
    }

    // Whether this run's input keeps the product finite (sets m_inputBound), known from the
    // kernel before or read when that costs less than a pass over `outSize` values.
    bool inputFinite(std::span<const Tensor* const> in, int64_t outSize)
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

    // A depthwise convolution (`dw`) after this one, with the post-ops before and after it: taken
    // when this is a 1x1 convolution of stride 1 and oneDNN has a kernel computing both in one
    // primitive (jit_1x1, in nChw16c), which never stores the 1x1's output whole. On a run whose
    // input could make a NaN or an infinity, a NaN-keeping clip or relu in either list cannot run
    // inside that primitive: the two convolutions then run apart (m_dw), as without fusion.
    bool setDepthwise(std::span<const PostOp> pre, const PostOp& dw, std::span<const PostOp> post)
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
        try {
            auto apart = std::make_unique<ConvolutionDnnl>(q, m_output, out, true);
            if (!apart->setPostOps(post)) return false;
            m_post.set(pre, m_output.ndim(), channels);
            // A NaN-keeping op runs inside only on finite products; the one after the depthwise
            // convolution only when the one before bounds its input.
            const bool finite = (!m_post.hasFinish() || m_post.finishesFinite())
                && (!apart->m_post.hasFinish() || (apart->m_post.finishesFinite() && (m_post.finishesWithClip() || m_post.isReluAlone())));
            if (!finite) throw dnnl::error(dnnl_unimplemented, "no finite bound");
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

    // Every op of both lists inside, with these bounds for the clips left to finish() (the one
    // before the depthwise convolution, the one after).
    dnnl::primitive_attr fusedAttr(std::pair<float, float> before, std::pair<float, float> after) const
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

    // After build(): the ports of the primitive that computes both, its kernel checked with any
    // bounds (they choose no other kernel).
    void buildFused()
    {
        m_fusedDesc = m_exact;
        m_fusedMade = m_fusedOk = m_fusedAvailable = false;
        dnnl::convolution_forward::primitive_desc pd;
        try {
            pd = dnnl::convolution_forward::primitive_desc(*m_fusedDesc, fusedAttr({ 0, 1 }, { 0, 1 }), dnnlutil::cpuEngine());
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

    void runDepthwise(std::span<const Tensor* const> in, Tensor& y, RunContext& ctx)
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
        if (fused && (!m_fusedMade || m_fusedBounds[0] != before || m_fusedBounds[1] != after)) {
            m_fusedMade = true;
            m_fusedBounds[0] = before;
            m_fusedBounds[1] = after;
            m_fusedOk = false;
            try {
                m_fused = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
                    *m_fusedDesc, fusedAttr(before, after), dnnlutil::cpuEngine()));
                m_fusedOk = true;
            } catch (const dnnl::error&) {
            }
        }
        if (!fused || !m_fusedOk) { // apart, as without fusion
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
        m_fused.execute(s, m_fusedArgs);
        s.wait();
        m_fusedDst->convert(s);
        s.wait();
        if (m_dw->m_post.finishesWithClip()) // finite, and within the clip's bounds
            dnnlutil::recordBounds(y, after.first, after.second);
        else if (m_dw->m_post.isReluAlone())
            dnnlutil::recordBounds(y, 0.0f, m_dw->m_finite.outputBound(dwBound));
    }

    ConvolutionParams m_params;
    Shape m_data, m_output;
    dnnlutil::PostOpList m_post;
    dnnl::convolution_forward m_conv;
    std::optional<dnnl::convolution_forward::desc> m_exact; // m_conv's, with its formats
    dnnl::convolution_forward m_finishing; // m_conv with the op left to finish() inside
    std::pair<float, float> m_finishingBounds;
    bool m_finishingMade = false, m_finishingOk = false;
    dnnlutil::FiniteInput m_finite;
    float m_inputBound = 0; // this run's max |x| when finishesInside() (known or read)
    bool m_reluDropsNaN = false; // m_conv's implementation turns NaN into 0 in its relu post-op
    std::unique_ptr<Port> m_src, m_weights, m_dst, m_residual;
    memory m_bias;
    std::unordered_map<int, memory> m_convArgs;
    uint64_t m_weightsVersion = 0; // of the weights last reordered, and where they were
    const float* m_weightsFrom = nullptr; // null: not reordered into this buffer yet
    NativeLayout m_srcLayout, m_dstLayout;
    memory::desc m_dstInner; // the destination format of the primitive named (run when the output stays native)
    std::optional<memory::desc> m_outputIn; // the readers' layout (outputIn), or none
    NativeLayout m_outputInLayout;
    bool m_nativeSrc = false, m_nativeDst = false, m_nativeResidual = false;
    bool m_blocked = false; // computeBlocked
    bool m_blockedAsked = false; // what computeBlocked last asked (m_blocked is on while m_dw)
    // A depthwise convolution after this 1x1 one (PostOp::Kind::Depthwise): the kernel that runs it
    // apart, with the post-ops after it, and what runs both in one primitive.
    std::unique_ptr<ConvolutionDnnl> m_dw;
    PostOp m_dwOp;
    size_t m_dwAt = 0; // where its weights are among run()'s inputs
    std::optional<dnnl::convolution_forward::desc> m_fusedDesc; // the 1x1's, in m_conv's formats
    bool m_fusedAvailable = false; // oneDNN has a kernel other than its reference for both in one
    dnnl::convolution_forward m_fused; // with the bounds of the clips last seen
    std::pair<float, float> m_fusedBounds[2];
    bool m_fusedMade = false, m_fusedOk = false;
    std::unique_ptr<Port> m_fusedDst, m_dwWeights;
    memory m_dwBias;
    std::unordered_map<int, memory> m_fusedArgs;
    uint64_t m_dwWeightsVersion = 0;
    const float* m_dwWeightsFrom = nullptr;
    bool m_nativeOut = false; // the depthwise convolution's output stays in its layout
    bool m_midNative = false; // on runs apart, the 1x1's output stays in the layout both compute in
    bool m_dwRefused = false; // oneDNN fuses no depthwise convolution into this one
    std::optional<Tensor> m_mid; // the 1x1's output on runs apart (flat: plain, or in that layout)
    std::vector<const Tensor*> m_dwIn; // the depthwise kernel's inputs on runs apart
};

} // namespace

std::unique_ptr<Kernel> makeConvolutionDnnl(
    const ConvolutionParams& p, std::span<const Shape> in, std::span<const Shape> out)
{
    try {
        return std::make_unique<ConvolutionDnnl>(p, in[0], out[0]);
    } catch (const dnnl::error&) {
        return nullptr; // no oneDNN implementation for this geometry: the reference kernel runs
    }
}

} // namespace opscope
