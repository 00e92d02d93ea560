// elemwise_add, elemwise_sub, elemwise_mul, elemwise_div (MXNet 1.x
// src/operator/tensor/elemwise_binary_op_basic.cc): two inputs of one shape, no attributes.

#include "ops/elemwise/binary_kernels.h"
#include "ops/elemwise/elemwise_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

namespace opscope {

namespace {
struct NoParams : OpParams { };

constexpr const char* kInputNames[] = { "lhs", "rhs" };

template <class Op> KernelFactory sameShapeKernel()
{
    return [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NoParams>(p),
            [](const NoParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const int64_t n = out[0]->size();
                elemwise::ArrayMap(out[0]->data(), n)
                    = Op::vv(elemwise::ConstArrayMap(in[0]->data(), n), elemwise::ConstArrayMap(in[1]->data(), n));
            });
    };
}

KernelFactory dnnlKernel(dnnl::algorithm alg)
{
    return [alg](const OpParams&, std::span<const Shape> in, std::span<const Shape> out) -> std::unique_ptr<Kernel> {
        return std::make_unique<elemwise::DnnlBinaryKernel>(alg, in[0], in[1], out[0]);
    };
}

// Same shapes: each gradient is element by element; a null output gradient gives zeros.
template <class Op> void backwardSameShape(const BackwardArgs& a)
{
    const int64_t n = a.in[0]->size();
    const float* x = a.in[0]->data();
    const float* y = a.in[1]->data();
    const float* g = a.outGrad[0] ? a.outGrad[0]->data() : nullptr;
    if (Tensor* dl = a.inGrad[0]) {
        float* d = dl->data();
        for (int64_t i = 0; i < n; ++i)
            d[i] = g ? Op::gradLhs(g[i], x[i], y[i]) : 0.0f;
    }
    if (Tensor* dr = a.inGrad[1]) {
        float* d = dr->data();
        for (int64_t i = 0; i < n; ++i)
            d[i] = g ? Op::gradRhs(g[i], x[i], y[i]) : 0.0f;
    }
}

template <class Op> OpDef binaryOp(const std::string& name, dnnl::algorithm alg, bool outputNamed)
{
    OpDef d;
    d.name = name;
    d.parse = [](const AttrMap&) { return std::make_shared<NoParams>(); };
    d.numInputs = [](const OpParams&) { return 2; };
    d.numOutputs = [](const OpParams&) { return 1; };
    d.nameInputs({ "lhs", "rhs" });
    // Only elemwise_add registers FListOutputNames ({"output"}) in MXNet 1.x.
    if (outputNamed) d.nameOutputs({ "output" });
    d.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        elemwise::inferSameShape(in, out, kInputNames);
    };
    d.reference = sameShapeKernel<Op>();
    d.dnnl = dnnlKernel(alg);
    d.dnnlPays = [](const OpParams&, std::span<const Shape>, std::span<const Shape> out) {
        return elemwise::elementsPay(out);
    };
    d.backward = backwardSameShape<Op>;
    return d;
}
} // namespace

void registerElemwiseBinary(OpRegistry& r)
{
    using dnnl::algorithm;
    r.add(binaryOp<elemwise::AddOp>("elemwise_add", algorithm::binary_add, true),
        { "_add", "_plus", "_Plus", "_sparse_elemwise_add" });
    r.add(binaryOp<elemwise::SubOp>("elemwise_sub", algorithm::binary_sub, false),
        { "_sub", "_minus", "_Minus", "_sparse_elemwise_sub" });
    r.add(binaryOp<elemwise::MulOp>("elemwise_mul", algorithm::binary_mul, false),
        { "_mul", "_Mul", "_sparse_elemwise_mul" });
    r.add(binaryOp<elemwise::DivOp>("elemwise_div", algorithm::binary_div, false),
        { "_div", "_Div", "_sparse_elemwise_div" });
}

} // namespace opscope
