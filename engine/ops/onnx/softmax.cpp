// ONNX's Softmax, LogSoftmax and Hardmax. Before opset 13 the input is seen as 2-D, split at `axis`
// (default 1), and normalised over everything from `axis` on; from 13 over the one `axis` (default
// -1).

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>

namespace opscope {

using namespace onnx_ops;

namespace {

enum class Kind { Softmax, LogSoftmax, Hardmax };

struct SoftmaxParams : OnnxParams {
    int64_t axis = -1;
};

void addSoftmax(OpRegistry& r, const char* name, Kind kind)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op](const AttrMap& attrs) {
        auto p = std::make_shared<SoftmaxParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 1, 1);
        p->axis = a.getInt("axis", p->opset < 13 ? 1 : -1);
        return p;
    };
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        normalizeAxis(paramsAs<SoftmaxParams>(p).axis, in[0].ndim(), op);
        out[0] = in[0];
    };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, op, 0);
        out[0] = in[0];
    };
    def.reference = [op, kind](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<SoftmaxParams>(p), [op, kind](const SoftmaxParams& q,
                                                             std::span<const Tensor* const> in,
                                                             std::span<Tensor* const> out, RunContext&) {
            const Shape& s = in[0]->shape();
            const int axis = normalizeAxis(q.axis, s.ndim(), op);
            // Rows of `dim` elements `inner` apart.
            int64_t outer, dim, inner;
            if (q.opset < 13) {
                outer = s.product(0, axis);
                dim = s.product(axis, s.ndim());
                inner = 1;
            } else {
                outer = s.product(0, axis);
                dim = s[axis];
                inner = s.product(axis + 1, s.ndim());
            }
            dispatchType(in[0]->dtype(), [&](auto tag) {
                using T = decltype(tag);
                if constexpr (std::is_floating_point_v<Calc<T>>) {
                    const T* x = in[0]->dataAs<T>();
                    T* o = out[0]->dataAs<T>();
                    for (int64_t a = 0; a < outer; ++a)
                        for (int64_t b = 0; b < inner; ++b) {
                            auto at = [&](int64_t k) { return (a * dim + k) * inner + b; };
                            double mx = -INFINITY;
                            int64_t arg = 0;
                            for (int64_t k = 0; k < dim; ++k) {
                                const double v = load(x[at(k)]);
                                if (v > mx) {
                                    mx = v;
                                    arg = k;
                                }
                            }
                            if (kind == Kind::Hardmax) {
                                for (int64_t k = 0; k < dim; ++k)
                                    o[at(k)] = store<T>(k == arg ? 1.0 : 0.0);
                                continue;
                            }
                            double sum = 0;
                            for (int64_t k = 0; k < dim; ++k)
                                sum += std::exp(static_cast<double>(load(x[at(k)])) - mx);
                            const double logSum = std::log(sum);
                            for (int64_t k = 0; k < dim; ++k) {
                                const double v = static_cast<double>(load(x[at(k)])) - mx;
                                o[at(k)] = store<T>(kind == Kind::LogSoftmax ? v - logSum : std::exp(v) / sum);
                            }
                        }
                }
            });
        });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxSoftmax(OpRegistry& r)
{
    addSoftmax(r, "Softmax", Kind::Softmax);
    addSoftmax(r, "LogSoftmax", Kind::LogSoftmax);
    addSoftmax(r, "Hardmax", Kind::Hardmax);
}

} // namespace opscope
