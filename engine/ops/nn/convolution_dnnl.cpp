#include "ops/dnnl/dnnl_common.h"
#include "ops/dnnl/finite_input.h"
#include "ops/dnnl/post_ops.h"
#include "ops/nn/channels_last.h"
#include "ops/nn/convolution.h"
#include "tensor/allocator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace opscope {

namespace {

using dnnl::memory;

// One tensor as the user holds it (plain, its buffer bound on each run) and as the primitive reads
// or writes it: the same memory when the formats agree; else a buffer of our own, filled (or
// emptied) by our channels-last transposition when that is the format asked for, by a oneDNN
// reorder otherwise. A native port (Kernel::setNative) takes the user's buffer as already being in
// the primitive's format: the buffer is bound to the inner memory and nothing is converted. A
// buffer of its own is allocated at the first run, not when the kernel is made: a network's
// kernels are all made before the first runs, and most ports' buffers are dropped again when the
// executor keeps their tensors native.
class Port {
public:
    /// `target`: the primitive's memory to fill (another port's inner memory) instead of one of
    /// its own; only when the formats differ.
    Port(const memory::desc& plain, const memory::desc& wanted, bool intoPrimitive, const memory* target = nullptr,
        bool native = false)
        : m_user(plain, dnnlutil::cpuEngine(), DNNL_MEMORY_NONE)
        , m_intoPrimitive(intoPrimitive)
    {
        if (native && wanted != plain) {
            m_inner = memory(wanted, dnnlutil::cpuEngine(), DNNL_MEMORY_NONE);
            m_native = true;
            return;
        }
        if (wanted == plain) {
            m_inner = m_user;
            return;
        }
        m_inner = target ? *target : memory(wanted, dnnlutil::cpuEngine(), DNNL_MEMORY_NONE);
        if (!target) m_ownBytes = wanted.get_size();
        const memory::dims dims = plain.dims();
        const bool spatial = dims.size() == 3 || dims.size() == 4;
        const auto lastTag = dims.size() == 3 ? memory::format_tag::acb : memory::format_tag::acdb;
        const auto plainTag = dims.size() == 3 ? memory::format_tag::abc : memory::format_tag::abcd;
        if (spatial && plain == memory::desc(dims, memory::data_type::f32, plainTag)
            && wanted == memory::desc(dims, memory::data_type::f32, lastTag)) {
            m_conversion = Conversion::ChannelsLast;
            m_batch = dims[0];
            m_channels = dims[1];
            m_positions = dims.size() == 3 ? dims[2] : dims[2] * dims[3];
            return;
        }
        m_conversion = Conversion::Reorder;
        m_reorder = intoPrimitive ? dnnl::reorder(m_user, m_inner) : dnnl::reorder(m_inner, m_user);
        m_reorderArgs = { { DNNL_ARG_FROM, intoPrimitive ? m_user : m_inner },
            { DNNL_ARG_TO, intoPrimitive ? m_inner : m_user } };
    }

    Port(const Port&) = delete;
    Port& operator=(const Port&) = delete;
    ~Port() { detail::freeBuffer(m_own, m_ownBytes); }

    /// What the primitive reads or writes (its buffer there once bound).
    const memory& inner() const { return m_inner; }
    bool converts() const { return m_conversion != Conversion::None; }
    /// The values in the user's buffer: more than the tensor's when a native layout pads it.
    int64_t userElements() const
    {
        return static_cast<int64_t>((m_native ? m_inner : m_user).get_desc().get_size() / sizeof(float));
    }

    /// Points the port at the tensor's buffer; the first time, allocates its own buffer where it
    /// has one (ResourceError naming the bytes when there is no memory for it).
    void bind(float* data)
    {
        m_data = data;
        (m_native ? m_inner : m_user).set_data_handle(data);
        if (m_ownBytes != 0 && !m_own) {
            m_own = detail::allocateBuffer(m_ownBytes);
            m_inner.set_data_handle(m_own);
        }
    }

    /// User -> primitive for inputs, primitive -> user for outputs.
    void convert(dnnl::stream& s)
    {
        if (m_conversion == Conversion::Reorder) {
            m_reorder.execute(s, m_reorderArgs);
        } else if (m_conversion == Conversion::ChannelsLast) {
            auto* inner = static_cast<float*>(m_inner.get_data_handle());
            if (m_intoPrimitive)
                toChannelsLast(m_data, inner, m_batch, m_channels, m_positions);
            else
                toChannelsFirst(inner, m_data, m_batch, m_channels, m_positions);
        }
    }

private:
    enum class Conversion { None, ChannelsLast, Reorder };

    memory m_user;
    memory m_inner;
    bool m_intoPrimitive;
    bool m_native = false;
    Conversion m_conversion = Conversion::None;
    float* m_data = nullptr;
    int64_t m_batch = 0, m_channels = 0, m_positions = 0;
    dnnl::reorder m_reorder;
    std::unordered_map<int, memory> m_reorderArgs;
    size_t m_ownBytes = 0; // the inner buffer's, when it is the port's own
    void* m_own = nullptr;
};

memory::desc anyFormat(const memory::desc& d)
{
    return { d.dims(), memory::data_type::f32, memory::format_tag::any };
}

// The primitive and its reorders are made once; run() only points the user memories at the
// tensors' buffers. Weights in another format are reordered only when they are other weights or
// were written since the last run (Tensor::version): oneDNN's reorder of ResNet's 512x512x3x3
// weights costs about as much as the convolution itself, and even one read of them to see whether
// they changed a third of it at 7x7.
class ConvolutionDnnl final : public Kernel {
public:
    ConvolutionDnnl(const ConvolutionParams& p, const Shape& data, const Shape& output)
        : m_params(p)
        , m_data(data)
        , m_output(output)
    {
        build();
    }

    bool setPostOps(std::span<const PostOp> ops) override
    {
        clearNative(); // layouts are asked again after
        if (dnnlutil::PostOpList::takes(ops)) {
            m_post.set(ops, m_output.ndim(), m_output[1]);
            try {
                build();
                return true;
            } catch (const dnnl::error&) { // no implementation with these post-ops: none
            }
        }
        if (!m_post.empty()) {
            m_post.set({}, m_output.ndim(), m_output[1]);
            build();
        }
        return false;
    }

    NativeLayout nativeOutput() const override { return m_outputIn ? m_outputInLayout : m_dstLayout; }

    bool outputIn(const NativeLayout& layout) override
    {
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
        if (m_data.ndim() != 4) return false;
        const ConvGeometry g = ConvGeometry::from(m_params, m_data, m_output);
        return (g.groups > 1 && g.groups == g.inChannels) || m_data[0] > 1;
    }

    void computeBlocked(bool on) override
    {
        on = on && m_data.ndim() == 4;
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
        m_nativeDst = output && !m_dstLayout.plain();
        build();
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
        m_dst = m_nativeDst && m_outputIn ? std::make_unique<Port>(*m_outputIn, pd.dst_desc(), false)
                                          : std::make_unique<Port>(dstPlain, pd.dst_desc(), false, nullptr, m_nativeDst);
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
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        dnnl::stream& s = dnnlutil::threadStream();
        m_src->bind(const_cast<float*>(in[0]->view().data())); // only read: data() would count as a write
        m_dst->bind(out[0]->data());
        if (m_bias) m_bias.set_data_handle(const_cast<float*>(in[2]->view().data())); // only read
        m_src->convert(s);
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
        // Only read: oneDNN's handle is not const, for sources either. Taking it by data() would
        // count as a write and reorder on every run.
        float* w = const_cast<float*>(in[1]->view().data());
        if (!m_weights->converts()) {
            m_weights->bind(w);
        } else {
            const uint64_t version = in[1]->version();
            if (w != m_weightsFrom || version != m_weightsVersion) {
                m_weights->bind(w);
                m_weights->convert(s);
                m_weightsVersion = version;
                m_weightsFrom = w;
            }
        }
        const bool inside = finishesInside(in, *out[0]);
        (inside ? m_finishing : m_conv).execute(s, m_convArgs);
        s.wait();
        m_dst->convert(s);
        s.wait();
        if (m_post.endsWithPlainRelu() && m_reluDropsNaN) { // no NaN, whatever came in
            dnnlutil::recordBounds(*out[0], 0.0f, std::numeric_limits<float>::infinity());
        } else if (!inside) {
            m_post.finish(out[0]->data(), m_dst->userElements()); // a native output's padding too
        } else if (m_post.finishesWithClip()) { // finite, and within the clip's bounds
            const std::pair<float, float> bounds = m_post.finishBounds();
            dnnlutil::recordBounds(*out[0], bounds.first, bounds.second);
        } else if (m_post.isReluAlone()) { // finite, and within [0, the product's bound]
            dnnlutil::recordBounds(*out[0], 0.0f, m_finite.outputBound(m_inputBound));
        }
    }

    const char* backend() const override { return "dnnl"; }

private:
    // Forgets the layouts the executor chose (setNative, outputIn): it asks again after a change.
    void clearNative()
    {
        m_nativeSrc = m_nativeDst = m_nativeResidual = false;
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
        m_finite.update(*in[1], m_params.noBias ? nullptr : in[2]);
        const auto known = dnnlutil::recordedBounds(*in[0]); // by the kernel before (a clip or relu inside it)
        const float knownBound = known ? std::max(std::fabs(known->first), std::fabs(known->second)) : 0.0f;
        if (known && knownBound <= m_finite.limit()) {
            m_inputBound = knownBound;
        } else {
            const int64_t count = m_src->userElements(); // a native input's padding too (zeros, or finite)
            const std::optional<float> scanned
                = count > 2 * out.size() ? std::nullopt : m_finite.bound(in[0]->view().data(), count);
            if (!scanned) return false;
            m_inputBound = *scanned;
        }
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
