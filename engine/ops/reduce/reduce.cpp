// sum, mean, max over axes (MXNet 1.x broadcast_reduce_sum_value.cc, broadcast_reduce_minmax_value.cc
// and ReduceAxesParam / ReduceAxesShapeImpl in broadcast_reduce_op.h).
// Attributes: axis (None, an int or a tuple; None or () reduces everything), keepdims (False),
// exclude (False: reduce the axes NOT listed). Reducing everything without keepdims gives (1,).
// max propagates NaN, as mshadow's red::maximum does.

#include "core/error.h"
#include "ops/dnnl/dnnl_common.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace opscope {

namespace {
enum class ReduceOp { Sum, Mean, Max };

struct ReduceParams : OpParams {
    std::optional<std::vector<int64_t>> axis;
    bool keepdims = false;
    bool exclude = false;
};

using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;

std::string axisText(const std::vector<int64_t>& axis)
{
    return tupleAttr(axis);
}

/// Which input dimensions are reduced (MXNet's keepdims shape has 1 exactly there).
std::array<bool, Shape::kMaxDims> reducedDims(const ReduceParams& p, const Shape& in)
{
    std::array<bool, Shape::kMaxDims> reduced {};
    const int nd = in.ndim();
    if (!p.axis || p.axis->empty()) {
        reduced.fill(true);
        return reduced;
    }
    std::vector<int64_t> axes = *p.axis;
    for (int64_t& a : axes) {
        if (a < -nd || a >= nd)
            throw ShapeError("reduction axis " + std::to_string(a) + " (axis=" + axisText(*p.axis)
                + ") is out of range for input " + in.str());
        if (a < 0) a += nd;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw ShapeError("reduction axes have duplicates: axis=" + axisText(*p.axis) + " for input " + in.str());
    for (int i = 0; i < nd; ++i)
        reduced[static_cast<size_t>(i)] = p.exclude;
    for (int64_t a : axes)
        reduced[static_cast<size_t>(a)] = !p.exclude;
    return reduced;
}

/// MXNet's ReduceAxesShapeImpl.
Shape reducedShape(const ReduceParams& p, const Shape& in)
{
    const auto reduced = reducedDims(p, in);
    Shape out;
    if (!p.axis || p.axis->empty()) {
        if (p.keepdims)
            out.resize(in.ndim(), 1);
        else
            out = Shape({ 1 });
        return out;
    }
    for (int i = 0; i < in.ndim(); ++i) {
        if (p.keepdims)
            out.push_back(reduced[static_cast<size_t>(i)] ? 1 : in[i]);
        else if (!reduced[static_cast<size_t>(i)])
            out.push_back(in[i]);
    }
    if (out.ndim() == 0) out = Shape({ 1 });
    return out;
}

Shape keepdimsShape(const ReduceParams& p, const Shape& in)
{
    ReduceParams k = p;
    k.keepdims = true;
    return reducedShape(k, in);
}

float maxNaN(float acc, float v)
{
    return (std::isnan(acc) || acc >= v) ? acc : v;
}

/// How the reference kernel walks one input shape: neighbouring dimensions that are both reduced
/// or both kept are merged into groups (size-1 dimensions dropped); the innermost group is a
/// contiguous run that Eigen reduces (or accumulates), an odometer walks the outer groups.
struct ReducePlan {
    std::array<int64_t, Shape::kMaxDims> ext {}, inStride {}, outStride {};
    std::array<bool, Shape::kMaxDims> red {};
    int groups = 0;
};

ReducePlan makePlan(const ReduceParams& p, const Shape& is)
{
    const auto reduced = reducedDims(p, is);
    ReducePlan plan;
    int& n = plan.groups;
    for (int i = 0; i < is.ndim(); ++i) {
        if (is[i] == 1) continue;
        const bool r = reduced[static_cast<size_t>(i)];
        if (n > 0 && plan.red[n - 1] == r)
            plan.ext[n - 1] *= is[i];
        else {
            plan.ext[n] = is[i];
            plan.red[n] = r;
            ++n;
        }
    }
    if (n == 0) {
        plan.ext[0] = 1;
        plan.red[0] = true;
        n = 1;
    }
    int64_t si = 1, so = 1;
    for (int g = n - 1; g >= 0; --g) {
        plan.inStride[g] = si;
        si *= plan.ext[g];
        plan.outStride[g] = plan.red[g] ? 0 : so;
        if (!plan.red[g]) so *= plan.ext[g];
    }
    return plan;
}

void reduceReference(ReduceOp op, const ReducePlan& plan, const Tensor& x, const Tensor& y)
{
    const int n = plan.groups;
    float* out = y.data();
    const float* in = x.data();
    const int64_t outSize = y.size();
    ArrayMap(out, outSize).setConstant(op == ReduceOp::Max ? -std::numeric_limits<float>::infinity() : 0.0f);

    const int64_t len = plan.ext[n - 1];
    const bool innerReduced = plan.red[n - 1];
    const int64_t rows = x.size() / len;
    std::array<int64_t, Shape::kMaxDims> idx {};
    int64_t offIn = 0, offOut = 0;
    for (int64_t r = 0; r < rows; ++r) {
        ConstArrayMap row(in + offIn, len);
        if (innerReduced) {
            float& acc = out[offOut];
            acc = op == ReduceOp::Max ? maxNaN(acc, row.maxCoeff<Eigen::PropagateNaN>()) : acc + row.sum();
        } else {
            ArrayMap acc(out + offOut, len);
            if (op == ReduceOp::Max)
                acc = (acc.isNaN() || acc >= row).select(acc, row);
            else
                acc += row;
        }
        for (int d = n - 2; d >= 0; --d) {
            offIn += plan.inStride[d];
            offOut += plan.outStride[d];
            if (++idx[d] < plan.ext[d]) break;
            offIn -= plan.inStride[d] * plan.ext[d];
            offOut -= plan.outStride[d] * plan.ext[d];
            idx[d] = 0;
        }
    }
    if (op == ReduceOp::Mean) ArrayMap(out, outSize) /= static_cast<float>(x.size() / outSize); // as MXNet: sum / count
}

/// MXNet's _backward_sum / _backward_mean (the output's gradient broadcast back over the reduced
/// axes, divided by the count for mean) and _backward_max (g · (x == y): every position equal to
/// the maximum gets the whole gradient, ties included; NaN positions get none).
void reduceBackward(ReduceOp op, const ReducePlan& plan, const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx)
{
    if (x.size() == 0) return;
    const int n = plan.groups;
    const float* in = x.data();
    const float* out = y.data();
    const float* g = dy.data();
    float* d = dx.data();
    const int64_t len = plan.ext[n - 1];
    const bool innerReduced = plan.red[n - 1];
    const int64_t rows = x.size() / len;
    const float count = static_cast<float>(x.size() / y.size());
    std::array<int64_t, Shape::kMaxDims> idx {};
    int64_t offIn = 0, offOut = 0;
    for (int64_t r = 0; r < rows; ++r) {
        ArrayMap dst(d + offIn, len);
        ConstArrayMap row(in + offIn, len);
        if (innerReduced) {
            const float gv = g[offOut], yv = out[offOut];
            if (op == ReduceOp::Max)
                dst = gv * (row == yv).cast<float>();
            else
                dst.setConstant(gv);
        } else {
            ConstArrayMap gr(g + offOut, len);
            if (op == ReduceOp::Max)
                dst = gr * (row == ConstArrayMap(out + offOut, len)).cast<float>();
            else
                dst = gr;
        }
        for (int k = n - 2; k >= 0; --k) {
            offIn += plan.inStride[k];
            offOut += plan.outStride[k];
            if (++idx[k] < plan.ext[k]) break;
            offIn -= plan.inStride[k] * plan.ext[k];
            offOut -= plan.outStride[k] * plan.ext[k];
            idx[k] = 0;
        }
    }
    if (op == ReduceOp::Mean) ArrayMap(d, dx.size()) /= count;
}

/// oneDNN reduction over the keepdims view of the output (same memory as the output).
class DnnlReduceKernel final : public Kernel {
public:
    DnnlReduceKernel(dnnl::algorithm alg, const Shape& in, const Shape& keepdims)
        : m_src(dnnlutil::plainDesc(in))
        , m_dst(dnnlutil::plainDesc(keepdims))
    {
        dnnl::reduction::desc desc(alg, m_src, m_dst, 0.0f, 0.0f);
        dnnl::reduction::primitive_desc pd(desc, dnnlutil::cpuEngine());
        m_prim = dnnl::reduction(pd);
    }
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        dnnl::memory src = dnnlutil::wrap(m_src, *in[0]);
        dnnl::memory dst = dnnlutil::wrap(m_dst, *out[0]);
        dnnl::stream& stream = dnnlutil::threadStream();
        m_prim.execute(stream, { { DNNL_ARG_SRC, src }, { DNNL_ARG_DST, dst } });
        stream.wait();
    }
    const char* backend() const override { return "dnnl"; }

private:
    dnnl::memory::desc m_src;
    dnnl::memory::desc m_dst;
    dnnl::reduction m_prim;
};

/// True when the reduced dimensions (ignoring those of size 1) are the innermost ones, the
/// only layout where oneDNN 2.6's reduction is fast: reducing an outer axis of (16384, 256) took
/// it ~90x longer than the Eigen loop here.
bool reducesInnermost(const ReduceParams& p, const Shape& in)
{
    const auto reduced = reducedDims(p, in);
    bool seenReduced = false;
    for (int i = 0; i < in.ndim(); ++i) {
        if (in[i] == 1) continue;
        if (reduced[static_cast<size_t>(i)])
            seenReduced = true;
        else if (seenReduced)
            return false;
    }
    return true;
}

/// Memory bound: single-threaded, oneDNN and Eigen run at the same speed; only work large
/// enough for both cores pays (DESIGN.md: under ~1 MFLOP, one thread).
constexpr int64_t kDnnlMinElements = 1024 * 1024;

OpDef reduceOp(const std::string& name, ReduceOp op)
{
    OpDef d;
    d.name = name;
    d.parse = [name](const AttrMap& attrs) {
        AttrReader reader(attrs, name);
        auto p = std::make_shared<ReduceParams>();
        const std::string* axis = reader.raw("axis");
        if (axis && *axis != "None") p->axis = reader.getTuple("axis");
        p->keepdims = reader.getBool("keepdims", false);
        p->exclude = reader.getBool("exclude", false);
        return p;
    };
    d.numInputs = [](const OpParams&) { return 1; };
    d.numOutputs = [](const OpParams&) { return 1; };
    // MXNet registers no FListInputNames for these ops (its op hook reports `input0`).
    d.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() == 0) return;
        assignShape(out[0], reducedShape(paramsAs<ReduceParams>(p), in[0]), "output");
    };
    d.reference = [op](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const auto& params = paramsAs<ReduceParams>(p);
        return lambdaKernel(params,
            [op, plan = makePlan(params, in[0])](const ReduceParams&, std::span<const Tensor* const> in,
                std::span<Tensor* const> out, RunContext&) { reduceReference(op, plan, *in[0], *out[0]); });
    };
    // No oneDNN kernel for max: oneDNN 2.6's reduction_max drops NaN, which must propagate here.
    if (op != ReduceOp::Max) {
        d.dnnl = [op](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
            const auto& params = paramsAs<ReduceParams>(p);
            if (!reducesInnermost(params, in[0])) return nullptr;
            const dnnl::algorithm alg
                = op == ReduceOp::Sum ? dnnl::algorithm::reduction_sum : dnnl::algorithm::reduction_mean;
            return std::make_unique<DnnlReduceKernel>(alg, in[0], keepdimsShape(params, in[0]));
        };
    }
    d.dnnlPays = [](const OpParams&, std::span<const Shape> in, std::span<const Shape>) {
        return in[0].size() >= kDnnlMinElements;
    };
    d.backward = [op](const BackwardArgs& a) {
        Tensor* dx = a.inGrad[0];
        if (!dx) return;
        if (!a.outGrad[0]) {
            dx->fill(0);
            return;
        }
        const ReducePlan plan = makePlan(paramsAs<ReduceParams>(a.params), a.in[0]->shape());
        reduceBackward(op, plan, *a.in[0], *a.out[0], *a.outGrad[0], *dx);
    };
    return d;
}
} // namespace

void registerReduce(OpRegistry& r)
{
    r.add(reduceOp("sum", ReduceOp::Sum), { "sum_axis", "_sparse_sum" });
    r.add(reduceOp("mean", ReduceOp::Mean), { "_sparse_mean" });
    r.add(reduceOp("max", ReduceOp::Max), { "max_axis" });
}

} // namespace opscope
