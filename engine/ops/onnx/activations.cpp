// ONNX's activations: Relu, Sigmoid, Tanh, LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish,
// Mish, Softplus, Softsign, ThresholdedRelu, and Clip (bounds as attributes before opset 11, as
// optional inputs from 11, read at run time).

#include "ops/elemwise/clip_value.h"
#include "ops/onnx/activation_values.h"
#include "ops/onnx/register_onnx.h"
#include "ops/onnx/unary_util.h"

#include <cmath>
#include <limits>

namespace opscope {

using namespace onnx_ops;

namespace {

struct ClipParams : OnnxParams {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
};

void addClip(OpRegistry& r)
{
    OpDef def = onnxOp("Clip");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<ClipParams>();
        OnnxAttrs a(attrs, "Clip");
        a.fillBase(*p, 1, 3);
        if (p->opset < 11) {
            p->lo = a.getFloat("min", p->lo);
            p->hi = a.getFloat("max", p->hi);
        }
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        for (size_t k = 1; k < in.size(); ++k)
            if (in[k].size() != 1) throw ShapeError("Clip's bounds must be scalars, got " + in[k].str());
        out[0] = in[0];
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "Clip", 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), "Clip");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ClipParams>(p),
            [](const ClipParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        using C = Calc<T>;
                        C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
                        if constexpr (std::is_floating_point_v<C>) {
                            lo = static_cast<C>(q.lo);
                            hi = static_cast<C>(q.hi);
                        }
                        const int iMin = q.inputIndex(1), iMax = q.inputIndex(2);
                        if (iMin >= 0) lo = load(in[static_cast<size_t>(iMin)]->dataAs<T>()[0]);
                        if (iMax >= 0) hi = load(in[static_cast<size_t>(iMax)]->dataAs<T>()[0]);
                        const T* x = in[0]->dataAs<T>();
                        T* o = out[0]->dataAs<T>();
                        for (int64_t i = 0, n = in[0]->size(); i < n; ++i) {
                            const C v = load(x[i]);
                            o[i] = store<T>(clipValue(v, lo, hi));
                        }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

template <class C> C softplus(C x)
{
    return x > C(20) ? x : std::log1p(std::exp(x));
}

} // namespace

void registerOnnxActivations(OpRegistry& r)
{
    addUnary(r, "Relu", kNumericTypes, [](auto x) { return reluValue(x); });
    addFloatUnary(r, "Sigmoid", [](auto x) { return sigmoidValue(x); });
    addFloatUnary(r, "Tanh", [](auto x) { return std::tanh(x); });
    addFloatUnary(r, "LeakyRelu", [](auto x, const UnaryParams& p) {
        return x < 0 ? static_cast<decltype(x)>(p.a) * x : x; }, { "alpha", 0.01 });
    addFloatUnary(r, "Elu", [](auto x, const UnaryParams& p) {
        return x < 0 ? static_cast<decltype(x)>(p.a) * (std::exp(x) - 1) : x; }, { "alpha", 1.0 });
    addFloatUnary(r, "Selu", [](auto x, const UnaryParams& p) {
        using C = decltype(x);
        return static_cast<C>(p.b) * (x <= 0 ? static_cast<C>(p.a) * (std::exp(x) - 1) : x);
    }, { "alpha", 1.67326319217681884765625, "gamma", 1.05070102214813232421875 });
    addFloatUnary(r, "Celu", [](auto x, const UnaryParams& p) {
        using C = decltype(x);
        const C a = static_cast<C>(p.a);
        return std::max(C(0), x) + std::min(C(0), a * (std::exp(x / a) - 1));
    }, { "alpha", 1.0 });
    addFloatUnary(r, "HardSigmoid", [](auto x, const UnaryParams& p) {
        using C = decltype(x);
        return std::max(C(0), std::min(C(1), static_cast<C>(p.a) * x + static_cast<C>(p.b)));
    }, { "alpha", 0.2, "beta", 0.5 });
    addFloatUnary(r, "HardSwish", [](auto x) {
        using C = decltype(x);
        return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
    });
    addFloatUnary(r, "Softplus", [](auto x) { return softplus(x); });
    addFloatUnary(r, "Softsign", [](auto x) { return x / (decltype(x)(1) + std::abs(x)); });
    addFloatUnary(r, "Mish", [](auto x) { return x * std::tanh(softplus(x)); });
    addFloatUnary(r, "ThresholdedRelu", [](auto x, const UnaryParams& p) {
        return x > static_cast<decltype(x)>(p.a) ? x : decltype(x)(0); }, { "alpha", 1.0 });
    addClip(r);
}

} // namespace opscope
