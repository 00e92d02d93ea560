// Unary math ops (MXNet 1.x elemwise_unary_op_basic.cc, _logexp.cc, _pow.cc, matrix_op.cc for
// clip): exp, log, sqrt, square, abs, negative, clip(a_min, a_max). IEEE semantics throughout, as
// MXNet and NumPy: log of a negative number is NaN, log(0) is -inf, sqrt of a negative is NaN.

#include "ops/elemwise/binary_kernels.h"
#include "ops/elemwise/elemwise_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <cmath>

namespace opscope {

namespace {
enum class UnaryOp { Exp, Log, Sqrt, Square, Abs, Negative, Clip };

struct UnaryParams : OpParams {
    // clip only (MXNet's ClipParam: both required).
    float aMin = 0.0f;
    float aMax = 0.0f;
};

constexpr const char* kInputNames[] = { "data" };

void apply(UnaryOp op, const UnaryParams& p, const float* x, float* y, int64_t n)
{
    elemwise::ConstArrayMap a(x, n);
    elemwise::ArrayMap o(y, n);
    switch (op) {
    // libm rather than Eigen's vectorised versions, which return 2.9e-39 for exp(-inf),
    // NaN for sqrt(+inf) and a wrong log of subnormals; glibc's expf is as fast here.
    case UnaryOp::Exp:
        o = a.unaryExpr([](float v) { return std::exp(v); });
        break;
    case UnaryOp::Log:
        o = a.unaryExpr([](float v) { return std::log(v); });
        break;
    case UnaryOp::Sqrt:
        o = a.unaryExpr([](float v) { return std::sqrt(v); });
        break;
    case UnaryOp::Square:
        o = a.square();
        break;
    case UnaryOp::Abs:
        o = a.abs();
        break;
    case UnaryOp::Negative:
        o = -a;
        break;
    case UnaryOp::Clip:
        // mshadow_op::clip: x > a_max ? a_max : (x < a_min ? a_min : x); NaN passes through.
        o = (a > p.aMax).select(p.aMax, (a < p.aMin).select(p.aMin, a));
        break;
    }
}

// MXNet's gradients: exp and sqrt from the output (_mul, _backward_sqrt: 0.5 / y), the others from
// the input (_backward_log: 1/x, _backward_square: 2x, _backward_abs: sign(x), negative, and
// _backward_clip, which passes g on the closed [a_min, a_max] and for NaN).
void backwardUnary(UnaryOp op, const BackwardArgs& a)
{
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    if (!a.outGrad[0]) {
        dx->fill(0);
        return;
    }
    const auto& p = paramsAs<UnaryParams>(a.params);
    const int64_t n = dx->size();
    elemwise::ConstArrayMap g(a.outGrad[0]->data(), n);
    elemwise::ConstArrayMap x(a.in[0]->data(), n);
    elemwise::ConstArrayMap y(a.out[0]->data(), n);
    elemwise::ArrayMap d(dx->data(), n);
    switch (op) {
    case UnaryOp::Exp:
        d = g * y;
        break;
    case UnaryOp::Log:
        d = g * (1.0f / x);
        break;
    case UnaryOp::Sqrt:
        d = g * (0.5f / y);
        break;
    case UnaryOp::Square:
        d = g * (2.0f * x);
        break;
    case UnaryOp::Abs:
        d = g * x.unaryExpr([](float v) { return v < 0.0f ? -1.0f : (v > 0.0f ? 1.0f : 0.0f); });
        break;
    case UnaryOp::Negative:
        d = -g;
        break;
    case UnaryOp::Clip:
        d = (x > p.aMax || x < p.aMin).select(0.0f, g);
        break;
    }
}

KernelFactory referenceKernel(UnaryOp op)
{
    return [op](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<UnaryParams>(p),
            [op](const UnaryParams& params, std::span<const Tensor* const> in, std::span<Tensor* const> out,
                RunContext&) { apply(op, params, in[0]->data(), out[0]->data(), out[0]->size()); });
    };
}

KernelFactory dnnlKernel(UnaryOp op)
{
    return [op](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        using dnnl::algorithm;
        const auto& params = paramsAs<UnaryParams>(p);
        auto make = [&](algorithm alg, float alpha, float beta, bool keepNaN = false) {
            return dnnlutil::makeEltwise(in[0], alg, alpha, beta, 1.0f, keepNaN);
        };
        switch (op) {
        case UnaryOp::Exp:
            return make(algorithm::eltwise_exp, 0.0f, 0.0f, true);
        case UnaryOp::Log:
            return make(algorithm::eltwise_log, 0.0f, 0.0f);
        case UnaryOp::Sqrt:
            return make(algorithm::eltwise_sqrt, 0.0f, 0.0f);
        case UnaryOp::Square:
            return make(algorithm::eltwise_square, 0.0f, 0.0f);
        case UnaryOp::Abs:
            return make(algorithm::eltwise_abs, 0.0f, 0.0f);
        case UnaryOp::Negative:
            return make(algorithm::eltwise_linear, -1.0f, 0.0f);
        case UnaryOp::Clip:
            // oneDNN computes min(max(x, a_min), a_max): MXNet's order differs when a_min > a_max.
            if (params.aMin > params.aMax) return nullptr;
            return make(algorithm::eltwise_clip, params.aMin, params.aMax, true);
        }
        return nullptr;
    };
}

OpDef unaryOp(const std::string& name, UnaryOp op)
{
    OpDef d;
    d.name = name;
    d.parse = [name, op](const AttrMap& attrs) {
        auto p = std::make_shared<UnaryParams>();
        if (op == UnaryOp::Clip) {
            AttrReader reader(attrs, name);
            p->aMin = static_cast<float>(reader.getFloat("a_min"));
            p->aMax = static_cast<float>(reader.getFloat("a_max"));
        }
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
    const bool transcendental = op == UnaryOp::Exp || op == UnaryOp::Log;
    d.dnnlPays = [transcendental](const OpParams&, std::span<const Shape>, std::span<const Shape> out) {
        return elemwise::elementsPay(
            out, transcendental ? elemwise::kDnnlMinElementsTranscendental : elemwise::kDnnlMinElements);
    };
    d.backward = [op](const BackwardArgs& a) { backwardUnary(op, a); };
    return d;
}
} // namespace

void registerUnary(OpRegistry& r)
{
    r.add(unaryOp("exp", UnaryOp::Exp));
    r.add(unaryOp("log", UnaryOp::Log));
    r.add(unaryOp("sqrt", UnaryOp::Sqrt));
    r.add(unaryOp("square", UnaryOp::Square));
    r.add(unaryOp("abs", UnaryOp::Abs));
    r.add(unaryOp("negative", UnaryOp::Negative));
    r.add(unaryOp("clip", UnaryOp::Clip));
}

} // namespace opscope
