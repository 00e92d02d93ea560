// Flatten, Reshape, expand_dims, squeeze and _copy: operators that keep the values in order and
// only change the shape. Their kernels copy (no views), as MXNet's IdentityCompute does.

#include "core/error.h"
#include "ops/register_all.h"
#include "ops/registry.h"
#include "ops/shape/reshape_shape.h"
#include "ops/shape/shape_util.h"

#include <memory>
#include <optional>

namespace opscope {

namespace {

using shapeops::requireRank;

struct NoParams : OpParams { };

struct ReshapeParams : OpParams {
    std::vector<int64_t> shape;
    bool reverse = false;
    // Deprecated MXNet attributes, still found in old -symbol.json files.
    std::vector<int64_t> targetShape;
    bool keepHighest = false;
};

struct ExpandDimsParams : OpParams {
    int64_t axis = 0;
};

struct SqueezeParams : OpParams {
    std::optional<std::vector<int64_t>> axis; // None: every axis of size 1
};

class CopyKernel final : public Kernel {
public:
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        shapeops::copyAll(*in[0], *out[0]);
    }
};

std::unique_ptr<Kernel> makeCopyKernel(const OpParams&, std::span<const Shape>, std::span<const Shape>)
{
    return std::make_unique<CopyKernel>();
}

// The gradient of every operator here is the output's gradient with the input's shape (MXNet's
// _backward_copy / _backward_reshape, identity copies).
void backwardCopy(const BackwardArgs& a)
{
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    if (a.outGrad[0])
        shapeops::copyAll(*a.outGrad[0], *dx);
    else
        dx->fill(0);
}

auto constant(int n)
{
    return [n](const OpParams&) { return n; };
}

// ---- Flatten -------------------------------------------------------------------------------

void flattenShape(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)
{
    requireRank(in[0], "input 'data'");
    const Shape& d = in[0];
    assignShape(out[0], Shape { d[0], d.product(1, d.ndim()) }, "output");
}

// ---- Reshape -------------------------------------------------------------------------------

ParamsPtr parseReshape(const AttrMap& attrs)
{
    AttrReader r(attrs, "Reshape");
    auto p = std::make_shared<ReshapeParams>();
    p->shape = r.getTuple("shape", {});
    p->reverse = r.getBool("reverse", false);
    p->targetShape = r.getTuple("target_shape", {});
    p->keepHighest = r.getBool("keep_highest", false);
    if (!p->shape.empty()) {
        if (auto why = shapeops::checkReshapeSpec(p->shape, p->reverse)) r.fail("shape", *why);
    } else if (!p->targetShape.empty()) {
        for (int64_t d : p->targetShape)
            if (d < 0) r.fail("target_shape", "dimensions must be positive, or 0 for the one to infer");
    } else {
        r.fail("shape", "required (or the deprecated target_shape)");
    }
    return p;
}

// MXNet's legacy `target_shape` path: at most one 0, inferred; keep_highest copies dim 0.
Shape legacyTargetShape(const ReshapeParams& p, const Shape& data)
{
    Shape o(std::span<const int64_t>(p.targetShape));
    const int start = p.keepHighest ? 1 : 0;
    if (p.keepHighest) o[0] = data[0];
    int zeros = 0, inferred = 0;
    for (int i = start; i < o.ndim(); ++i)
        if (o[i] == 0) {
            ++zeros;
            inferred = i;
        }
    if (zeros == 1) {
        o[inferred] = 1;
        o[inferred] = data.size() / o.size();
    }
    return o;
}

void reshapeShape(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ReshapeParams>(params);
    requireRank(in[0], "input 'data'");
    Shape& data = in[0];
    const Shape o
        = p.shape.empty() ? legacyTargetShape(p, data) : shapeops::inferReshapeShape(p.shape, data, p.reverse);
    const std::string spec = p.shape.empty() ? "target_shape=" + tupleAttr(p.targetShape)
                                             : "shape=" + tupleAttr(p.shape) + (p.reverse ? ", reverse=True" : "");
    // MXNet's ReverseReshapeInferShape: one unknown input dim follows from a known output.
    if (o.known() && !data.known()) {
        int unknown = -1, count = 0;
        int64_t knownProduct = 1;
        for (int i = 0; i < data.ndim(); ++i) {
            if (data[i] == 0) {
                unknown = i;
                ++count;
            } else {
                knownProduct *= data[i];
            }
        }
        if (count == 1 && o.size() % knownProduct == 0) data[unknown] = o.size() / knownProduct;
    }
    if (data.known() && !o.known())
        throw ShapeError("cannot infer the output shape of " + data.str() + " with " + spec + " (got " + o.str() + ")");
    if (data.known() && o.size() != data.size())
        throw ShapeError("input 'data': " + spec + " gives " + o.str() + " (" + std::to_string(o.size())
            + " values) for input " + data.str() + " (" + std::to_string(data.size()) + " values)");
    assignShape(out[0], o, "output");
}

// ---- expand_dims ---------------------------------------------------------------------------

ParamsPtr parseExpandDims(const AttrMap& attrs)
{
    AttrReader r(attrs, "expand_dims");
    auto p = std::make_shared<ExpandDimsParams>();
    p->axis = r.getInt("axis");
    return p;
}

void expandDimsShape(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ExpandDimsParams>(params);
    requireRank(in[0], "input 'data'");
    const Shape& d = in[0];
    const int64_t n = d.ndim();
    const int64_t axis = p.axis < 0 ? p.axis + n + 1 : p.axis;
    if (axis < 0 || axis > n)
        throw ShapeError("input 'data': axis " + std::to_string(p.axis) + " is out of range for shape " + d.str()
            + " (valid: " + std::to_string(-n - 1) + " to " + std::to_string(n) + ")");
    Shape o;
    for (int i = 0; i < n; ++i) {
        if (i == axis) o.push_back(1);
        o.push_back(d[i]);
    }
    if (axis == n) o.push_back(1);
    assignShape(out[0], o, "output");
}

// ---- squeeze -------------------------------------------------------------------------------

ParamsPtr parseSqueeze(const AttrMap& attrs)
{
    AttrReader r(attrs, "squeeze");
    auto p = std::make_shared<SqueezeParams>();
    const std::string* raw = r.raw("axis");
    if (raw && *raw != "None") p->axis = r.getTuple("axis");
    return p;
}

void squeezeShape(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<SqueezeParams>(params);
    requireRank(in[0], "input 'data'");
    const Shape& d = in[0];
    std::vector<bool> drop(static_cast<size_t>(d.ndim()), false);
    if (p.axis) {
        for (int64_t a : *p.axis) {
            const int axis = shapeops::normalizeAxis(a, d, "input 'data'");
            if (d[axis] != 1)
                throw ShapeError("input 'data': cannot squeeze axis " + std::to_string(a) + " of shape " + d.str()
                    + ": its size is " + std::to_string(d[axis]) + ", not 1");
            if (drop[static_cast<size_t>(axis)])
                throw ShapeError("input 'data': axis " + std::to_string(a) + " of shape " + d.str()
                    + " is given twice in axis=" + tupleAttr(*p.axis));
            drop[static_cast<size_t>(axis)] = true;
        }
    } else {
        for (int i = 0; i < d.ndim(); ++i)
            drop[static_cast<size_t>(i)] = d[i] == 1;
    }
    Shape o;
    for (int i = 0; i < d.ndim(); ++i)
        if (!drop[static_cast<size_t>(i)]) o.push_back(d[i]);
    // MXNet keeps one dimension: squeeze of (1, 1) is (1,), not a scalar.
    if (o.ndim() == 0) o.push_back(1);
    assignShape(out[0], o, "output");
}

// ---- _copy ---------------------------------------------------------------------------------

void copyShape(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)
{
    requireRank(in[0], "input 'data'");
    assignShape(out[0], in[0], "output");
}

ParamsPtr parseNone(const AttrMap&)
{
    return std::make_shared<NoParams>();
}

// Every operator here has one input and one output. MXNet registers slot names only for
// squeeze (`data`); the others fall back to `input0` / `0` in the op hook.
OpDef unaryShapeOp(std::string name)
{
    OpDef d;
    d.name = std::move(name);
    d.parse = parseNone;
    d.numInputs = constant(1);
    d.numOutputs = constant(1);
    d.reference = makeCopyKernel;
    d.backward = backwardCopy;
    return d;
}

} // namespace

void registerReshapeOps(OpRegistry& r)
{
    OpDef flatten = unaryShapeOp("Flatten");
    flatten.inferShape = flattenShape;
    r.add(std::move(flatten), { "flatten" });

    OpDef reshape = unaryShapeOp("Reshape");
    reshape.parse = parseReshape;
    reshape.inferShape = reshapeShape;
    r.add(std::move(reshape), { "reshape" });

    OpDef expand = unaryShapeOp("expand_dims");
    expand.parse = parseExpandDims;
    expand.inferShape = expandDimsShape;
    r.add(std::move(expand));

    OpDef squeeze = unaryShapeOp("squeeze");
    squeeze.parse = parseSqueeze;
    squeeze.nameInputs({ "data" });
    squeeze.inferShape = squeezeShape;
    r.add(std::move(squeeze));

    OpDef copy = unaryShapeOp("_copy");
    copy.inferShape = copyShape;
    r.add(std::move(copy), { "identity" });
}

} // namespace opscope
