// ONNX's indexing operators: Gather, GatherElements, GatherND, Slice, Pad, OneHot, Trilu,
// ScatterElements, ScatterND. Indices may be int32 or int64 and negative (counted from the end); one
// outside its range is an error naming it and the bound.

#include "ops/onnx/index_util.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/onnx/shape_util.h"
#include "ops/registry.h"

#include <cstring>

namespace opscope {

using namespace onnx_ops;

namespace {

constexpr DType kIndexTypes[] = { DType::Int64, DType::Int32 };

struct IndexParams : OnnxParams {
    int64_t axis = 0;
    int64_t batchDims = 0;
    std::string reduction = "none";
    SliceSpec slice;
    std::vector<int64_t> pads;
    std::string mode = "constant";
    int64_t depth = 0;
    bool upper = true;
    std::vector<int64_t> padAxes;
    double padValue = 0; // before opset 11
};

template <class P = IndexParams> std::shared_ptr<P> base(const AttrMap& attrs, const char* op, int minIn, int maxIn)
{
    auto p = std::make_shared<P>();
    OnnxAttrs(attrs, op).fillBase(*p, minIn, maxIn);
    return p;
}

void addGather(OpRegistry& r)
{
    OpDef def = onnxOp("Gather");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "Gather", 2, 2);
        p->axis = OnnxAttrs(attrs, "Gather").getInt("axis", 0);
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const int axis = normalizeAxis(paramsAs<IndexParams>(p).axis, in[0].ndim(), "Gather");
        Shape s;
        for (int d = 0; d < axis; ++d)
            s.push_back(in[0][d]);
        for (int d = 0; d < in[1].ndim(); ++d)
            s.push_back(in[1][d]);
        for (int d = axis + 1; d < in[0].ndim(); ++d)
            s.push_back(in[0][d]);
        if (s.ndim() > Shape::kMaxDims) throw ShapeError("Gather: result of rank " + std::to_string(s.ndim()));
        out[0] = s.ndim() == 0 ? Shape::scalar() : s;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[1], kIndexTypes, "Gather", 1);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IndexParams>(p),
            [](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                gatherAxis(*in[0], *in[1], *out[0], normalizeAxis(q.axis, in[0]->ndim(), "Gather"));
            });
    };
    addOnnxOp(r, std::move(def));
}

void addGatherElements(OpRegistry& r)
{
    OpDef def = onnxOp("GatherElements");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "GatherElements", 2, 2);
        p->axis = OnnxAttrs(attrs, "GatherElements").getInt("axis", 0);
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[1].ndim() != in[0].ndim()) shapeMismatch("GatherElements indices", in[0], in[1]);
        out[0] = in[1];
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[1], kIndexTypes, "GatherElements", 1);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IndexParams>(p),
            [](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                gatherElements(*in[0], *in[1], *out[0], normalizeAxis(q.axis, in[0]->ndim(), "GatherElements"));
            });
    };
    addOnnxOp(r, std::move(def));
}

void addGatherND(OpRegistry& r)
{
    OpDef def = onnxOp("GatherND");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "GatherND", 2, 2);
        p->batchDims = OnnxAttrs(attrs, "GatherND").getInt("batch_dims", 0);
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        out[0] = gatherNDShape(in[0], in[1], paramsAs<IndexParams>(p).batchDims);
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[1], std::span<const DType>(kIndexTypes, 1), "GatherND", 1);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IndexParams>(p),
            [](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                gatherND(*in[0], *in[1], *out[0], q.batchDims);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addSlice(OpRegistry& r)
{
    OpDef def = onnxOp("Slice");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Slice");
        auto p = base(attrs, "Slice", 1, 5);
        if (p->opset < 10) {
            p->slice.starts = a.getInts("starts", {});
            p->slice.ends = a.getInts("ends", {});
            p->slice.axes = a.getInts("axes", {});
        } else {
            p->slice.starts = a.requireInputInts(1, "starts");
            p->slice.ends = a.requireInputInts(2, "ends");
            if (p->hasInput(3)) p->slice.axes = a.requireInputInts(3, "axes");
            if (p->hasInput(4)) p->slice.steps = a.requireInputInts(4, "steps");
        }
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        out[0] = resolveSlice(paramsAs<IndexParams>(p).slice, in[0]).shape;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
    def.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const ResolvedSlice s = resolveSlice(paramsAs<IndexParams>(p).slice, in[0]);
        return lambdaKernel(paramsAs<IndexParams>(p),
            [s](const IndexParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                sliceBytes(*in[0], *out[0], s);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addPad(OpRegistry& r)
{
    OpDef def = onnxOp("Pad");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Pad");
        auto p = base(attrs, "Pad", 1, 4);
        p->mode = a.getString("mode", "constant");
        if (p->mode != "constant" && p->mode != "reflect" && p->mode != "edge")
            a.fail("mode", "expected constant, reflect or edge");
        p->pads = p->opset < 11 ? a.getInts("pads", {}) : a.requireInputInts(1, "pads");
        if (p->hasInput(3)) p->padAxes = a.requireInputInts(3, "axes");
        p->padValue = a.getFloat("value", 0);
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<IndexParams>(p);
        out[0] = paddedShape(in[0], padsFor(q.pads, q.padAxes, in[0].ndim()));
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
    def.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const auto& q = paramsAs<IndexParams>(p);
        const std::vector<int64_t> pads = padsFor(q.pads, q.padAxes, in[0].ndim());
        return lambdaKernel(q, [pads](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out,
                                   RunContext&) {
            double value = q.opset < 11 ? q.padValue : 0.0;
            const int iv = q.inputIndex(2);
            if (iv >= 0 && in[static_cast<size_t>(iv)]->size() > 0) value = in[static_cast<size_t>(iv)]->view().valueAt(0);
            padTensor(*in[0], *out[0], pads, q.mode, value);
        });
    };
    addOnnxOp(r, std::move(def));
}

void addOneHot(OpRegistry& r)
{
    OpDef def = onnxOp("OneHot");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "OneHot");
        auto p = base(attrs, "OneHot", 3, 3);
        p->axis = a.getInt("axis", -1);
        const auto depth = a.inputFloats(1);
        if (!depth || depth->size() != 1) a.requireInputInts(1, "depth");
        p->depth = static_cast<int64_t>((*depth)[0]);
        if (p->depth < 1) a.fail("__in1__", "depth must be positive");
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<IndexParams>(p);
        const int rank = in[0].ndim() + 1;
        const int axis = normalizeAxis(q.axis, rank, "OneHot");
        out[0] = unsqueezed(in[0].isScalar() ? Shape() : in[0], { axis });
        out[0][axis] = q.depth;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "OneHot", 0);
        out[0] = in[2];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IndexParams>(p),
            [](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                oneHot(*in[0], *in[2], *out[0], normalizeAxis(q.axis, out[0]->ndim(), "OneHot"), q.depth);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addTrilu(OpRegistry& r)
{
    OpDef def = onnxOp("Trilu");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "Trilu", 1, 2);
        p->upper = OnnxAttrs(attrs, "Trilu").getInt("upper", 1) != 0;
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() < 2) throw ShapeError("Trilu: input of rank " + std::to_string(in[0].ndim()) + ", at least 2");
        out[0] = in[0];
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<IndexParams>(p),
            [](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const int64_t k = q.hasInput(1) ? static_cast<int64_t>(in[1]->view().valueAt(0)) : 0;
                trilu(*in[0], *out[0], k, q.upper);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addScatters(OpRegistry& r)
{
    for (const char* name : { "ScatterElements", "ScatterND", "Scatter" }) {
        const std::string op = name;
        OpDef def = onnxOp(name);
        def.parse = [op](const AttrMap& attrs) {
            OnnxAttrs a(attrs, op);
            auto p = base(attrs, op.c_str(), 3, 3);
            p->axis = a.getInt("axis", 0);
            p->reduction = a.getString("reduction", "none");
            if (p->reduction != "none" && p->reduction != "add" && p->reduction != "mul")
                a.fail("reduction", "expected none, add or mul");
            return p;
        };
        def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
        def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
            requireType(in[1], kIndexTypes, op, 1);
            requireSameType(in, 0, 2, op);
            out[0] = in[0];
        };
        def.reference = [op](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
            return lambdaKernel(paramsAs<IndexParams>(p),
                [op](const IndexParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                    if (op == "ScatterND")
                        scatterND(*in[0], *in[1], *in[2], *out[0], q.reduction);
                    else
                        scatterElements(*in[0], *in[1], *in[2], *out[0], normalizeAxis(q.axis, in[0]->ndim(), op), q.reduction);
                });
        };
        addOnnxOp(r, std::move(def));
    }
}

} // namespace

void registerOnnxIndexOps(OpRegistry& r)
{
    addGather(r);
    addGatherElements(r);
    addGatherND(r);
    addSlice(r);
    addPad(r);
    addOneHot(r);
    addTrilu(r);
    addScatters(r);
}

} // namespace opscope
