// ONNX's Einsum (explicit and implicit outputs, ellipsis, repeated labels for diagonals and traces,
// any number of inputs) as one loop over every label's range, and three small operators: EyeLike,
// Shrink, Compress (its condition known before the run).

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"
#include "io/onnx_tensor.h"

#include <algorithm>
#include <map>

namespace opscope {

using namespace onnx_ops;

namespace {

struct EinsumParams : OnnxParams {
    std::string equation;
    int64_t k = 0;
    std::optional<DType> dtype;
    double lambd = 0.5, bias = 0;
    std::vector<int64_t> condition;
    bool hasAxis = false;
    int64_t axis = 0;
};

// The equation with each input's labels (ellipsis expanded to labels '0'…'9' right-aligned) and the
// output's labels; and every label's size.
struct EinsumPlan {
    std::vector<std::string> inputs;
    std::string output;
    std::map<char, int64_t> sizes;
};

EinsumPlan planEinsum(const std::string& equation, const std::vector<Shape>& shapes)
{
    std::string eq;
    for (char c : equation)
        if (c != ' ') eq += c;
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    size_t start = 0;
    while (true) {
        const size_t comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (terms.size() != shapes.size())
        throw ShapeError("Einsum: the equation has " + std::to_string(terms.size()) + " operands, " + std::to_string(shapes.size()) + " inputs given");
    EinsumPlan plan;
    int ellipsisRank = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
        std::string t = terms[i];
        const size_t dots = t.find("...");
        const int letters = static_cast<int>(t.size()) - (dots == std::string::npos ? 0 : 3);
        const int rank = shapes[i].ndim();
        if (dots == std::string::npos ? letters != rank : letters > rank)
            throw ShapeError("Einsum: operand " + std::to_string(i) + " '" + t + "' for an input of rank " + std::to_string(rank));
        if (dots != std::string::npos) {
            const int n = rank - letters;
            ellipsisRank = std::max(ellipsisRank, n);
            std::string labels;
            for (int k = 0; k < n; ++k)
                labels += static_cast<char>('0' + (10 - n + k)); // right-aligned across operands
            t = t.substr(0, dots) + labels + t.substr(dots + 3);
        }
        for (size_t d = 0; d < t.size(); ++d) {
            const char c = t[d];
            if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)))
                throw ShapeError(std::string("Einsum: label '") + c + "' in '" + terms[i] + "'");
            const int64_t size = shapes[i][static_cast<int>(d)];
            auto it = plan.sizes.find(c);
            if (it == plan.sizes.end() || it->second == 1) plan.sizes[c] = size;
            else if (size != 1 && size != it->second)
                throw ShapeError(std::string("Einsum: label '") + c + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(size));
        }
        plan.inputs.push_back(t);
    }
    std::string ellipsis;
    for (int k = 0; k < ellipsisRank; ++k)
        ellipsis += static_cast<char>('0' + (10 - ellipsisRank + k));
    if (arrow != std::string::npos) {
        std::string out = eq.substr(arrow + 2);
        const size_t dots = out.find("...");
        if (dots != std::string::npos) out = out.substr(0, dots) + ellipsis + out.substr(dots + 3);
        for (char c : out)
            if (!plan.sizes.count(c)) throw ShapeError(std::string("Einsum: output label '") + c + "' is in no operand");
        plan.output = out;
    } else { // implicit: the ellipsis, then every letter used once, alphabetically
        std::map<char, int> counts;
        for (const std::string& t : plan.inputs)
            for (char c : t)
                if (std::isalpha(static_cast<unsigned char>(c))) ++counts[c];
        plan.output = ellipsis;
        for (const auto& [c, n] : counts)
            if (n == 1) plan.output += c;
    }
    return plan;
}

void addEinsum(OpRegistry& r)
{
    OpDef def = onnxOp("Einsum");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<EinsumParams>();
        OnnxAttrs a(attrs, "Einsum");
        a.fillBase(*p, 1, 1 << 10);
        p->equation = a.getString("equation", "");
        if (p->equation.empty()) a.fail("equation", "is required");
        return p;
    };
    def.inferShape = [](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        const EinsumPlan plan = planEinsum(paramsAs<EinsumParams>(p).equation, in);
        Shape s;
        for (char c : plan.output)
            s.push_back(plan.sizes.at(c));
        out[0] = s.ndim() ? s : Shape::scalar();
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "Einsum", 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), "Einsum");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<EinsumParams>(p),
            [](const EinsumParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                std::vector<Shape> shapes;
                for (const Tensor* t : in)
                    shapes.push_back(t->shape());
                const EinsumPlan plan = planEinsum(q.equation, shapes);
                std::string labels = plan.output; // output labels first, then the summed ones
                for (const auto& [c, n] : plan.sizes)
                    if (labels.find(c) == std::string::npos) labels += c;
                const size_t L = labels.size();
                std::vector<int64_t> extent(L);
                for (size_t l = 0; l < L; ++l)
                    extent[l] = plan.sizes.at(labels[l]);
                // Per operand and label: the element stride (0 where the operand broadcasts it).
                std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(L, 0));
                for (size_t i = 0; i < in.size(); ++i) {
                    const std::vector<int64_t> st = stridesOf(shapes[i]);
                    for (size_t d = 0; d < plan.inputs[i].size(); ++d)
                        if (shapes[i][static_cast<int>(d)] != 1)
                            strides[i][labels.find(plan.inputs[i][d])] += st[d];
                }
                int64_t outSize = 1, total = 1;
                for (size_t l = 0; l < L; ++l) {
                    total *= extent[l];
                    if (l < plan.output.size()) outSize *= extent[l];
                }
                std::vector<double> acc(static_cast<size_t>(outSize), 0.0);
                std::vector<TensorView> views;
                for (const Tensor* t : in)
                    views.push_back(t->view());
                std::vector<int64_t> idx(L, 0), off(in.size(), 0);
                for (int64_t n = 0; n < total; ++n) {
                    double prod = 1;
                    for (size_t i = 0; i < in.size(); ++i)
                        prod *= views[i].valueAt(off[i]);
                    int64_t o = 0;
                    for (size_t l = 0; l < plan.output.size(); ++l)
                        o = o * extent[l] + idx[l];
                    acc[static_cast<size_t>(o)] += prod;
                    for (size_t l = L; l-- > 0;) {
                        ++idx[l];
                        for (size_t i = 0; i < in.size(); ++i)
                            off[i] += strides[i][l];
                        if (idx[l] < extent[l]) break;
                        for (size_t i = 0; i < in.size(); ++i)
                            off[i] -= strides[i][l] * extent[l];
                        idx[l] = 0;
                    }
                }
                dispatchType(out[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    T* y = out[0]->dataAs<T>();
                    for (int64_t i = 0; i < outSize; ++i)
                        y[i] = fromDouble<T>(acc[static_cast<size_t>(i)]);
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

void addEyeLike(OpRegistry& r)
{
    OpDef def = onnxOp("EyeLike");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<EinsumParams>();
        OnnxAttrs a(attrs, "EyeLike");
        a.fillBase(*p, 1, 1);
        p->k = a.getInt("k", 0);
        if (a.has("dtype")) {
            const auto t = dtypeFromOnnx(static_cast<int>(a.getInt("dtype")));
            if (!t) a.fail("dtype", "element type " + onnxTypeName(static_cast<int>(a.getInt("dtype"))) + " is not supported");
            p->dtype = t;
        }
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        if (in[0].ndim() != 2) throw ShapeError("EyeLike: input " + in[0].str() + " must be 2-D");
        out[0] = in[0];
    };
    def.inferType = [](const OpParams& p, std::span<const DType> in, std::span<DType> out) {
        out[0] = paramsAs<EinsumParams>(p).dtype.value_or(in[0]);
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<EinsumParams>(p),
            [](const EinsumParams& q, std::span<const Tensor* const>, std::span<Tensor* const> out, RunContext&) {
                const Shape& s = out[0]->shape();
                out[0]->fillWith(0);
                Tensor one(Shape({ 1 }), out[0]->dtype());
                one.fillWith(1);
                const size_t es = dtypeSize(out[0]->dtype());
                for (int64_t i = 0; i < s[0]; ++i) {
                    const int64_t j = i + q.k;
                    if (j >= 0 && j < s[1])
                        std::memcpy(static_cast<char*>(out[0]->raw()) + (i * s[1] + j) * static_cast<int64_t>(es), one.raw(), es);
                }
            });
    };
    addOnnxOp(r, std::move(def));
}

void addShrink(OpRegistry& r)
{
    OpDef def = onnxOp("Shrink");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<EinsumParams>();
        OnnxAttrs a(attrs, "Shrink");
        a.fillBase(*p, 1, 1);
        p->lambd = a.getFloat("lambd", 0.5);
        p->bias = a.getFloat("bias", 0);
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, "Shrink", 0);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<EinsumParams>(p),
            [](const EinsumParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* x = in[0]->dataAs<T>();
                    T* y = out[0]->dataAs<T>();
                    for (int64_t i = 0, n = in[0]->size(); i < n; ++i) {
                        const double v = toDouble(x[i]);
                        y[i] = fromDouble<T>(v < -q.lambd ? v + q.bias : v > q.lambd ? v - q.bias : 0.0);
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

void addCompress(OpRegistry& r)
{
    OpDef def = onnxOp("Compress");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<EinsumParams>();
        OnnxAttrs a(attrs, "Compress");
        a.fillBase(*p, 2, 2);
        p->hasAxis = a.has("axis");
        p->axis = a.getInt("axis", 0);
        p->condition = a.requireInputInts(1, "condition");
        return p;
    };
    def.inferShape = [](const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& p = paramsAs<EinsumParams>(params);
        const int64_t kept = std::count_if(p.condition.begin(), p.condition.end(), [](int64_t v) { return v != 0; });
        if (!p.hasAxis) {
            out[0] = Shape({ std::min<int64_t>(kept, in[0].size()) });
            return;
        }
        const int axis = normalizeAxis(p.axis, in[0].ndim(), "Compress");
        if (static_cast<int64_t>(p.condition.size()) > in[0][axis])
            throw ShapeError("Compress: a condition of " + std::to_string(p.condition.size()) + " for an axis of " + std::to_string(in[0][axis]));
        out[0] = in[0];
        out[0][axis] = kept;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        constexpr DType kBool[] = { DType::Bool };
        requireType(in[1], kBool, "Compress", 1);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<EinsumParams>(p),
            [](const EinsumParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& s = in[0]->shape();
                const size_t es = dtypeSize(in[0]->dtype());
                const char* src = static_cast<const char*>(in[0]->raw());
                char* dst = static_cast<char*>(out[0]->raw());
                const int axis = q.hasAxis ? normalizeAxis(q.axis, s.ndim(), "Compress") : 0;
                const int64_t outer = q.hasAxis ? s.product(0, axis) : 1;
                const int64_t dim = q.hasAxis ? s[axis] : s.size();
                const int64_t inner = q.hasAxis ? s.product(axis + 1, s.ndim()) : 1;
                int64_t at = 0;
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t k = 0; k < dim && k < static_cast<int64_t>(q.condition.size()); ++k)
                        if (q.condition[static_cast<size_t>(k)]) {
                            std::memcpy(dst + at * static_cast<int64_t>(es), src + (o * dim + k) * inner * static_cast<int64_t>(es),
                                static_cast<size_t>(inner) * es);
                            at += inner;
                        }
            });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxEinsum(OpRegistry& r)
{
    addEinsum(r);
    addEyeLike(r);
    addShrink(r);
    addCompress(r);
}

} // namespace opscope
