// pick (MXNet 1.x broadcast_reduce_op_index.cc, PickOpShape / PickOpForward / PickOpBackward in
// broadcast_reduce_op.h) and reshape_like (elemwise_unary_op_basic.cc), the two operators the
// Gluon losses need besides the element-wise and reduction families.
//
// pick(data, index; axis=-1, keepdims=False, mode='clip'): out[l, t] = data[l, j, t] with
// j = index[l, t] along `axis`. The index is a float tensor whose values are truncated toward zero
// (MXNet's static_cast); 'clip' clamps j to [0, M-1], 'wrap' takes it modulo M. The index has the
// output's shape with the axis removed, or kept as 1 (either form, whatever keepdims says).
// axis=None is rejected, as MXNet 1.x does. Gradient: the output's gradient scattered into the
// picked positions (zero elsewhere); the index gets a zero gradient (MXNet's zeros_like).
//
// reshape_like(lhs, rhs; lhs_begin, lhs_end, rhs_begin, rhs_end): lhs's values with rhs's shape,
// or with lhs's dimensions [lhs_begin, lhs_end) replaced by rhs's [rhs_begin, rhs_end). Only rhs's
// shape is read. Gradient: the output's gradient reshaped to lhs; rhs gets zero.

#include "core/error.h"
#include "ops/register_all.h"
#include "ops/registry.h"
#include "ops/shape/shape_util.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace opscope {

namespace {

auto constant(int n)
{
    return [n](const OpParams&) { return n; };
}

// ---- pick ----------------------------------------------------------------------------------

struct PickParams : OpParams {
    int64_t axis = -1;
    bool keepdims = false;
    bool clip = true; // mode 'clip' (else 'wrap')
};

ParamsPtr parsePick(const AttrMap& attrs)
{
    AttrReader r(attrs, "pick");
    auto p = std::make_shared<PickParams>();
    const std::string* axis = r.raw("axis");
    if (axis && *axis == "None") r.fail("axis", "None is not supported by pick; an axis must be given");
    p->axis = r.getInt("axis", -1);
    p->keepdims = r.getBool("keepdims", false);
    p->clip = r.getEnum("mode", { "wrap", "clip" }, "clip") == "clip";
    return p;
}

/// MXNet's ReduceAxisShapeImpl for one axis: the axis removed (kept as 1 with keepdims); a 1-D
/// input gives (1,) either way.
Shape pickedShape(const Shape& data, int axis, bool keepdims)
{
    if (data.ndim() == 1) return Shape({ 1 });
    Shape s;
    for (int i = 0; i < data.ndim(); ++i) {
        if (i != axis)
            s.push_back(data[i]);
        else if (keepdims)
            s.push_back(1);
    }
    return s;
}

void pickShape(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<PickParams>(params);
    if (in[0].ndim() == 0) return;
    const int axis = shapeops::normalizeAxis(p.axis, in[0], "input 'data'");
    assignShape(out[0], pickedShape(in[0], axis, p.keepdims), "output");
    // As MXNet: the index form follows the index's rank; an index of unknown rank stays unknown.
    if (in[1].ndim() == 0) return;
    assignShape(in[1], pickedShape(in[0], axis, in[1].ndim() == in[0].ndim()), "input 'index'");
}

/// The data seen as (leading, M, trailing) around the picked axis.
shapeops::AxisView pickView(const PickParams& p, const Shape& data)
{
    return shapeops::axisView(data, shapeops::normalizeAxis(p.axis, data, "input 'data'"));
}

/// The position along the axis that index value `v` picks (MXNet's truncation, then clip or wrap).
/// Computed in double so that huge or non-finite values stay defined: NaN picks 0.
int64_t pickedIndex(float v, int64_t m, bool clip)
{
    if (std::isnan(v)) return 0;
    const double j = std::trunc(static_cast<double>(v));
    if (clip) {
        if (j <= 0) return 0;
        if (j >= static_cast<double>(m)) return m - 1;
        return static_cast<int64_t>(j);
    }
    if (std::isinf(j)) return 0;
    double r = std::fmod(j, static_cast<double>(m));
    if (r < 0) r += static_cast<double>(m);
    return static_cast<int64_t>(r);
}

std::unique_ptr<Kernel> makePick(const OpParams& params, std::span<const Shape> in, std::span<const Shape>)
{
    const auto& p = paramsAs<PickParams>(params);
    return lambdaKernel(p, [v = pickView(p, in[0])](const PickParams& p, auto in, auto out, RunContext&) {
        const float* x = in[0]->data();
        const float* idx = in[1]->data();
        float* y = out[0]->data();
        for (int64_t l = 0, i = 0; l < v.outer; ++l)
            for (int64_t t = 0; t < v.inner; ++t, ++i)
                y[i] = x[(l * v.dim + pickedIndex(idx[i], v.dim, p.clip)) * v.inner + t];
    });
}

void backwardPick(const BackwardArgs& a)
{
    const auto& p = paramsAs<PickParams>(a.params);
    if (Tensor* dIndex = a.inGrad.size() > 1 ? a.inGrad[1] : nullptr) dIndex->fill(0);
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    dx->fill(0);
    if (!a.outGrad[0]) return;
    const shapeops::AxisView v = pickView(p, a.in[0]->shape());
    const float* idx = a.in[1]->data();
    const float* g = a.outGrad[0]->data();
    float* d = dx->data();
    for (int64_t l = 0, i = 0; l < v.outer; ++l)
        for (int64_t t = 0; t < v.inner; ++t, ++i)
            d[(l * v.dim + pickedIndex(idx[i], v.dim, p.clip)) * v.inner + t] += g[i];
}

// ---- reshape_like --------------------------------------------------------------------------

struct ReshapeLikeParams : OpParams {
    std::optional<int64_t> lhsBegin, lhsEnd, rhsBegin, rhsEnd;
};

ParamsPtr parseReshapeLike(const AttrMap& attrs)
{
    AttrReader r(attrs, "reshape_like");
    auto p = std::make_shared<ReshapeLikeParams>();
    p->lhsBegin = r.getOptionalInt("lhs_begin");
    p->lhsEnd = r.getOptionalInt("lhs_end");
    p->rhsBegin = r.getOptionalInt("rhs_begin");
    p->rhsEnd = r.getOptionalInt("rhs_end");
    return p;
}

/// MXNet's GetReshapeLikeParams: None is the start (begin) or the end (end) of the shape,
/// negative values count from the end.
std::pair<int, int> sliceOf(
    const std::optional<int64_t>& begin, const std::optional<int64_t>& end, const Shape& s, const std::string& what)
{
    const int64_t n = s.ndim();
    int64_t b = begin.value_or(0), e = end.value_or(n);
    if (b < 0) b += n;
    if (e < 0) e += n;
    if (b < 0 || b > n || e < 0 || e > n || b > e)
        throw ShapeError(what + ": dimensions [" + std::to_string(begin.value_or(0)) + ", "
            + (end ? std::to_string(*end) : std::string("None")) + ") are out of range for shape " + s.str());
    return { static_cast<int>(b), static_cast<int>(e) };
}

void reshapeLikeShape(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ReshapeLikeParams>(params);
    if (in[0].ndim() == 0 || in[1].ndim() == 0) return;
    const Shape &lhs = in[0], &rhs = in[1];
    const auto [lb, le] = sliceOf(p.lhsBegin, p.lhsEnd, lhs, "input 'lhs'");
    const auto [rb, re] = sliceOf(p.rhsBegin, p.rhsEnd, rhs, "input 'rhs'");
    Shape o;
    for (int i = 0; i < lb; ++i)
        o.push_back(lhs[i]);
    for (int i = rb; i < re; ++i)
        o.push_back(rhs[i]);
    for (int i = le; i < lhs.ndim(); ++i)
        o.push_back(lhs[i]);
    if (lhs.known() && o.known() && lhs.size() != o.size())
        throw ShapeError("cannot reshape input 'lhs' of shape " + lhs.str() + " to " + o.str() + " (like input 'rhs' "
            + rhs.str() + "): they have different sizes");
    assignShape(out[0], o, "output");
}

std::unique_ptr<Kernel> makeReshapeLike(const OpParams& params, std::span<const Shape>, std::span<const Shape>)
{
    return lambdaKernel(paramsAs<ReshapeLikeParams>(params),
        [](const ReshapeLikeParams&, auto in, auto out, RunContext&) { shapeops::copyAll(*in[0], *out[0]); });
}

void backwardReshapeLike(const BackwardArgs& a)
{
    if (Tensor* dRhs = a.inGrad.size() > 1 ? a.inGrad[1] : nullptr) dRhs->fill(0);
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    if (a.outGrad[0])
        shapeops::copyAll(*a.outGrad[0], *dx);
    else
        dx->fill(0);
}

} // namespace

void registerPick(OpRegistry& r)
{
    OpDef pick;
    pick.name = "pick";
    pick.parse = parsePick;
    pick.numInputs = constant(2);
    pick.numOutputs = constant(1);
    pick.nameInputs({ "data", "index" });
    pick.inferShape = pickShape;
    pick.reference = makePick;
    pick.backward = backwardPick;
    r.add(std::move(pick), { "choose_element_0index", "_npx_pick" });

    OpDef like;
    like.name = "reshape_like";
    like.parse = parseReshapeLike;
    like.numInputs = constant(2);
    like.numOutputs = constant(1);
    like.nameInputs({ "lhs", "rhs" });
    like.inferShape = reshapeLikeShape;
    like.reference = makeReshapeLike;
    like.backward = backwardReshapeLike;
    r.add(std::move(like), { "_npx_reshape_like" });
}

} // namespace opscope
