// ONNX's reductions: ReduceSum (axes an input from opset 13), ReduceMean, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes attributes);
// ArgMax, ArgMin; TopK; CumSum. Accumulation is in double.

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace opscope {

using namespace onnx_ops;

namespace {

enum class Kind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

struct ReduceParams : OnnxParams {
    std::vector<int64_t> axes;
    bool keepdims = true;
    bool noopWithEmptyAxes = false;
    int64_t axis = 0;
    bool selectLast = false;
    bool largest = true, sorted = true;
    int64_t k = 0;
    bool exclusive = false, reverse = false;
};

// Which axes are reduced (all when none are given, unless noop_with_empty_axes).
std::vector<bool> reducedAxes(const ReduceParams& p, int rank, const char* op)
{
    std::vector<bool> red(static_cast<size_t>(rank), p.axes.empty() && !p.noopWithEmptyAxes);
    for (int64_t a : p.axes)
        red[static_cast<size_t>(normalizeAxis(a, rank, op))] = true;
    return red;
}

Shape reducedShape(const Shape& in, const std::vector<bool>& red, bool keep)
{
    Shape s;
    for (int d = 0; d < in.ndim(); ++d) {
        if (!red[static_cast<size_t>(d)])
            s.push_back(in[d]);
        else if (keep)
            s.push_back(1);
    }
    return s.ndim() == 0 ? Shape::scalar() : s;
}

double identityOf(Kind k)
{
    switch (k) {
    case Kind::Max: return -std::numeric_limits<double>::infinity();
    case Kind::Min: return std::numeric_limits<double>::infinity();
    case Kind::Prod: return 1;
    default: return 0;
    }
}

void addReduce(OpRegistry& r, const char* name, Kind kind)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, kind](const AttrMap& attrs) {
        auto p = std::make_shared<ReduceParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 1, 2);
        p->keepdims = a.getInt("keepdims", 1) != 0;
        p->noopWithEmptyAxes = a.getInt("noop_with_empty_axes", 0) != 0;
        if (kind == Kind::Sum && p->opset >= 13) {
            if (p->hasInput(1)) p->axes = a.requireInputInts(1, "axes");
        } else {
            p->axes = a.getInts("axes", {});
        }
        return p;
    };
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ReduceParams>(p);
        out[0] = reducedShape(in[0], reducedAxes(q, in[0].ndim(), op.c_str()), q.keepdims);
    };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, op, 0);
        out[0] = in[0];
    };
    def.reference = [op, kind](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ReduceParams>(p), [op, kind](const ReduceParams& q, std::span<const Tensor* const> in,
                                                           std::span<Tensor* const> out, RunContext&) {
            const Shape& is = in[0]->shape();
            const std::vector<bool> red = reducedAxes(q, is.ndim(), op.c_str());
            // Output strides over the input's dimensions (0 along reduced ones).
            Shape kept = reducedShape(is, red, true);
            std::vector<int64_t> ost = stridesOf(kept);
            for (int d = 0; d < is.ndim(); ++d)
                if (red[static_cast<size_t>(d)]) ost[static_cast<size_t>(d)] = 0;
            const int64_t nOut = out[0]->size();
            std::vector<double> acc(static_cast<size_t>(nOut), identityOf(kind));
            std::vector<double> shift(static_cast<size_t>(nOut), -std::numeric_limits<double>::infinity());
            const TensorView x = in[0]->view();
            const int64_t n = in[0]->size();
            auto walk = [&](auto&& visit) {
                std::vector<int64_t> idx(static_cast<size_t>(is.ndim()), 0);
                int64_t o = 0;
                for (int64_t i = 0; i < n; ++i) {
                    visit(static_cast<size_t>(o), x.valueAt(i));
                    for (int d = is.ndim() - 1; d >= 0; --d) {
                        const size_t u = static_cast<size_t>(d);
                        ++idx[u];
                        o += ost[u];
                        if (idx[u] < is[d]) break;
                        o -= ost[u] * is[d];
                        idx[u] = 0;
                    }
                }
            };
            if (kind == Kind::LogSumExp)
                walk([&](size_t o, double v) { shift[o] = std::max(shift[o], v); });
            walk([&](size_t o, double v) {
                double& a = acc[o];
                switch (kind) {
                case Kind::Max: a = (v != v || a != a) ? NAN : std::max(a, v); break;
                case Kind::Min: a = (v != v || a != a) ? NAN : std::min(a, v); break;
                case Kind::Prod: a *= v; break;
                case Kind::L1: a += std::fabs(v); break;
                case Kind::L2:
                case Kind::SumSquare: a += v * v; break;
                case Kind::LogSumExp: a += std::exp(v - (std::isfinite(shift[o]) ? shift[o] : 0)); break;
                default: a += v;
                }
            });
            const double count = nOut ? static_cast<double>(n) / static_cast<double>(nOut) : 0;
            dispatchType(out[0]->dtype(), [&](auto tag) {
                using T = decltype(tag);
                T* o = out[0]->dataAs<T>();
                for (int64_t i = 0; i < nOut; ++i) {
                    double v = acc[static_cast<size_t>(i)];
                    if (kind == Kind::Mean) v /= count;
                    if (kind == Kind::L2) v = std::sqrt(v);
                    if (kind == Kind::LogSum) v = std::log(v);
                    if (kind == Kind::LogSumExp) v = std::log(v) + (std::isfinite(shift[static_cast<size_t>(i)]) ? shift[static_cast<size_t>(i)] : 0);
                    o[i] = fromDouble<T>(v);
                }
            });
        });
    };
    addOnnxOp(r, std::move(def));
}

void addArg(OpRegistry& r, const char* name, bool isMax)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op](const AttrMap& attrs) {
        auto p = std::make_shared<ReduceParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 1, 1);
        p->axis = a.getInt("axis", 0);
        p->keepdims = a.getInt("keepdims", 1) != 0;
        p->selectLast = a.getInt("select_last_index", 0) != 0;
        return p;
    };
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ReduceParams>(p);
        std::vector<bool> red(static_cast<size_t>(in[0].ndim()), false);
        red[static_cast<size_t>(normalizeAxis(q.axis, in[0].ndim(), op))] = true;
        out[0] = reducedShape(in[0], red, q.keepdims);
    };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, op, 0);
        out[0] = DType::Int64;
    };
    def.reference = [op, isMax](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ReduceParams>(p), [op, isMax](const ReduceParams& q, std::span<const Tensor* const> in,
                                                            std::span<Tensor* const> out, RunContext&) {
            const Shape& is = in[0]->shape();
            const int axis = normalizeAxis(q.axis, is.ndim(), op);
            const int64_t outer = is.product(0, axis), dim = is[axis], inner = is.product(axis + 1, is.ndim());
            const TensorView x = in[0]->view();
            int64_t* o = out[0]->dataAs<int64_t>();
            for (int64_t a = 0; a < outer; ++a)
                for (int64_t b = 0; b < inner; ++b) {
                    int64_t best = 0;
                    double bv = x.valueAt(a * dim * inner + b);
                    for (int64_t k = 1; k < dim; ++k) {
                        const double v = x.valueAt((a * dim + k) * inner + b);
                        const bool better = isMax ? (v > bv || (q.selectLast && v == bv)) : (v < bv || (q.selectLast && v == bv));
                        if (better) {
                            bv = v;
                            best = k;
                        }
                    }
                    o[a * inner + b] = best;
                }
        });
    };
    addOnnxOp(r, std::move(def));
}

void addTopK(OpRegistry& r)
{
    OpDef def = onnxOp("TopK");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<ReduceParams>();
        OnnxAttrs a(attrs, "TopK");
        a.fillBase(*p, 1, 2, 2);
        p->axis = a.getInt("axis", -1);
        p->largest = a.getInt("largest", 1) != 0;
        p->sorted = a.getInt("sorted", 1) != 0;
        p->k = p->opset < 10 ? a.getInt("k") : a.requireInputInts(1, "k").at(0);
        if (p->k < 0) a.fail("k", "must not be negative");
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ReduceParams>(p);
        const int axis = normalizeAxis(q.axis, in[0].ndim(), "TopK");
        if (q.k > in[0][axis]) throw ShapeError("TopK: k " + std::to_string(q.k) + " is above the axis' " + std::to_string(in[0][axis]));
        Shape s = in[0];
        s[axis] = q.k;
        for (Shape& o : out)
            o = s;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "TopK", 0);
        out[0] = in[0];
        if (out.size() > 1) out[1] = DType::Int64;
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ReduceParams>(p),
            [](const ReduceParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& is = in[0]->shape();
                const int axis = normalizeAxis(q.axis, is.ndim(), "TopK");
                const int64_t outer = is.product(0, axis), dim = is[axis], inner = is.product(axis + 1, is.ndim());
                const TensorView x = in[0]->view();
                std::vector<int64_t> order(static_cast<size_t>(dim));
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* xs = in[0]->dataAs<T>();
                    T* vals = out[0]->dataAs<T>();
                    for (int64_t a = 0; a < outer; ++a)
                        for (int64_t b = 0; b < inner; ++b) {
                            auto at = [&](int64_t k) { return x.valueAt((a * dim + k) * inner + b); };
                            std::iota(order.begin(), order.end(), 0);
                            // Ties: the lower index first.
                            std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
                                return q.largest ? at(i) > at(j) : at(i) < at(j);
                            });
                            for (int64_t k = 0; k < q.k; ++k) {
                                const int64_t src = order[static_cast<size_t>(k)];
                                vals[(a * q.k + k) * inner + b] = xs[(a * dim + src) * inner + b];
                                if (out.size() > 1) out[1]->dataAs<int64_t>()[(a * q.k + k) * inner + b] = src;
                            }
                        }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

void addCumSum(OpRegistry& r)
{
    OpDef def = onnxOp("CumSum");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<ReduceParams>();
        OnnxAttrs a(attrs, "CumSum");
        a.fillBase(*p, 2, 2);
        p->axis = a.requireInputInts(1, "axis").at(0);
        p->exclusive = a.getInt("exclusive", 0) != 0;
        p->reverse = a.getInt("reverse", 0) != 0;
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "CumSum", 0);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ReduceParams>(p),
            [](const ReduceParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& is = in[0]->shape();
                const int axis = normalizeAxis(q.axis, is.ndim(), "CumSum");
                const int64_t outer = is.product(0, axis), dim = is[axis], inner = is.product(axis + 1, is.ndim());
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        const T* x = in[0]->dataAs<T>();
                        T* o = out[0]->dataAs<T>();
                        for (int64_t a = 0; a < outer; ++a)
                            for (int64_t b = 0; b < inner; ++b) {
                                Calc<T> sum = 0;
                                for (int64_t s = 0; s < dim; ++s) {
                                    const int64_t k = q.reverse ? dim - 1 - s : s;
                                    const int64_t at = (a * dim + k) * inner + b;
                                    if (q.exclusive) {
                                        o[at] = store<T>(sum);
                                        sum += load(x[at]);
                                    } else {
                                        sum += load(x[at]);
                                        o[at] = store<T>(sum);
                                    }
                                }
                            }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxReduce(OpRegistry& r)
{
    addReduce(r, "ReduceSum", Kind::Sum);
    addReduce(r, "ReduceMean", Kind::Mean);
    addReduce(r, "ReduceMax", Kind::Max);
    addReduce(r, "ReduceMin", Kind::Min);
    addReduce(r, "ReduceProd", Kind::Prod);
    addReduce(r, "ReduceL1", Kind::L1);
    addReduce(r, "ReduceL2", Kind::L2);
    addReduce(r, "ReduceLogSum", Kind::LogSum);
    addReduce(r, "ReduceLogSumExp", Kind::LogSumExp);
    addReduce(r, "ReduceSumSquare", Kind::SumSquare);
    addArg(r, "ArgMax", true);
    addArg(r, "ArgMin", false);
    addTopK(r);
    addCumSum(r);
}

} // namespace opscope
