#include "ops/dnnl/dnnl_common.h"

#include "core/error.h"

#include <Eigen/Core>

#include <map>
#include <mutex>
#include <sstream>

namespace opscope::dnnlutil {

dnnl::engine& cpuEngine()
{
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

dnnl::stream& threadStream()
{
    thread_local dnnl::stream stream(cpuEngine());
    return stream;
}

dnnl::memory::dims toDims(const Shape& shape)
{
    dnnl::memory::dims d;
    for (int64_t v : shape.dims())
        d.push_back(v);
    return d;
}

namespace {
    // Every layout named so far, by key: a kernel told another kernel's layout (Kernel::outputIn)
    // finds the descriptor. A few dozen per model, each a few hundred bytes.
    std::map<std::string, dnnl::memory::desc>& layouts()
    {
        static std::map<std::string, dnnl::memory::desc> byKey;
        return byKey;
    }
    std::mutex& layoutsMutex()
    {
        static std::mutex m;
        return m;
    }
}

NativeLayout nativeLayout(const dnnl::memory::desc& desc, const dnnl::memory::desc& plain)
{
    if (desc == plain) return {};
    const dnnl_memory_desc_t& d = desc.data;
    std::ostringstream key;
    key << 't' << static_cast<int>(d.data_type) << 'k' << static_cast<int>(d.format_kind) << 'o' << d.offset0;
    const auto list = [&key](char name, const dnnl_dim_t* values, int count) {
        key << name;
        for (int i = 0; i < count; ++i)
            key << values[i] << ',';
    };
    list('d', d.dims, d.ndims);
    list('p', d.padded_dims, d.ndims);
    list('q', d.padded_offsets, d.ndims);
    if (d.format_kind == dnnl_blocked) {
        const dnnl_blocking_desc_t& b = d.format_desc.blocking;
        list('s', b.strides, d.ndims);
        list('b', b.inner_blks, b.inner_nblks);
        list('i', b.inner_idxs, b.inner_nblks);
    }
    key << 'x' << d.extra.flags;
    NativeLayout layout { key.str(), static_cast<int64_t>(desc.get_size()) };
    {
        const std::lock_guard<std::mutex> lock(layoutsMutex());
        layouts().try_emplace(layout.key, desc);
    }
    return layout;
}

std::optional<dnnl::memory::desc> layoutDesc(const std::string& key)
{
    const std::lock_guard<std::mutex> lock(layoutsMutex());
    const auto it = layouts().find(key);
    if (it == layouts().end()) return std::nullopt;
    return it->second;
}

dnnl::memory::desc plainDesc(const Shape& shape)
{
    using tag = dnnl::memory::format_tag;
    static const tag tags[] = { tag::a, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde, tag::abcdef };
    if (shape.ndim() < 1 || shape.ndim() > 6)
        throw ShapeError("oneDNN memory of rank " + std::to_string(shape.ndim()) + " is not supported");
    return { toDims(shape), dnnl::memory::data_type::f32, tags[shape.ndim()] };
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& t)
{
    return dnnl::memory(desc, cpuEngine(), t.data());
}

SrcDstKernel::SrcDstKernel(
    dnnl::primitive primitive, const dnnl::memory::desc& src, const dnnl::memory::desc& dst, float scale, bool keepNaN)
    : m_primitive(std::move(primitive))
    , m_src(src, cpuEngine(), DNNL_MEMORY_NONE)
    , m_dst(dst, cpuEngine(), DNNL_MEMORY_NONE)
    , m_args { { DNNL_ARG_SRC, m_src }, { DNNL_ARG_DST, m_dst } }
    , m_scale(scale)
    , m_keepNaN(keepNaN)
{
}

void SrcDstKernel::run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&)
{
    // Computed in place, the NaNs of the input would be gone before they could be restored.
    const Tensor x = m_keepNaN && in[0]->data() == out[0]->data() ? in[0]->copy() : *in[0];
    m_src.set_data_handle(x.data());
    m_dst.set_data_handle(out[0]->data());
    dnnl::stream& s = threadStream();
    m_primitive.execute(s, m_args);
    s.wait();
    Eigen::Map<Eigen::ArrayXf> y(out[0]->data(), out[0]->size());
    if (m_scale != 1.0f) y *= m_scale;
    if (m_keepNaN && x.size() == out[0]->size()) { // eltwise: one value out for each value in
        const Eigen::Map<const Eigen::ArrayXf> a(x.data(), x.size());
        y = a.isNaN().select(a, y);
    }
}

std::unique_ptr<Kernel> makeEltwise(
    const Shape& shape, dnnl::algorithm alg, float alpha, float beta, float scale, bool keepNaN)
{
    const dnnl::memory::desc desc = plainDesc(Shape({ shape.size() }));
    const dnnl::eltwise_forward::desc op(dnnl::prop_kind::forward_inference, alg, desc, alpha, beta);
    return std::make_unique<SrcDstKernel>(
        dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(op, cpuEngine())), desc, desc, scale, keepNaN);
}

} // namespace opscope::dnnlutil
