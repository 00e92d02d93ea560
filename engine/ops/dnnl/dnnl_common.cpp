#include "ops/dnnl/dnnl_common.h"

#include "core/error.h"

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

} // namespace opscope::dnnlutil
