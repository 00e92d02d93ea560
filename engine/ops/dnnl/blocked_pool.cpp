#include "ops/dnnl/blocked_pool.h"

#include "ops/dnnl/finite_input.h"

#include <Eigen/Core>

#include <algorithm>

namespace opscope::dnnlutil {

namespace {

using dnnl::memory;

// Runs a reorder between two buffers of the same tensor in two layouts.
void reorderBuffers(const memory::desc& fromDesc, const void* from, const memory::desc& toDesc, void* to)
{
    memory src(fromDesc, cpuEngine(), const_cast<void*>(from));
    memory dst(toDesc, cpuEngine(), to);
    dnnl::stream& s = threadStream();
    dnnl::reorder(src, dst).execute(s, src, dst);
    s.wait();
}

// True when any of the n values is NaN: one vectorisable pass (no early exit inside a block).
bool anyNan(const float* x, int64_t n)
{
    constexpr int64_t kBlock = 4096;
    for (int64_t i = 0; i < n; i += kBlock) {
        const int64_t end = std::min(n, i + kBlock);
        int bad = 0;
        for (int64_t k = i; k < end; ++k)
            bad |= x[k] != x[k];
        if (bad) return true;
    }
    return false;
}

} // namespace

BlockedPoolKernel::BlockedPoolKernel(
    PoolPrimitiveMaker make, const Shape& data, const Shape& output, float scale, std::unique_ptr<Kernel> nanFallback)
    : m_make(std::move(make))
    , m_data(data)
    , m_output(output)
    , m_scale(scale)
    , m_nanFallback(std::move(nanFallback))
{
    using tag = memory::format_tag;
    // Whole blocks only: in a padded layout the NaN check and the scaling in run(), which read
    // the tensor's own number of values, would miss some. Whether oneDNN pools in a format is
    // found when it is chosen (chooseNative), so that a kernel made for one eager call makes one
    // primitive.
    if (data.ndim() == 4 && output.ndim() == 4 && data[1] == output[1])
        for (const auto& [t, block] : { std::pair { tag::nChw16c, 16 }, std::pair { tag::nChw8c, 8 }, std::pair { tag::acdb, 1 } })
            if (data[1] % block == 0) m_tags.push_back(t);
    build();
}

std::vector<NativeLayout> BlockedPoolKernel::nativeChoices() const
{
    if (m_layouts.empty()) // spelled out when the executor first asks (not for an eager call)
        for (int side = 0; side < 2; ++side)
            for (size_t i = 0; i < m_tags.size(); ++i) {
                const int choice = static_cast<int>(side * m_tags.size() + i);
                m_layouts.push_back(side == 0 ? nativeLayout(srcDesc(choice), srcDesc(-1)) : nativeLayout(dstDesc(choice), dstDesc(-1)));
            }
    return m_layouts;
}

memory::desc BlockedPoolKernel::srcDesc(int choice) const
{
    if (choice < 0) return plainDesc(m_data);
    return { toDims(m_data), memory::data_type::f32, m_tags[static_cast<size_t>(choice) % m_tags.size()] };
}

memory::desc BlockedPoolKernel::dstDesc(int choice) const
{
    if (choice < 0) return plainDesc(m_output);
    return { toDims(m_output), memory::data_type::f32, m_tags[static_cast<size_t>(choice) % m_tags.size()] };
}

void BlockedPoolKernel::chooseNative(int input, int output)
{
    const int n = static_cast<int>(nativeChoices().size());
    m_inChoice = input >= 0 && input < n ? input : -1;
    m_outChoice = output >= 0 && output < n ? output : -1;
    if (m_inChoice >= 0) { // the primitive runs in its input's format (an output in another is reordered)
        try {
            m_make(srcDesc(m_inChoice), dstDesc(m_inChoice));
        } catch (const dnnl::error&) { // not one this oneDNN pools in: plain
            m_inChoice = -1;
        }
    }
    if (m_src >= 0 || m_dst >= 0) {
        m_src = m_dst = -1;
        build();
    }
}

void BlockedPoolKernel::setNative(std::span<const bool> inputs, bool output)
{
    const int src = !inputs.empty() && inputs[0] ? m_inChoice : -1;
    const int dst = output ? m_outChoice : -1;
    if (src == m_src && dst == m_dst) return;
    m_src = src;
    m_dst = dst;
    build();
}

void BlockedPoolKernel::build()
{
    // The input is never converted (it is the larger side): the primitive runs in its layout, and
    // writes to a buffer of its own when the output is wanted in another.
    const memory::desc primSrc = srcDesc(m_src), primDst = dstDesc(m_src), wanted = dstDesc(m_dst);
    m_primitive = m_make(primSrc, primDst);
    m_srcMemory = memory(primSrc, cpuEngine(), DNNL_MEMORY_NONE);
    m_dstMemory = memory(wanted, cpuEngine(), DNNL_MEMORY_NONE);
    m_converted = wanted != primDst;
    m_dstBuffer = m_converted ? Tensor(m_output) : Tensor();
    if (m_converted) {
        m_inner = memory(primDst, cpuEngine(), m_dstBuffer.data());
        m_reorder = dnnl::reorder(m_inner, m_dstMemory);
    }
    m_args = { { DNNL_ARG_SRC, m_srcMemory }, { DNNL_ARG_DST, m_converted ? m_inner : m_dstMemory } };
}

void BlockedPoolKernel::run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx)
{
    const Tensor& x = *in[0];
    Tensor& y = *out[0];
    const float* xs = x.view().data();
    // Bounds the kernel before recorded for the input: no NaN in it, and no pass to find one.
    const auto known = m_nanFallback ? recordedBounds(x) : std::nullopt;
    if (m_nanFallback && !known && anyNan(xs, x.size())) {
        // Every element is a value in any of the layouts (whole blocks), so the check reads the
        // buffer as it is; the fallback reads and writes plain.
        const Tensor* plainIn = &x;
        if (m_src >= 0) {
            if (m_plainIn.shape() != m_data) m_plainIn = Tensor(m_data);
            reorderBuffers(srcDesc(m_src), xs, srcDesc(-1), m_plainIn.data());
            plainIn = &m_plainIn;
        }
        if (m_dst >= 0 && m_plainOut.shape() != m_output) m_plainOut = Tensor(m_output);
        Tensor* plainOut = m_dst >= 0 ? &m_plainOut : &y;
        const Tensor* args[] = { plainIn };
        Tensor* outs[] = { plainOut };
        m_nanFallback->run(args, outs, ctx);
        if (m_dst >= 0) reorderBuffers(dstDesc(-1), m_plainOut.view().data(), dstDesc(m_dst), y.data());
        return;
    }
    m_srcMemory.set_data_handle(const_cast<float*>(xs));
    m_dstMemory.set_data_handle(y.data());
    dnnl::stream& s = threadStream();
    m_primitive.execute(s, m_args);
    if (m_converted) m_reorder.execute(s, m_inner, m_dstMemory);
    s.wait();
    if (m_scale != 1.0f) {
        Eigen::Map<Eigen::ArrayXf> v(y.data(), y.size()); // any layout: every element is a value
        v *= m_scale;
    }
}

} // namespace opscope::dnnlutil
