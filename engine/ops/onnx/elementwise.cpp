// ONNX's element-wise operators of two or more inputs, with NumPy broadcasting: arithmetic (Add,
// Sub, Mul, Div, Pow, Mod, PRelu), comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual:
// bool out), logic (And, Or, Xor), Where, and the variadic Sum, Mean, Max, Min.

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>
#include <span>

namespace opscope {

using namespace onnx_ops;

namespace {

struct Params : OnnxParams {
    bool fmod = false;
};

// Every input's shape broadcast together.
void inferBroadcast(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)
{
    Shape s = in[0];
    for (size_t k = 1; k < in.size(); ++k)
        s = broadcastShapes(s, in[k]);
    out[0] = s;
}

// A two-input operator over `types`, computing f on Calc values; `boolOut`: the result is bool.
template <class F>
void addBinary(OpRegistry& r, const char* name, std::span<const DType> types, bool boolOut, F f)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op](const AttrMap& attrs) {
        auto p = std::make_shared<Params>();
        OnnxAttrs(attrs, op).fillBase(*p, 2, 2);
        return p;
    };
    def.inferShape = inferBroadcast;
    std::vector<DType> allowed(types.begin(), types.end());
    def.inferType = [op, allowed, boolOut](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], allowed, op, 0);
        requireSameType(in, 0, 1, op);
        out[0] = boolOut ? DType::Bool : in[0];
    };
    def.reference = [f, boolOut](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<Params>(p),
            [f, boolOut](const Params&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* a = in[0]->dataAs<T>();
                    const T* b = in[1]->dataAs<T>();
                    if constexpr (std::is_invocable_v<F, Calc<T>, Calc<T>>) {
                        if (boolOut)
                            broadcastBinary(a, in[0]->shape(), b, in[1]->shape(), out[0]->dataAs<bool>(),
                                out[0]->shape(), [&](T x, T y) { return static_cast<bool>(f(load(x), load(y))); });
                        else
                            broadcastBinary(a, in[0]->shape(), b, in[1]->shape(), out[0]->dataAs<T>(),
                                out[0]->shape(), [&](T x, T y) { return store<T>(f(load(x), load(y))); });
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

template <class T> T integerDiv(T a, T b)
{
    if (b == 0) return 0; // undefined in ONNX; never undefined behaviour here
    if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
    return a / b;
}

// Mod: fmod = 0 takes the divisor's sign (Python's %), integers only; fmod = 1 is C's fmod.
template <class T> T modOf(T a, T b, bool fmod)
{
    if constexpr (std::is_floating_point_v<T>) {
        const T m = std::fmod(a, b);
        if (fmod) return m;
        return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
    } else {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<T>)
            if (b == T(-1)) return 0;
        const T m = static_cast<T>(a % b);
        if (fmod) return m;
        if constexpr (std::is_signed_v<T>)
            return (m != 0 && ((m < 0) != (b < 0))) ? static_cast<T>(m + b) : m;
        return m;
    }
}

void addMod(OpRegistry& r)
{
    OpDef def = onnxOp("Mod");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<Params>();
        OnnxAttrs a(attrs, "Mod");
        a.fillBase(*p, 2, 2);
        p->fmod = a.getInt("fmod", 0) != 0;
        return p;
    };
    def.inferShape = inferBroadcast;
    def.inferType = [](const OpParams& p, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "Mod", 0);
        requireSameType(in, 0, 1, "Mod");
        if (isFloatingType(in[0]) && !paramsAs<Params>(p).fmod)
            throw TypeError("Mod of floating-point inputs needs fmod = 1");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<Params>(p),
            [](const Params& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>)
                        broadcastBinary(in[0]->dataAs<T>(), in[0]->shape(), in[1]->dataAs<T>(), in[1]->shape(),
                            out[0]->dataAs<T>(), out[0]->shape(),
                            [&](T x, T y) { return store<T>(modOf(load(x), load(y), q.fmod)); });
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

// Pow: from opset 12 the exponent may have another numeric type than the base.
void addPow(OpRegistry& r)
{
    OpDef def = onnxOp("Pow");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<Params>();
        OnnxAttrs(attrs, "Pow").fillBase(*p, 2, 2);
        return p;
    };
    def.inferShape = inferBroadcast;
    def.inferType = [](const OpParams& p, std::span<const DType> in, std::span<DType> out) {
        const int opset = paramsAs<Params>(p).opset;
        requireType(in[0], opset >= 12 ? std::span<const DType>(kNumericTypes) : std::span<const DType>(kFloatTypes), "Pow", 0);
        requireType(in[1], opset >= 12 ? std::span<const DType>(kNumericTypes) : std::span<const DType>(kFloatTypes), "Pow", 1);
        if (opset < 12) requireSameType(in, 0, 1, "Pow");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<Params>(p),
            [](const Params&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    dispatchType(in[1]->dtype(), [&](auto etag) {
                        using E = decltype(etag);
                        if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<E, bool>)
                            broadcastBinary(in[0]->dataAs<T>(), in[0]->shape(), in[1]->dataAs<E>(), in[1]->shape(),
                                out[0]->dataAs<T>(), out[0]->shape(), [](T x, E y) {
                                    const double v = std::pow(static_cast<double>(load(x)), static_cast<double>(load(y)));
                                    if constexpr (std::is_integral_v<T>) return fromDouble<T>(v);
                                    else return store<T>(v);
                                });
                    });
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

void addWhere(OpRegistry& r)
{
    OpDef def = onnxOp("Where");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<Params>();
        OnnxAttrs(attrs, "Where").fillBase(*p, 3, 3);
        return p;
    };
    def.inferShape = inferBroadcast;
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], std::span<const DType>(&kAllTypes[7], 1), "Where", 0);
        requireSameType(in, 1, 2, "Where");
        out[0] = in[1];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<Params>(p),
            [](const Params&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[1]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    broadcastTernary(in[0]->dataAs<bool>(), in[0]->shape(), in[1]->dataAs<T>(), in[1]->shape(),
                        in[2]->dataAs<T>(), in[2]->shape(), out[0]->dataAs<T>(), out[0]->shape(),
                        [](bool c, T x, T y) { return c ? x : y; });
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

// Sum, Mean, Max, Min over any number of inputs, all broadcast together.
template <class F> void addVariadic(OpRegistry& r, const char* name, std::span<const DType> types, bool mean, F f)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op](const AttrMap& attrs) {
        auto p = std::make_shared<Params>();
        OnnxAttrs(attrs, op).fillBase(*p, 1, 1 << 16);
        return p;
    };
    def.inferShape = inferBroadcast;
    std::vector<DType> allowed(types.begin(), types.end());
    def.inferType = [op, allowed](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], allowed, op, 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), op);
        out[0] = in[0];
    };
    def.reference = [f, mean](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<Params>(p),
            [f, mean](const Params&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        T* o = out[0]->dataAs<T>();
                        const Shape& os = out[0]->shape();
                        broadcastUnary(in[0]->dataAs<T>(), in[0]->shape(), o, os, [](T x) { return x; });
                        for (size_t k = 1; k < in.size(); ++k)
                            broadcastBinary(o, os, in[k]->dataAs<T>(), in[k]->shape(), o, os,
                                [&](T x, T y) { return store<T>(f(load(x), load(y))); });
                        if (mean) {
                            const int64_t n = os.size();
                            const double count = static_cast<double>(in.size());
                            for (int64_t i = 0; i < n; ++i)
                                o[i] = store<T>(static_cast<Calc<T>>(static_cast<double>(load(o[i])) / count));
                        }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

constexpr DType kBool[] = { DType::Bool };

} // namespace

void registerOnnxElementwise(OpRegistry& r)
{
    addBinary(r, "Add", kNumericTypes, false, [](auto a, auto b) { return a + b; });
    addBinary(r, "Sub", kNumericTypes, false, [](auto a, auto b) { return a - b; });
    addBinary(r, "Mul", kNumericTypes, false, [](auto a, auto b) { return a * b; });
    addBinary(r, "Div", kNumericTypes, false, [](auto a, auto b) {
        if constexpr (std::is_integral_v<decltype(a)>)
            return integerDiv(a, b);
        else
            return a / b;
    });
    addBinary(r, "Equal", kAllTypes, true, [](auto a, auto b) { return a == b; });
    addBinary(r, "Less", kNumericTypes, true, [](auto a, auto b) { return a < b; });
    addBinary(r, "Greater", kNumericTypes, true, [](auto a, auto b) { return a > b; });
    addBinary(r, "LessOrEqual", kNumericTypes, true, [](auto a, auto b) { return a <= b; });
    addBinary(r, "GreaterOrEqual", kNumericTypes, true, [](auto a, auto b) { return a >= b; });
    addBinary(r, "And", kBool, true, [](auto a, auto b) { return a && b; });
    addBinary(r, "Or", kBool, true, [](auto a, auto b) { return a || b; });
    addBinary(r, "Xor", kBool, true, [](auto a, auto b) { return a != b; });
    addBinary(r, "PRelu", kNumericTypes, false, [](auto x, auto slope) {
        if constexpr (std::is_same_v<decltype(x), bool> || std::is_unsigned_v<decltype(x)>) return x;
        else return x < 0 ? x * slope : x;
    });
    addMod(r);
    addPow(r);
    addWhere(r);
    addVariadic(r, "Sum", kNumericTypes, false, [](auto a, auto b) { return a + b; });
    addVariadic(r, "Mean", kFloatTypes, true, [](auto a, auto b) { return a + b; });
    addVariadic(r, "Max", kNumericTypes, false, [](auto a, auto b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); });
    addVariadic(r, "Min", kNumericTypes, false, [](auto a, auto b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); });
}

} // namespace opscope
