// MXNet's element-wise activation functions as operators of their own (relu, sigmoid, tanh,
// softsign: mshadow_op in elemwise_unary_op_basic.cc / _trig.cc), as `F.tanh(x)` calls them.
// Like every MXNET_OPERATOR_REGISTER_UNARY op they register no slot names: `input0` and `0`.

#include "core/error.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <cmath>

namespace opscope {

namespace {
struct NoParams : OpParams { };

// `grad(x, y)` is f'(x) from the input or the output, as MXNet's _backward_<op> reads them;
// the input's gradient is g · f'.
template <class Fn, class Grad> OpDef unaryDef(const char* name, Fn fn, Grad grad)
{
    OpDef d;
    d.name = name;
    d.parse = [](const AttrMap&) { return std::make_shared<NoParams>(); };
    d.numInputs = [](const OpParams&) { return 1; };
    d.numOutputs = [](const OpParams&) { return 1; };
    d.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() == 0) throw ShapeError("input 'data' has unknown shape");
        out[0] = in[0];
    };
    d.reference = [fn](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NoParams>(p),
            [fn](const NoParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Eigen::Map<const Eigen::ArrayXf> x(in[0]->data(), in[0]->size());
                Eigen::Map<Eigen::ArrayXf> y(out[0]->data(), out[0]->size());
                y = x.unaryExpr(fn);
            });
    };
    d.backward = [grad](const BackwardArgs& a) {
        Tensor* dx = a.inGrad[0];
        if (!dx) return;
        if (!a.outGrad[0]) {
            dx->fill(0);
            return;
        }
        const float* x = a.in[0]->data();
        const float* y = a.out[0]->data();
        const float* g = a.outGrad[0]->data();
        float* d = dx->data();
        for (int64_t i = 0; i < dx->size(); ++i)
            d[i] = g[i] * grad(x[i], y[i]);
    };
    return d;
}
} // namespace

void registerUnaryActivation(OpRegistry& r)
{
    // relu, sigmoid and tanh differentiate from the output, softsign from the input (mshadow_op's
    // relu_grad, sigmoid_grad, tanh_grad, softsign_grad).
    r.add(unaryDef(
        "relu", [](float v) { return v > 0.0f ? v : 0.0f; }, [](float, float y) { return y > 0.0f ? 1.0f : 0.0f; }));
    r.add(unaryDef(
        "sigmoid", [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
        [](float, float y) { return y * (1.0f - y); }));
    r.add(unaryDef(
        "tanh", [](float v) { return std::tanh(v); }, [](float, float y) { return 1.0f - y * y; }));
    r.add(unaryDef(
        "softsign", [](float v) { return v / (1.0f + std::fabs(v)); },
        [](float x, float) { return 1.0f / ((1.0f + std::fabs(x)) * (1.0f + std::fabs(x))); }));
}

} // namespace opscope
