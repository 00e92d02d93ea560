// ONNX's operators that move or reshape elements without computing them: Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Concat, Split, Expand, Tile, Shape, Size, ConstantOfShape, Range.
// They work on raw bytes, so every element type is supported.

#include "core/checked.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/onnx/shape_util.h"
#include "ops/registry.h"

#include <cmath>
#include <cstring>

namespace opscope {

using namespace onnx_ops;

namespace {

struct ShapeParams : OnnxParams {
    std::vector<int64_t> values; // shape, axes, perm, repeats, split sizes…
    bool has = false;
    int64_t axis = 0;
    int64_t start = 0, end = INT64_MAX; // Shape
    bool allowZero = false;
    double fill = 0; // ConstantOfShape
    DType fillType = DType::Float32;
};

template <class P = ShapeParams>
std::shared_ptr<P> base(const AttrMap& attrs, const char* op, int minIn, int maxIn, int maxOut = 1)
{
    auto p = std::make_shared<P>();
    OnnxAttrs(attrs, op).fillBase(*p, minIn, maxIn, maxOut);
    return p;
}

void copyKernel(const Tensor& in, const Tensor& out)
{
    if (in.bytes()) std::memcpy(out.raw(), in.raw(), in.bytes());
}

OpDef byteCopyOp(const char* name)
{
    OpDef def = onnxOp(name);
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                copyKernel(*in[0], *out[0]);
            });
    };
    return def;
}

void addReshape(OpRegistry& r)
{
    OpDef def = byteCopyOp("Reshape");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Reshape");
        auto p = base(attrs, "Reshape", 1, 2);
        p->values = p->opset < 5 ? a.getInts("shape", {}) : a.requireInputInts(1, "shape");
        p->allowZero = a.getInt("allowzero", 0) != 0;
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ShapeParams>(p);
        out[0] = reshapeTarget(in[0], q.values, q.allowZero);
    };
    addOnnxOp(r, std::move(def));
}

void addFlatten(OpRegistry& r)
{
    OpDef def = byteCopyOp("Flatten");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "Flatten", 1, 1);
        p->axis = OnnxAttrs(attrs, "Flatten").getInt("axis", 1);
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const int rank = in[0].ndim();
        int64_t axis = paramsAs<ShapeParams>(p).axis;
        if (axis < -rank || axis > rank)
            throw ShapeError("Flatten: axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", "
                + std::to_string(rank) + "]");
        if (axis < 0) axis += rank;
        out[0] = Shape({ in[0].product(0, static_cast<int>(axis)), in[0].product(static_cast<int>(axis), rank) });
    };
    addOnnxOp(r, std::move(def));
}

// Squeeze (axes: attribute before 13, input from 13; none: every 1) and Unsqueeze.
void addSqueezes(OpRegistry& r)
{
    for (const char* name : { "Squeeze", "Unsqueeze" }) {
        const bool un = std::string(name) == "Unsqueeze";
        OpDef def = byteCopyOp(name);
        def.parse = [name, un](const AttrMap& attrs) {
            OnnxAttrs a(attrs, name);
            auto p = base(attrs, name, 1, 2);
            if (p->opset < 13) {
                p->has = a.has("axes");
                p->values = a.getInts("axes", {});
            } else if (p->hasInput(1)) {
                p->values = a.requireInputInts(1, "axes");
                p->has = true;
            }
            if (un && !p->has) a.fail("axes", "Unsqueeze needs axes");
            return p;
        };
        def.inferShape = [un](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
            const auto& q = paramsAs<ShapeParams>(p);
            out[0] = un ? unsqueezed(in[0], q.values) : squeezed(in[0], q.values, q.has);
        };
        addOnnxOp(r, std::move(def));
    }
}

void addTranspose(OpRegistry& r)
{
    OpDef def = onnxOp("Transpose");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "Transpose", 1, 1);
        OnnxAttrs a(attrs, "Transpose");
        p->has = a.has("perm");
        p->values = a.getInts("perm", {});
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ShapeParams>(p);
        out[0] = permuted(in[0], permutationOf(q.values, q.has, in[0].ndim()));
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
    def.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const auto& q = paramsAs<ShapeParams>(p);
        const std::vector<int> perm = permutationOf(q.values, q.has, in[0].ndim());
        return lambdaKernel(q, [perm](const ShapeParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out,
                                   RunContext&) { transposeBytes(*in[0], *out[0], perm); });
    };
    addOnnxOp(r, std::move(def));
}

void addConcat(OpRegistry& r)
{
    OpDef def = onnxOp("Concat");
    def.parse = [](const AttrMap& attrs) {
        auto p = base(attrs, "Concat", 1, 1 << 16);
        p->axis = OnnxAttrs(attrs, "Concat").getInt("axis", 1);
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const int rank = in[0].ndim();
        const int axis = normalizeAxis(paramsAs<ShapeParams>(p).axis, rank, "Concat");
        Shape s = in[0];
        for (size_t k = 1; k < in.size(); ++k) {
            if (in[k].ndim() != rank) shapeMismatch("Concat input " + std::to_string(k), in[0], in[k]);
            for (int d = 0; d < rank; ++d)
                if (d != axis && in[k][d] != s[d]) shapeMismatch("Concat input " + std::to_string(k), in[0], in[k]);
            s[axis] += in[k][axis];
        }
        out[0] = s;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), "Concat");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& os = out[0]->shape();
                const int axis = normalizeAxis(q.axis, os.ndim(), "Concat");
                const size_t es = dtypeSize(out[0]->dtype());
                const int64_t outer = os.product(0, axis), inner = os.product(axis + 1, os.ndim());
                char* o = static_cast<char*>(out[0]->raw());
                int64_t at = 0;
                for (const Tensor* t : in) {
                    const int64_t len = t->shape()[axis] * inner;
                    const char* src = static_cast<const char*>(t->raw());
                    for (int64_t i = 0; i < outer; ++i)
                        std::memcpy(o + (i * os[axis] * inner + at) * static_cast<int64_t>(es), src + i * len * static_cast<int64_t>(es),
                            static_cast<size_t>(len) * es);
                    at += len;
                }
            });
    };
    addOnnxOp(r, std::move(def));
}

void addSplit(OpRegistry& r)
{
    OpDef def = onnxOp("Split");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Split");
        auto p = base(attrs, "Split", 1, 2, 1 << 16);
        p->axis = a.getInt("axis", 0);
        if (p->opset < 13) {
            p->values = a.getInts("split", {});
        } else if (p->hasInput(1)) {
            p->values = a.requireInputInts(1, "split");
        }
        if (!p->values.empty() && static_cast<int>(p->values.size()) != p->numOutputs)
            a.fail("split", "has " + std::to_string(p->values.size()) + " sizes for " + std::to_string(p->numOutputs)
                    + " outputs");
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& q = paramsAs<ShapeParams>(p);
        const int axis = normalizeAxis(q.axis, in[0].ndim(), "Split");
        const std::vector<int64_t> sizes = splitSizes(in[0][axis], q.values, q.numOutputs);
        for (size_t k = 0; k < out.size(); ++k) {
            out[k] = in[0];
            out[k][axis] = sizes[k];
        }
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        std::fill(out.begin(), out.end(), in[0]);
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& is = in[0]->shape();
                const int axis = normalizeAxis(q.axis, is.ndim(), "Split");
                const size_t es = dtypeSize(in[0]->dtype());
                const int64_t outer = is.product(0, axis), inner = is.product(axis + 1, is.ndim());
                const char* src = static_cast<const char*>(in[0]->raw());
                int64_t at = 0;
                for (Tensor* t : out) {
                    const int64_t len = t->shape()[axis] * inner;
                    char* dst = static_cast<char*>(t->raw());
                    for (int64_t i = 0; i < outer; ++i)
                        std::memcpy(dst + i * len * static_cast<int64_t>(es), src + (i * is[axis] * inner + at) * static_cast<int64_t>(es),
                            static_cast<size_t>(len) * es);
                    at += len;
                }
            });
    };
    addOnnxOp(r, std::move(def));
}

// Expand (bidirectional broadcast to a shape) and Tile (repeats): both index the input per output
// element.
void addExpandTile(OpRegistry& r)
{
    for (const char* name : { "Expand", "Tile" }) {
        const bool tile = std::string(name) == "Tile";
        OpDef def = onnxOp(name);
        def.parse = [name, tile](const AttrMap& attrs) {
            OnnxAttrs a(attrs, name);
            auto p = base(attrs, name, 2, 2);
            p->values = a.requireInputInts(1, tile ? "repeats" : "shape");
            return p;
        };
        def.inferShape = [tile](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
            const auto& v = paramsAs<ShapeParams>(p).values;
            if (!tile) {
                out[0] = broadcastShapes(in[0], shapeOfValues(v, "Expand"));
                return;
            }
            if (static_cast<int>(v.size()) != in[0].ndim())
                throw ShapeError("Tile: " + std::to_string(v.size()) + " repeats for a tensor of rank "
                    + std::to_string(in[0].ndim()));
            Shape s = in[0];
            for (int d = 0; d < s.ndim(); ++d) {
                if (v[static_cast<size_t>(d)] < 0) throw ShapeError("Tile: negative repeat " + std::to_string(v[static_cast<size_t>(d)]));
                const auto grown = checkedMul(s[d], v[static_cast<size_t>(d)]);
                if (!grown) throw ShapeError("Tile: " + in[0].str() + " repeated " + std::to_string(v[static_cast<size_t>(d)]) + " times overflows");
                s[d] = *grown;
            }
            out[0] = s;
        };
        def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
        def.reference = [tile](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
            return lambdaKernel(paramsAs<ShapeParams>(p),
                [tile](const ShapeParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                    if (tile)
                        tileBytes(*in[0], *out[0]);
                    else
                        expandBytes(*in[0], *out[0]);
                });
        };
        addOnnxOp(r, std::move(def));
    }
}

// Shape and Size of a tensor whose shape is known before the run are folded by the importer; these
// kernels compute them at run time otherwise.
void addShapeSize(OpRegistry& r)
{
    OpDef shape = onnxOp("Shape");
    shape.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Shape");
        auto p = base(attrs, "Shape", 1, 1);
        p->start = a.getInt("start", 0);
        p->end = a.getInt("end", INT64_MAX);
        return p;
    };
    shape.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto [b, e] = shapeRange(in[0].ndim(), paramsAs<ShapeParams>(p).start, paramsAs<ShapeParams>(p).end);
        out[0] = Shape({ e - b });
    };
    shape.inferType = [](const OpParams&, std::span<const DType>, std::span<DType> out) { out[0] = DType::Int64; };
    shape.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const auto [b, e] = shapeRange(in[0]->ndim(), q.start, q.end);
                for (int64_t d = b; d < e; ++d)
                    out[0]->dataAs<int64_t>()[d - b] = in[0]->shape()[static_cast<int>(d)];
            });
    };
    addOnnxOp(r, std::move(shape));

    OpDef size = onnxOp("Size");
    size.parse = [](const AttrMap& attrs) { return base(attrs, "Size", 1, 1); };
    size.inferShape = [](const OpParams&, std::vector<Shape>&, std::vector<Shape>& out) { out[0] = Shape::scalar(); };
    size.inferType = [](const OpParams&, std::span<const DType>, std::span<DType> out) { out[0] = DType::Int64; };
    size.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                out[0]->dataAs<int64_t>()[0] = in[0]->size();
            });
    };
    addOnnxOp(r, std::move(size));
}

void addConstantOfShape(OpRegistry& r)
{
    OpDef def = onnxOp("ConstantOfShape");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "ConstantOfShape");
        auto p = base(attrs, "ConstantOfShape", 1, 1);
        p->values = a.requireInputInts(0, "shape");
        const std::string v = a.getString("value", "float32:0");
        const size_t colon = v.find(':');
        const auto t = colon == std::string::npos ? std::nullopt : dtypeFromName(v.substr(0, colon));
        if (!t) a.fail("value", "expected <type>:<number>");
        p->fillType = *t;
        try {
            p->fill = parseFloatAttr(v.substr(colon + 1));
        } catch (const std::exception& e) {
            a.fail("value", e.what());
        }
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>&, std::vector<Shape>& out) {
        const auto& v = paramsAs<ShapeParams>(p).values;
        out[0] = v.empty() ? Shape::scalar() : shapeOfValues(v, "ConstantOfShape");
    };
    def.inferType = [](const OpParams& p, std::span<const DType>, std::span<DType> out) {
        out[0] = paramsAs<ShapeParams>(p).fillType;
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams& q, std::span<const Tensor* const>, std::span<Tensor* const> out, RunContext&) {
                out[0]->fillWith(q.fill);
            });
    };
    addOnnxOp(r, std::move(def));
}

void addRange(OpRegistry& r)
{
    OpDef def = onnxOp("Range");
    def.parse = [](const AttrMap& attrs) {
        OnnxAttrs a(attrs, "Range");
        auto p = base(attrs, "Range", 3, 3);
        const auto start = a.inputFloats(0), limit = a.inputFloats(1), delta = a.inputFloats(2);
        if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1)
            a.requireInputInts(!start ? 0 : !limit ? 1 : 2, "start, limit and delta");
        const double d = (*delta)[0];
        if (d == 0) a.fail("__in2__", "delta is 0");
        const double count = std::max(0.0, std::ceil(((*limit)[0] - (*start)[0]) / d));
        if (!(count <= 1e15)) a.fail("__in1__", "the range has too many elements");
        p->values = { static_cast<int64_t>(count) };
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>&, std::vector<Shape>& out) {
        out[0] = Shape({ paramsAs<ShapeParams>(p).values[0] });
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "Range", 0);
        requireSameType(in, 0, 1, "Range");
        requireSameType(in, 0, 2, "Range");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ShapeParams>(p),
            [](const ShapeParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        const Calc<T> start = load(in[0]->dataAs<T>()[0]), delta = load(in[2]->dataAs<T>()[0]);
                        T* o = out[0]->dataAs<T>();
                        for (int64_t i = 0, n = out[0]->size(); i < n; ++i)
                            o[i] = store<T>(start + static_cast<Calc<T>>(i) * delta);
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxShapeOps(OpRegistry& r)
{
    addReshape(r);
    addFlatten(r);
    addSqueezes(r);
    addTranspose(r);
    addConcat(r);
    addSplit(r);
    addExpandTile(r);
    addShapeSize(r);
    addConstantOfShape(r);
    addRange(r);
}

} // namespace opscope
