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

    template <class Fn> OpDef unaryDef(const char* name, Fn fn)
    {
        OpDef d;
        d.name = name;
        d.parse = [](const AttrMap&) { return std::make_shared<NoParams>(); };
        d.numInputs = [](const OpParams&) { return 1; };
        d.numOutputs = [](const OpParams&) { return 1; };
        d.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
            if (in[0].ndim() == 0)
                throw ShapeError("input 'data' has unknown shape");
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
        return d;
    }
}

void registerUnaryActivation(OpRegistry& r)
{
    r.add(unaryDef("relu", [](float v) { return v > 0.0f ? v : 0.0f; }));
    r.add(unaryDef("sigmoid", [](float v) { return 1.0f / (1.0f + std::exp(-v)); }));
    r.add(unaryDef("tanh", [](float v) { return std::tanh(v); }));
    r.add(unaryDef("softsign", [](float v) { return v / (1.0f + std::fabs(v)); }));
}

} // namespace opscope
