// Tensor-with-scalar ops (MXNet 1.x elemwise_binary_scalar_op_basic.cc and _extended.cc):
// _plus_scalar, _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar, _power_scalar.
// Attributes as NumpyBinaryScalarParam: `scalar` (float, default 1) and `is_int` (bool, default
// True; it only selects the output dtype in MXNet, and every tensor here is float32). MXNet casts
// the scalar to the tensor's dtype before applying the op, as done here.

#include "ops/elemwise/binary_kernels.h"
#include "ops/elemwise/elemwise_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <cmath>

namespace opscope {

namespace {
struct ScalarParams : OpParams {
    double scalar = 1.0;
    bool isInt = true;
};

enum class ScalarOp { Plus, Minus, RMinus, Mul, Div, RDiv, Power };

constexpr const char* kInputNames[] = { "data" };

void apply(ScalarOp op, const float* x, float s, float* y, int64_t n)
{
    elemwise::ConstArrayMap a(x, n);
    elemwise::ArrayMap o(y, n);
    switch (op) {
    case ScalarOp::Plus:
        o = a + s;
        break;
    case ScalarOp::Minus:
        o = a - s;
        break;
    case ScalarOp::RMinus:
        o = s - a;
        break;
    case ScalarOp::Mul:
        o = a * s;
        break;
    case ScalarOp::Div:
        o = a / s;
        break;
    case ScalarOp::RDiv:
        o = s / a;
        break;
    case ScalarOp::Power:
        o = a.unaryExpr([s](float v) { return std::pow(v, s); }); // powf, as MXNet and NumPy
        break;
    }
}

// MXNet's gradients: _copy (plus, minus), negative (rminus), _backward_mul_scalar, _div_scalar,
// _backward_rdiv_scalar (rdiv_grad: -s / x²) and _backward_power_scalar (power_grad: s·x^(s-1)).
void backwardScalar(ScalarOp op, const BackwardArgs& a)
{
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    if (!a.outGrad[0]) {
        dx->fill(0);
        return;
    }
    const float s = static_cast<float>(paramsAs<ScalarParams>(a.params).scalar);
    const int64_t n = dx->size();
    elemwise::ConstArrayMap g(a.outGrad[0]->data(), n);
    elemwise::ConstArrayMap x(a.in[0]->data(), n);
    elemwise::ArrayMap d(dx->data(), n);
    switch (op) {
    case ScalarOp::Plus:
    case ScalarOp::Minus:
        d = g;
        break;
    case ScalarOp::RMinus:
        d = -g;
        break;
    case ScalarOp::Mul:
        d = g * s;
        break;
    case ScalarOp::Div:
        d = g / s;
        break;
    case ScalarOp::RDiv:
        d = g * (-s / x.square());
        break;
    case ScalarOp::Power:
        d = g * x.unaryExpr([s](float v) { return std::pow(v, s - 1.0f) * s; });
        break;
    }
}

KernelFactory referenceKernel(ScalarOp op)
{
    return [op](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ScalarParams>(p),
            [op](const ScalarParams& params, std::span<const Tensor* const> in, std::span<Tensor* const> out,
                RunContext&) {
                apply(op, in[0]->data(), static_cast<float>(params.scalar), out[0]->data(), out[0]->size());
            });
    };
}

// Every scalar op is one oneDNN primitive: eltwise_linear (alpha·x + beta, exact for these
// coefficients), eltwise_pow (alpha·x^beta), or a binary division by a held constant (exact,
// where x · (1/s) would not be).
KernelFactory dnnlKernel(ScalarOp op)
{
    return [op](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        using dnnl::algorithm;
        const float s = static_cast<float>(paramsAs<ScalarParams>(p).scalar);
        const Shape& shape = in[0];
        switch (op) {
        case ScalarOp::Plus:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_linear, 1.0f, s);
        case ScalarOp::Minus:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_linear, 1.0f, -s);
        case ScalarOp::RMinus:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_linear, -1.0f, s);
        case ScalarOp::Mul:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_linear, s, 0.0f);
        case ScalarOp::Div:
            return std::make_unique<elemwise::DnnlBinaryKernel>(algorithm::binary_div, shape, s);
        case ScalarOp::RDiv:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_pow, s, -1.0f);
        case ScalarOp::Power:
            return dnnlutil::makeEltwise(shape, algorithm::eltwise_pow, 1.0f, s);
        }
        return nullptr;
    };
}

OpDef scalarOp(const std::string& name, ScalarOp op)
{
    OpDef d;
    d.name = name;
    d.parse = [name](const AttrMap& attrs) {
        AttrReader reader(attrs, name);
        auto p = std::make_shared<ScalarParams>();
        p->scalar = reader.getFloat("scalar", 1.0);
        p->isInt = reader.getBool("is_int", true);
        return p;
    };
    d.numInputs = [](const OpParams&) { return 1; };
    d.numOutputs = [](const OpParams&) { return 1; };
    // MXNet registers no FListInputNames for these ops (its op hook reports `input0`).
    d.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        elemwise::inferSameShape(in, out, kInputNames);
    };
    d.reference = referenceKernel(op);
    d.dnnl = dnnlKernel(op);
    d.dnnlPays = [op](const OpParams&, std::span<const Shape>, std::span<const Shape> out) {
        return elemwise::elementsPay(
            out, op == ScalarOp::Power ? elemwise::kDnnlMinElementsTranscendental : elemwise::kDnnlMinElements);
    };
    d.backward = [op](const BackwardArgs& a) { backwardScalar(op, a); };
    return d;
}
} // namespace

void registerScalarOps(OpRegistry& r)
{
    r.add(scalarOp("_plus_scalar", ScalarOp::Plus), { "_PlusScalar" });
    r.add(scalarOp("_minus_scalar", ScalarOp::Minus), { "_MinusScalar" });
    r.add(scalarOp("_rminus_scalar", ScalarOp::RMinus), { "_RMinusScalar" });
    r.add(scalarOp("_mul_scalar", ScalarOp::Mul), { "_MulScalar" });
    r.add(scalarOp("_div_scalar", ScalarOp::Div), { "_DivScalar" });
    r.add(scalarOp("_rdiv_scalar", ScalarOp::RDiv), { "_RDivScalar" });
    r.add(scalarOp("_power_scalar", ScalarOp::Power), { "_PowerScalar" });
}

} // namespace opscope
