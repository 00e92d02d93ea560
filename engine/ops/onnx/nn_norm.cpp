// ONNX's normalisations: BatchNormalization (inference, with the given statistics),
// InstanceNormalization, LayerNormalization (opset 17; optional Mean and InvStdDev outputs), LRN.

#include "ops/onnx/nn_util.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>

namespace opscope {

using namespace onnx_ops;

namespace {

struct NormParams : OnnxParams {
    double epsilon = 1e-5;
    int64_t axis = -1;
    double alpha = 1e-4, beta = 0.75, bias = 1.0;
    int64_t size = 1;
};

void addBatchNorm(OpRegistry& r)
{
    OpDef def = onnxOp("BatchNormalization");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<NormParams>();
        OnnxAttrs a(attrs, "BatchNormalization");
        a.fillBase(*p, 5, 5, 5);
        p->epsilon = a.getFloat("epsilon", 1e-5);
        if (a.getInt("training_mode", 0) != 0 || p->numOutputs > 1)
            a.fail(p->numOutputs > 1 ? "__noutputs__" : "training_mode",
                "training is not supported (the outputs beyond Y exist only in training): opscope runs ONNX models for inference");
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        const Shape& x = in[0];
        if (x.ndim() < 2) throw ShapeError("BatchNormalization: input " + x.str() + " needs (N, C, …)");
        for (size_t k = 1; k < 5; ++k)
            if (in[k].ndim() != 1 || in[k][0] != x[1]) shapeMismatch("BatchNormalization input " + std::to_string(k), Shape({ x[1] }), in[k]);
        out[0] = x;
        for (size_t k = 1; k < out.size(); ++k)
            out[k] = Shape({ x[1] });
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, "BatchNormalization", 0);
        for (int k = 1; k < 5; ++k)
            requireType(in[static_cast<size_t>(k)], kFloatTypes, "BatchNormalization", k);
        for (size_t k = 0; k < out.size(); ++k)
            out[k] = k == 0 ? in[0] : in[1];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NormParams>(p),
            [](const NormParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& xs = in[0]->shape();
                const int64_t N = xs[0], C = xs[1], inner = xs.product(2, xs.ndim());
                const TensorView scale = in[1]->view(), bias = in[2]->view(), mean = in[3]->view(), var = in[4]->view();
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (std::is_floating_point_v<Calc<T>>) {
                        const T* x = in[0]->dataAs<T>();
                        T* y = out[0]->dataAs<T>();
                        for (int64_t c = 0; c < C; ++c) {
                            const double a = scale.valueAt(c) / std::sqrt(var.valueAt(c) + q.epsilon);
                            const double b = bias.valueAt(c) - a * mean.valueAt(c);
                            for (int64_t n = 0; n < N; ++n) {
                                const int64_t base = (n * C + c) * inner;
                                for (int64_t i = 0; i < inner; ++i)
                                    y[base + i] = store<T>(static_cast<Calc<T>>(a * static_cast<double>(load(x[base + i])) + b));
                            }
                        }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

// Normalises groups of `len` consecutive elements: y = (x - mean) / sqrt(var + eps) * scale + bias,
// with scale and bias indexed by `affineIndex(group, i)`.
template <class T, class Affine>
void normalizeRows(const T* x, T* y, int64_t groups, int64_t len, double eps, Affine affine, double* means, double* inv)
{
    for (int64_t g = 0; g < groups; ++g) {
        const T* row = x + g * len;
        double mean = 0, sq = 0;
        for (int64_t i = 0; i < len; ++i)
            mean += static_cast<double>(load(row[i]));
        mean /= static_cast<double>(len ? len : 1);
        for (int64_t i = 0; i < len; ++i) {
            const double d = static_cast<double>(load(row[i])) - mean;
            sq += d * d;
        }
        const double invStd = 1.0 / std::sqrt(sq / static_cast<double>(len ? len : 1) + eps);
        if (means) means[g] = mean;
        if (inv) inv[g] = invStd;
        for (int64_t i = 0; i < len; ++i) {
            const auto [s, b] = affine(g, i);
            y[g * len + i] = store<T>(static_cast<Calc<T>>((static_cast<double>(load(row[i])) - mean) * invStd * s + b));
        }
    }
}

void addInstanceNorm(OpRegistry& r)
{
    OpDef def = onnxOp("InstanceNormalization");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<NormParams>();
        OnnxAttrs a(attrs, "InstanceNormalization");
        a.fillBase(*p, 3, 3);
        p->epsilon = a.getFloat("epsilon", 1e-5);
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() < 3) throw ShapeError("InstanceNormalization: input " + in[0].str() + " needs (N, C, spatial…)");
        for (size_t k = 1; k < 3; ++k)
            if (in[k].ndim() != 1 || in[k][0] != in[0][1]) shapeMismatch("InstanceNormalization input " + std::to_string(k), Shape({ in[0][1] }), in[k]);
        out[0] = in[0];
    };
    def.inferType = floatTypesAllSame("InstanceNormalization");
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NormParams>(p),
            [](const NormParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& xs = in[0]->shape();
                const int64_t C = xs[1], len = xs.product(2, xs.ndim());
                const TensorView scale = in[1]->view(), bias = in[2]->view();
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (std::is_floating_point_v<Calc<T>>)
                        normalizeRows(in[0]->dataAs<T>(), out[0]->dataAs<T>(), xs[0] * C, len, q.epsilon,
                            [&](int64_t g, int64_t) { return std::pair { scale.valueAt(g % C), bias.valueAt(g % C) }; },
                            nullptr, nullptr);
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

void addLayerNorm(OpRegistry& r)
{
    OpDef def = onnxOp("LayerNormalization");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<NormParams>();
        OnnxAttrs a(attrs, "LayerNormalization");
        a.fillBase(*p, 2, 3, 3);
        p->epsilon = a.getFloat("epsilon", 1e-5);
        p->axis = a.getInt("axis", -1);
        return p;
    };
    def.inferShape = [](const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out) {
        const int axis = normalizeAxis(paramsAs<NormParams>(params).axis, in[0].ndim(), "LayerNormalization");
        const int64_t len = in[0].product(axis, in[0].ndim());
        for (size_t k = 1; k < in.size(); ++k)
            if (in[k].size() != len && in[k].size() != 1)
                throw ShapeError("LayerNormalization: input " + std::to_string(k) + " " + in[k].str() + " does not match the normalised dimensions of " + in[0].str());
        out[0] = in[0];
        Shape stat = in[0];
        for (int d = axis; d < stat.ndim(); ++d)
            stat[d] = 1;
        for (size_t k = 1; k < out.size(); ++k)
            out[k] = stat;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, "LayerNormalization", 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), "LayerNormalization");
        out[0] = in[0];
        for (size_t k = 1; k < out.size(); ++k)
            out[k] = DType::Float32; // ONNX's stash_type: float32
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NormParams>(p),
            [](const NormParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& xs = in[0]->shape();
                const int axis = normalizeAxis(q.axis, xs.ndim(), "LayerNormalization");
                const int64_t groups = xs.product(0, axis), len = xs.product(axis, xs.ndim());
                const TensorView scale = in[1]->view();
                const int ib = q.inputIndex(2);
                const TensorView bias = ib >= 0 ? in[static_cast<size_t>(ib)]->view() : TensorView();
                std::vector<double> means(static_cast<size_t>(groups)), inv(static_cast<size_t>(groups));
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (std::is_floating_point_v<Calc<T>>)
                        normalizeRows(in[0]->dataAs<T>(), out[0]->dataAs<T>(), groups, len, q.epsilon,
                            [&](int64_t, int64_t i) {
                                return std::pair { scale.valueAt(scale.size() == 1 ? 0 : i),
                                    ib >= 0 ? bias.valueAt(bias.size() == 1 ? 0 : i) : 0.0 };
                            },
                            means.data(), inv.data());
                });
                for (size_t k = 1; k < out.size(); ++k)
                    for (int64_t g = 0; g < groups; ++g)
                        out[k]->dataAs<float>()[g] = static_cast<float>(k == 1 ? means[static_cast<size_t>(g)] : inv[static_cast<size_t>(g)]);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addLrn(OpRegistry& r)
{
    OpDef def = onnxOp("LRN");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<NormParams>();
        OnnxAttrs a(attrs, "LRN");
        a.fillBase(*p, 1, 1);
        p->alpha = a.getFloat("alpha", 1e-4);
        p->beta = a.getFloat("beta", 0.75);
        p->bias = a.getFloat("bias", 1.0);
        p->size = a.getInt("size");
        if (p->size < 1) a.fail("size", "must be positive");
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() < 3) throw ShapeError("LRN: input " + in[0].str() + " needs (N, C, spatial…)");
        out[0] = in[0];
    };
    def.inferType = floatTypesAllSame("LRN");
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<NormParams>(p),
            [](const NormParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& xs = in[0]->shape();
                const int64_t N = xs[0], C = xs[1], inner = xs.product(2, xs.ndim());
                const int64_t before = (q.size - 1) / 2, after = q.size - 1 - before;
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (std::is_floating_point_v<Calc<T>>) {
                        const T* x = in[0]->dataAs<T>();
                        T* y = out[0]->dataAs<T>();
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = 0; c < C; ++c)
                                for (int64_t i = 0; i < inner; ++i) {
                                    double sq = 0;
                                    for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(C - 1, c + after); ++j) {
                                        const double v = static_cast<double>(load(x[(n * C + j) * inner + i]));
                                        sq += v * v;
                                    }
                                    const int64_t at = (n * C + c) * inner + i;
                                    y[at] = store<T>(static_cast<Calc<T>>(static_cast<double>(load(x[at]))
                                        / std::pow(q.bias + q.alpha / static_cast<double>(q.size) * sq, q.beta)));
                                }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxNorm(OpRegistry& r)
{
    addBatchNorm(r);
    addInstanceNorm(r);
    addLayerNorm(r);
    addLrn(r);
}

} // namespace opscope
