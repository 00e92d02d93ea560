#pragma once

// Private to the engine: oneDNN is never exposed by a public header.

#include "ops/dnnl/dnnl_common.h"

#include <functional>
#include <memory>
#include <unordered_map>

namespace opscope::dnnlutil {

/// Makes a pooling primitive from `src` to `dst` (the two of the same format).
using PoolPrimitiveMaker = std::function<dnnl::primitive(const dnnl::memory::desc& src, const dnnl::memory::desc& dst)>;

/// A oneDNN pooling (one tensor in, one out) that runs on plain tensors and, between kernels that
/// keep a tensor in one of oneDNN's layouts (Kernel::nativeChoices), in theirs: nChw16c, nChw8c
/// (whole blocks of channels only) or nhwc, on a 4-D tensor. The primitive runs in its input's
/// layout and the output, when wanted in another, is converted after it (the smaller side).
///
/// `scale` multiplies the output unless 1 (sum pooling as oneDNN's average). With a
/// `nanFallback` (max pooling: oneDNN's max drops NaN), an input holding a NaN is computed by that
/// kernel instead, on plain copies, so that NaN propagates.
class BlockedPoolKernel final : public Kernel {
public:
    BlockedPoolKernel(PoolPrimitiveMaker make, const Shape& data, const Shape& output, float scale,
        std::unique_ptr<Kernel> nanFallback);
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override;
    const char* backend() const override { return "dnnl"; }
    std::vector<NativeLayout> nativeChoices() const override;
    void chooseNative(int input, int output) override;
    NativeLayout nativeOutput() const override { return m_outChoice < 0 ? NativeLayout {} : m_layouts[static_cast<size_t>(m_outChoice)]; }
    NativeLayout nativeInput(size_t index) const override
    {
        return index != 0 || m_inChoice < 0 ? NativeLayout {} : m_layouts[static_cast<size_t>(m_inChoice)];
    }
    void setNative(std::span<const bool> inputs, bool output) override;

private:
    void build();
    // The input's (or output's) descriptor in a choice's format (an index into m_layouts); -1: plain.
    dnnl::memory::desc srcDesc(int choice) const;
    dnnl::memory::desc dstDesc(int choice) const;

    PoolPrimitiveMaker m_make;
    Shape m_data, m_output;
    float m_scale;
    std::unique_ptr<Kernel> m_nanFallback;
    std::vector<dnnl::memory::format_tag> m_tags; // the formats it runs in
    mutable std::vector<NativeLayout> m_layouts; // the input in each of m_tags, then the output in each (nativeChoices)
    int m_inChoice = -1, m_outChoice = -1; // chooseNative()
    int m_src = -1, m_dst = -1; // in use (setNative): a choice, or -1 for plain
    dnnl::primitive m_primitive;
    dnnl::memory m_srcMemory, m_dstMemory; // the tensors' buffers, bound at each run
    bool m_converted = false; // the output wanted in another layout than the input's
    Tensor m_dstBuffer; // then the primitive's output, and
    dnnl::memory m_inner; // over it,
    dnnl::reorder m_reorder; // to m_dstMemory
    std::unordered_map<int, dnnl::memory> m_args;
    Tensor m_plainIn, m_plainOut; // the NaN fallback's, for a tensor in another layout
};

} // namespace opscope::dnnlutil
