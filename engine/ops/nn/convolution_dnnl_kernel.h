#pragma once

// Private to the Convolution operator's oneDNN kernel (convolution_dnnl.cpp, and
// convolution_dnnl_depthwise.cpp for a depthwise convolution computed inside it).

#include "ops/dnnl/dnnl_common.h"
#include "ops/dnnl/finite_input.h"
#include "ops/dnnl/post_ops.h"
#include "ops/nn/convolution.h"
#include "ops/nn/dnnl_port.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

// A primitive made when a run first needs it with these parameters (a clip's bounds), and again
// when they change; none when oneDNN has no implementation with them.
template <class Key> class LazyPrimitive {
public:
    template <class Make> const dnnl::convolution_forward* get(const Key& key, Make make)
    {
        if (!m_made || key != m_key) {
            m_made = true;
            m_key = key;
            m_ok = false;
            try {
                m_primitive = make();
                m_ok = true;
            } catch (const dnnl::error&) {
            }
        }
        return m_ok ? &m_primitive : nullptr;
    }
    void reset() { *this = {}; }

private:
    dnnl::convolution_forward m_primitive;
    Key m_key {};
    bool m_made = false, m_ok = false;
};

// The primitive and its reorders are made once; run() only points the user memories at the
// tensors' buffers. Weights in another format are reordered only when they are other weights or
// were written since the last run (Tensor::version): oneDNN's reorder of ResNet's 512x512x3x3
// weights costs about as much as the convolution itself, and even one read of them to see whether
// they changed a third of it at 7x7.
class ConvolutionDnnl final : public Kernel {
    using memory = dnnl::memory;

public:
    ConvolutionDnnl(const ConvolutionParams& p, const Shape& data, const Shape& output, bool blocked = false)
        : m_params(p)
        , m_data(data)
        , m_output(output)
        , m_blocked(blocked && data.ndim() == 4)
    {
        build();
    }

    bool setPostOps(std::span<const PostOp> ops) override;

    NativeLayout nativeOutput() const override
    {
        if (m_dw) return m_dw->nativeOutput();
        return m_outputIn ? m_outputInLayout : m_dstLayout;
    }

    bool outputIn(const NativeLayout& layout) override;

    bool favoursBlocked() const override
    {
        if (m_dw) return true; // a depthwise convolution computes in it
        if (m_data.ndim() != 4) return false;
        const ConvGeometry g = ConvGeometry::from(m_params, m_data, m_output);
        return (g.groups > 1 && g.groups == g.inChannels) || m_data[0] > 1;
    }

    void computeBlocked(bool on) override;

    NativeLayout nativeInput(size_t index) const override
    {
        if (index == 0) return m_srcLayout;
        if (static_cast<int>(index) == residualIndex()) return m_dstLayout; // summed into the destination
        return {};
    }

    void setNative(std::span<const bool> inputs, bool output) override;

    std::optional<PostOp> asPostOp() const override;

    void build();

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
    void runOwn(std::span<const Tensor* const> in, Tensor& y);

    // The source, bias and weights bound (the source converted, the weights reordered when other
    // or written since).
    void bindInputs(std::span<const Tensor* const> in, dnnl::stream& s)
    {
        m_src->bind(const_cast<float*>(in[0]->view().data())); // only read: data() would count as a write
        if (m_bias) m_bias.set_data_handle(const_cast<float*>(in[2]->view().data())); // only read
        m_src->convert(s);
        bindWeights(*m_weights, *in[1], m_weightsFrom, m_weightsVersion, s);
    }

    static void bindWeights(Port& port, const Tensor& weights, const float*& from, uint64_t& version, dnnl::stream& s);

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
    // The primitive with that op inside when it may run so; null otherwise.
    const dnnl::convolution_forward* finishesInside(std::span<const Tensor* const> in, const Tensor& out);

    // Whether this run's input keeps the product finite (sets m_inputBound), known from the
    // kernel before or read when that costs less than a pass over `outSize` values.
    bool inputFinite(std::span<const Tensor* const> in, int64_t outSize);

    // A depthwise convolution (`dw`) after this one, with the post-ops before and after it: taken
    // when this is a 1x1 convolution of stride 1 and oneDNN has a kernel computing both in one
    // primitive (jit_1x1, in nChw16c), which never stores the 1x1's output whole. On a run whose
    // input could make a NaN or an infinity, a NaN-keeping clip or relu in either list cannot run
    // inside that primitive: the two convolutions then run apart (m_dw), as without fusion.
    bool setDepthwise(std::span<const PostOp> pre, const PostOp& dw, std::span<const PostOp> post);

    // Every op of both lists inside, with these bounds for the clips left to finish() (the one
    // before the depthwise convolution, the one after).
    dnnl::primitive_attr fusedAttr(std::pair<float, float> before, std::pair<float, float> after) const;

    // After build(): the ports of the primitive that computes both, its kernel checked with any
    // bounds (they choose no other kernel).
    void buildFused();

    void runDepthwise(std::span<const Tensor* const> in, Tensor& y, RunContext& ctx);

    ConvolutionParams m_params;
    Shape m_data, m_output;
    dnnlutil::PostOpList m_post;
    dnnl::convolution_forward m_conv;
    std::optional<dnnl::convolution_forward::desc> m_exact; // m_conv's, with its formats
    LazyPrimitive<std::pair<float, float>> m_finishing; // m_conv with the op left to finish() inside
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
    bool m_fusedAvailable = false; // oneDNN has a kernel other than its reference for both in one
    // Both in one, made from m_exact with the bounds of the clips before and after (fusedAttr).
    LazyPrimitive<std::pair<std::pair<float, float>, std::pair<float, float>>> m_fused;
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

} // namespace opscope::dnnlutil
