// ONNX's losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (its log-probabilities
// output optional), with class weights, ignore_index and reduction none, sum or mean (mean divides
// by the weights of the counted targets, as ONNX defines it).

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>
#include <limits>

namespace opscope {

using namespace onnx_ops;

namespace {

struct LossParams : OnnxParams {
    std::string reduction = "mean";
    bool hasIgnore = false;
    int64_t ignoreIndex = 0;
};

std::shared_ptr<LossParams> parseLoss(const AttrMap& attrs, const char* op, int maxOutputs)
{
    auto p = std::make_shared<LossParams>();
    OnnxAttrs a(attrs, op);
    a.fillBase(*p, 2, 3, maxOutputs);
    p->reduction = a.getString("reduction", "mean");
    if (p->reduction != "none" && p->reduction != "sum" && p->reduction != "mean")
        a.fail("reduction", "expected none, sum or mean");
    p->hasIgnore = a.has("ignore_index");
    p->ignoreIndex = a.getInt("ignore_index", 0);
    return p;
}

void inferLoss(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out, const char* op)
{
    const auto& p = paramsAs<LossParams>(params);
    const Shape& x = in[0];
    const Shape& t = in[1];
    if (x.ndim() < 2 || t.ndim() != x.ndim() - 1 || t[0] != x[0])
        throw ShapeError(std::string(op) + ": scores " + x.str() + " and target " + t.str() + " do not match (N, C, d…) and (N, d…)");
    for (int d = 1; d < t.ndim(); ++d)
        if (t[d] != x[d + 1]) throw ShapeError(std::string(op) + ": target " + t.str() + " does not match scores " + x.str());
    if (in.size() > 2 && (in[2].ndim() != 1 || in[2][0] != x[1])) shapeMismatch(std::string(op) + " weight", Shape({ x[1] }), in[2]);
    out[0] = p.reduction == "none" ? t : Shape::scalar();
    if (out.size() > 1) out[1] = x;
}

// loss[n, d…] = -w[c] · logp[n, c, d…] for c = target[n, d…], then reduced.
template <class T>
void nll(const LossParams& p, const T* logp, const Shape& xs, const Tensor& target, const Tensor* weight, const Tensor& out,
    const char* op)
{
    const int64_t N = xs[0], C = xs[1], inner = xs.product(2, xs.ndim());
    const TensorView tv = target.view();
    std::vector<double> loss(static_cast<size_t>(N * inner));
    double weightSum = 0, sum = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t c = static_cast<int64_t>(tv.valueAt(n * inner + i));
            double l = 0;
            if (!(p.hasIgnore && c == p.ignoreIndex)) {
                if (c < 0 || c >= C)
                    throw ShapeError(std::string(op) + ": target class " + std::to_string(c) + " is outside [0, " + std::to_string(C) + ")");
                const double w = weight ? weight->view().valueAt(c) : 1.0;
                l = -w * static_cast<double>(load(logp[(n * C + c) * inner + i]));
                weightSum += w;
            }
            loss[static_cast<size_t>(n * inner + i)] = l;
            sum += l;
        }
    T* o = out.dataAs<T>();
    if (p.reduction == "none") {
        for (size_t k = 0; k < loss.size(); ++k)
            o[k] = store<T>(static_cast<Calc<T>>(loss[k]));
    } else if (p.reduction == "sum") {
        o[0] = store<T>(static_cast<Calc<T>>(sum));
    } else {
        o[0] = store<T>(static_cast<Calc<T>>(weightSum == 0 ? (sum == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN()) : sum / weightSum));
    }
}

void addLoss(OpRegistry& r, const char* name, bool softmax)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, softmax](const AttrMap& attrs) { return parseLoss(attrs, op.c_str(), softmax ? 2 : 1); };
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) { inferLoss(p, in, out, op.c_str()); };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, op, 0);
        constexpr DType kIndex[] = { DType::Int64, DType::Int32 };
        requireType(in[1], kIndex, op, 1);
        if (in.size() > 2) requireSameType(in, 0, 2, op);
        std::fill(out.begin(), out.end(), in[0]);
    };
    def.reference = [op, softmax](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<LossParams>(p), [op, softmax](const LossParams& q, std::span<const Tensor* const> in,
                                                         std::span<Tensor* const> out, RunContext&) {
            const Shape& xs = in[0]->shape();
            const Tensor* weight = in.size() > 2 ? in[2] : nullptr;
            dispatchType(in[0]->dtype(), [&](auto tag) {
                using T = decltype(tag);
                if constexpr (std::is_floating_point_v<Calc<T>>) {
                    if (!softmax) {
                        nll<T>(q, in[0]->dataAs<T>(), xs, *in[1], weight, *out[0], op.c_str());
                        return;
                    }
                    // log_softmax over the classes (axis 1).
                    const int64_t N = xs[0], C = xs[1], inner = xs.product(2, xs.ndim());
                    std::vector<T> logp(static_cast<size_t>(xs.size()));
                    const T* x = in[0]->dataAs<T>();
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t i = 0; i < inner; ++i) {
                            double mx = -INFINITY, s = 0;
                            for (int64_t c = 0; c < C; ++c)
                                mx = std::max(mx, static_cast<double>(load(x[(n * C + c) * inner + i])));
                            for (int64_t c = 0; c < C; ++c)
                                s += std::exp(static_cast<double>(load(x[(n * C + c) * inner + i])) - mx);
                            const double ls = std::log(s) + mx;
                            for (int64_t c = 0; c < C; ++c) {
                                const int64_t at = (n * C + c) * inner + i;
                                logp[static_cast<size_t>(at)] = store<T>(static_cast<Calc<T>>(static_cast<double>(load(x[at])) - ls));
                            }
                        }
                    nll<T>(q, logp.data(), xs, *in[1], weight, *out[0], op.c_str());
                    if (out.size() > 1) std::copy(logp.begin(), logp.end(), out[1]->dataAs<T>());
                }
            });
        });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxLosses(OpRegistry& r)
{
    addLoss(r, "NegativeLogLikelihoodLoss", false);
    addLoss(r, "SoftmaxCrossEntropyLoss", true);
}

} // namespace opscope
