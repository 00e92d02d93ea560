#pragma once

// Registration of ONNX's element-wise operators of one input: f runs on each element in its
// computing type (float for float16), with up to two float attributes (alpha, beta…) when f takes
// the parameters as its second argument.

#include "ops/onnx/onnx_kernels.h"
#include "ops/registry.h"

#include <span>
#include <string>
#include <vector>

namespace opscope::onnx_ops {

struct UnaryParams : OnnxParams {
    double a = 0;
    double b = 0;
};

struct UnaryAttrs {
    const char* a = nullptr;
    double defaultA = 0;
    const char* b = nullptr;
    double defaultB = 0;
};

/// Registers `name` over `types`; the output has `outType` (or the input's type when outType is
/// empty).
template <bool FloatOnly, class F>
void addUnaryImpl(OpRegistry& r, const char* name, std::span<const DType> types, std::optional<DType> outType,
    UnaryAttrs attrs, F f)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, attrs](const AttrMap& map) {
        auto p = std::make_shared<UnaryParams>();
        OnnxAttrs a(map, op);
        a.fillBase(*p, 1, 1);
        if (attrs.a) p->a = a.getFloat(attrs.a, attrs.defaultA);
        if (attrs.b) p->b = a.getFloat(attrs.b, attrs.defaultB);
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
    std::vector<DType> allowed(types.begin(), types.end());
    def.inferType = [op, allowed, outType](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], allowed, op, 0);
        out[0] = outType ? *outType : in[0];
    };
    def.reference = [f, outType](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<UnaryParams>(p),
            [f, outType](const UnaryParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out,
                RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!FloatOnly || std::is_floating_point_v<Calc<T>>) {
                    const T* x = in[0]->dataAs<T>();
                    const int64_t n = in[0]->size();
                    auto apply = [&](Calc<T> v) {
                        if constexpr (std::is_invocable_v<F, Calc<T>>)
                            return f(v);
                        else if constexpr (std::is_invocable_v<F, Calc<T>, const UnaryParams&>)
                            return f(v, q);
                        else
                            return v;
                    };
                    if (outType == DType::Bool) {
                        bool* o = out[0]->dataAs<bool>();
                        for (int64_t i = 0; i < n; ++i)
                            o[i] = static_cast<bool>(apply(load(x[i])));
                    } else {
                        T* o = out[0]->dataAs<T>();
                        for (int64_t i = 0; i < n; ++i)
                            o[i] = store<T>(apply(load(x[i])));
                    }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

template <class F> void addUnary(OpRegistry& r, const char* name, std::span<const DType> types, F f, UnaryAttrs attrs = {})
{
    addUnaryImpl<false>(r, name, types, std::nullopt, attrs, f);
}

/// For operators of floating-point types only: f is instantiated for float and double alone.
template <class F> void addFloatUnary(OpRegistry& r, const char* name, F f, UnaryAttrs attrs = {})
{
    addUnaryImpl<true>(r, name, kFloatTypes, std::nullopt, attrs, f);
}

template <class F> void addUnaryTo(OpRegistry& r, const char* name, std::span<const DType> types, DType out, F f)
{
    addUnaryImpl<true>(r, name, types, out, {}, f);
}

} // namespace opscope::onnx_ops
