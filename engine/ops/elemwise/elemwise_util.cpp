#include "ops/elemwise/elemwise_util.h"

#include "core/error.h"

#include <Eigen/Core>

namespace opscope::elemwise {

bool elementsPay(std::span<const Shape> out, int64_t minElements)
{
    return !out.empty() && out[0].size() >= minElements;
}

void mergeShape(Shape& merged, const Shape& other, const std::string& what)
{
    if (other.ndim() == 0) return;
    if (merged.ndim() == 0) {
        merged = other;
        return;
    }
    bool ok = merged.ndim() == other.ndim();
    for (int i = 0; ok && i < merged.ndim(); ++i)
        ok = merged[i] == 0 || other[i] == 0 || merged[i] == other[i];
    if (!ok) shapeMismatch(what, merged, other);
    for (int i = 0; i < merged.ndim(); ++i)
        if (merged[i] == 0) merged[i] = other[i];
}

void inferSameShape(std::vector<Shape>& in, std::vector<Shape>& out, std::span<const char* const> names)
{
    Shape merged;
    for (size_t i = 0; i < in.size(); ++i)
        mergeShape(merged, in[i], std::string("input '") + names[i] + "'");
    mergeShape(merged, out[0], "output");
    if (merged.ndim() == 0) return;
    for (Shape& s : in)
        s = merged;
    out[0] = merged;
}

Shape padLeft(const Shape& s, int ndim)
{
    Shape r;
    for (int i = 0; i < ndim - s.ndim(); ++i)
        r.push_back(1);
    for (int64_t d : s.dims())
        r.push_back(d);
    return r;
}

namespace {
dnnl::binary makeBinary(dnnl::algorithm alg, const dnnl::memory::desc& src0, const dnnl::memory::desc& src1,
    const dnnl::memory::desc& dst, bool negateResult)
{
    dnnl::binary::desc desc(alg, src0, src1, dst);
    dnnl::primitive_attr attr;
    if (negateResult) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, -1.0f, 0.0f);
        attr.set_post_ops(ops);
    }
    dnnl::binary::primitive_desc pd(desc, attr, dnnlutil::cpuEngine());
    return dnnl::binary(pd);
}
} // namespace

DnnlBinaryKernel::DnnlBinaryKernel(
    dnnl::algorithm alg, const Shape& src0, const Shape& src1, const Shape& dst, bool swapInputs, bool negateResult)
    : m_src0(dnnlutil::plainDesc(padLeft(src0, dst.ndim())))
    , m_src1(dnnlutil::plainDesc(padLeft(src1, dst.ndim())))
    , m_dst(dnnlutil::plainDesc(dst))
    , m_prim(makeBinary(alg, m_src0, m_src1, m_dst, negateResult))
    , m_swap(swapInputs)
{
}

DnnlBinaryKernel::DnnlBinaryKernel(dnnl::algorithm alg, const Shape& shape, float constant)
    : m_src0(dnnlutil::plainDesc(shape))
    , m_src1(dnnlutil::plainDesc(padLeft(Shape({ 1 }), shape.ndim())))
    , m_dst(m_src0)
    , m_prim(makeBinary(alg, m_src0, m_src1, m_dst, false))
    , m_hasConstant(true)
    , m_constant(constant)
{
}

void DnnlBinaryKernel::run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&)
{
    const dnnl::engine& engine = dnnlutil::cpuEngine();
    dnnl::memory src0, src1;
    if (m_hasConstant) {
        src0 = dnnlutil::wrap(m_src0, *in[0]);
        src1 = dnnl::memory(m_src1, engine, &m_constant);
    } else {
        src0 = dnnlutil::wrap(m_src0, *in[m_swap ? 1 : 0]);
        src1 = dnnlutil::wrap(m_src1, *in[m_swap ? 0 : 1]);
    }
    dnnl::memory dst = dnnlutil::wrap(m_dst, *out[0]);
    dnnl::stream& stream = dnnlutil::threadStream();
    m_prim.execute(stream, { { DNNL_ARG_SRC_0, src0 }, { DNNL_ARG_SRC_1, src1 }, { DNNL_ARG_DST, dst } });
    stream.wait();
}

} // namespace opscope::elemwise
