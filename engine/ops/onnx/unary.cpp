// ONNX's element-wise operators of one input: math (Abs … Erf), IsNaN, IsInf, Not, and the
// operators that pass values on: Identity, Cast, CastLike, Dropout (inference).

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/onnx/unary_util.h"
#include "ops/registry.h"
#include "io/onnx_tensor.h"

#include <cmath>
#include <cstring>

namespace opscope {

using namespace onnx_ops;

namespace {

struct CastParams : OnnxParams {
    DType to = DType::Float32;
};

struct IsInfParams : OnnxParams {
    bool positive = true, negative = true;
};

void sameShape(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)
{
    for (Shape& s : out)
        s = in[0];
}

// Copies or converts every element of `src` into `dst` (same size).
void convert(const Tensor& src, const Tensor& dst)
{
    if (src.dtype() == dst.dtype()) {
        if (src.bytes()) std::memcpy(dst.raw(), src.raw(), src.bytes());
        return;
    }
    const int64_t n = src.size();
    dispatchType(src.dtype(), [&](auto from) {
        using S = decltype(from);
        const S* s = src.dataAs<S>();
        dispatchType(dst.dtype(), [&](auto to) {
            using D = decltype(to);
            D* d = dst.dataAs<D>();
            for (int64_t i = 0; i < n; ++i) {
                if constexpr (std::is_integral_v<S> && std::is_integral_v<D> && !std::is_same_v<D, bool>)
                    d[i] = static_cast<D>(s[i]); // integer to integer wraps, as NumPy and ONNX Runtime do
                else if constexpr (std::is_floating_point_v<Calc<S>> && std::is_integral_v<D> && !std::is_same_v<D, bool>)
                    d[i] = static_cast<D>(static_cast<int64_t>(fromDouble<int64_t>(static_cast<double>(load(s[i])))));
                else
                    d[i] = fromDouble<D>(toDouble(s[i]));
            }
        });
    });
}

void addCast(OpRegistry& r)
{
    OpDef def = onnxOp("Cast");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<CastParams>();
        OnnxAttrs a(attrs, "Cast");
        a.fillBase(*p, 1, 1);
        const int64_t code = a.getInt("to");
        const auto t = dtypeFromOnnx(static_cast<int>(code));
        if (!t) a.fail("to", "element type " + onnxTypeName(static_cast<int>(code)) + " is not supported");
        p->to = *t;
        return p;
    };
    def.inferShape = sameShape;
    def.inferType = [](const OpParams& p, std::span<const DType>, std::span<DType> out) {
        out[0] = paramsAs<CastParams>(p).to;
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<CastParams>(p),
            [](const CastParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                convert(*in[0], *out[0]);
            });
    };
    addOnnxOp(r, std::move(def));

    OpDef like = onnxOp("CastLike");
    like.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<CastParams>();
        OnnxAttrs(attrs, "CastLike").fillBase(*p, 2, 2);
        return p;
    };
    like.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
    like.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[1]; };
    like.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<CastParams>(p),
            [](const CastParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                convert(*in[0], *out[0]);
            });
    };
    addOnnxOp(r, std::move(like));
}

// Identity, and Dropout at inference: the input passes unchanged; Dropout's optional mask is all true.
void addPassThrough(OpRegistry& r, const char* name, int maxInputs, int maxOutputs)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, maxInputs, maxOutputs](const AttrMap& attrs) {
        auto p = std::make_shared<OnnxParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 1, maxInputs, maxOutputs);
        if (op == "Dropout") {
            const auto training = a.inputInts(2);
            if (p->hasInput(2) && (!training || (!training->empty() && (*training)[0] != 0)))
                a.fail("__in2__", "training_mode must be a constant false: opscope runs ONNX models for inference");
        }
        return p;
    };
    def.inferShape = sameShape;
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        out[0] = in[0];
        if (out.size() > 1) out[1] = DType::Bool;
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<OnnxParams>(p),
            [](const OnnxParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                if (in[0]->bytes()) std::memcpy(out[0]->raw(), in[0]->raw(), in[0]->bytes());
                if (out.size() > 1) std::fill_n(out[1]->dataAs<bool>(), out[1]->size(), true);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addIsInf(OpRegistry& r)
{
    OpDef def = onnxOp("IsInf");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<IsInfParams>();
        OnnxAttrs a(attrs, "IsInf");
        a.fillBase(*p, 1, 1);
        p->positive = a.getInt("detect_positive", 1) != 0;
        p->negative = a.getInt("detect_negative", 1) != 0;
        return p;
    };
    def.inferShape = sameShape;
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, "IsInf", 0);
        out[0] = DType::Bool;
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IsInfParams>(p),
            [](const IsInfParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* x = in[0]->dataAs<T>();
                    bool* o = out[0]->dataAs<bool>();
                    for (int64_t i = 0, n = in[0]->size(); i < n; ++i) {
                        const double v = toDouble(x[i]);
                        o[i] = std::isinf(v) && ((v > 0 && q.positive) || (v < 0 && q.negative));
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

constexpr DType kSigned[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32, DType::Int8 };
constexpr DType kBool[] = { DType::Bool };

} // namespace

void registerOnnxUnary(OpRegistry& r)
{
    using std::abs;
    addUnary(r, "Abs", kNumericTypes, [](auto x) {
        if constexpr (std::is_unsigned_v<decltype(x)>) return x;
        else return x < 0 ? -x : x;
    });
    addUnary(r, "Neg", kSigned, [](auto x) { return -x; });
    addUnary(r, "Sign", kNumericTypes, [](auto x) {
        using C = decltype(x);
        if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>) return static_cast<C>(x != 0);
        else return x > 0 ? C(1) : x < 0 ? C(-1) : C(0);
    });
    addFloatUnary(r, "Exp", [](auto x) { return std::exp(x); });
    addFloatUnary(r, "Log", [](auto x) { return std::log(x); });
    addFloatUnary(r, "Sqrt", [](auto x) { return std::sqrt(x); });
    addFloatUnary(r, "Reciprocal", [](auto x) { return decltype(x)(1) / x; });
    addFloatUnary(r, "Floor", [](auto x) { return std::floor(x); });
    addFloatUnary(r, "Ceil", [](auto x) { return std::ceil(x); });
    addFloatUnary(r, "Round", [](auto x) { return std::nearbyint(x); }); // half to even
    addFloatUnary(r, "Sin", [](auto x) { return std::sin(x); });
    addFloatUnary(r, "Cos", [](auto x) { return std::cos(x); });
    addFloatUnary(r, "Tan", [](auto x) { return std::tan(x); });
    addFloatUnary(r, "Asin", [](auto x) { return std::asin(x); });
    addFloatUnary(r, "Acos", [](auto x) { return std::acos(x); });
    addFloatUnary(r, "Atan", [](auto x) { return std::atan(x); });
    addFloatUnary(r, "Sinh", [](auto x) { return std::sinh(x); });
    addFloatUnary(r, "Cosh", [](auto x) { return std::cosh(x); });
    addFloatUnary(r, "Asinh", [](auto x) { return std::asinh(x); });
    addFloatUnary(r, "Acosh", [](auto x) { return std::acosh(x); });
    addFloatUnary(r, "Atanh", [](auto x) { return std::atanh(x); });
    addUnary(r, "Erf", kNumericTypes, [](auto x) {
        if constexpr (std::is_integral_v<decltype(x)>) return static_cast<decltype(x)>(std::erf(static_cast<double>(x)));
        else return std::erf(x);
    });
    addUnary(r, "Not", kBool, [](auto x) { return !x; });
    addUnaryTo(r, "IsNaN", kFloatTypes, DType::Bool, [](auto x) { return x != x; });
    addIsInf(r);
    addCast(r);
    addPassThrough(r, "Identity", 1, 1);
    addPassThrough(r, "Dropout", 3, 2);
}

} // namespace opscope
