#include "exec/op_flops.h"

#include "ops/op.h"

#include <string_view>

namespace opscope {

namespace {
    bool truthy(const AttrMap& attrs, const std::string& key)
    {
        const auto it = attrs.find(key);
        return it != attrs.end() && (it->second == "1" || it->second == "True" || it->second == "true");
    }

    // Beyond ~9.2e18 a product overflows: such a count is not defined either.
    int64_t times(int64_t a, int64_t b)
    {
        int64_t r = 0;
        return a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) ? -1 : r;
    }
}

int64_t opFlops(const Graph& graph, uint32_t nodeId, const std::vector<Shape>& entryShapes)
{
    const Node& n = graph.node(nodeId);
    if (n.isVariable() || n.inputs.empty()) return -1;
    auto inShape = [&](size_t k) -> const Shape* {
        if (k >= n.inputs.size()) return nullptr;
        const uint32_t e = graph.entryId(n.inputs[k]);
        return e < entryShapes.size() ? &entryShapes[e] : nullptr;
    };
    const uint32_t outEntry = graph.entryId(nodeId, 0);
    if (outEntry >= entryShapes.size()) return -1;
    const Shape& out = entryShapes[outEntry];
    const std::string_view op = n.opName();
    const Shape* a = inShape(0);
    const Shape* w = inShape(1);
    if (!a || !w) return -1;

    if (op == "Convolution" || (n.onnx && op == "Conv") || op == "FullyConnected") {
        // Every output element is a dot product over one filter: weight [Cout, Cin/group, k...]
        // (FullyConnected: [units, inputs]).
        if (w->ndim() < 2 || w->dim(0) <= 0) return -1;
        return times(2, times(out.size(), w->size() / w->dim(0)));
    }
    if (op == "Deconvolution" || (n.onnx && op == "ConvTranspose")) {
        // Every input element is scattered through one filter: weight [Cin, Cout/group, k...].
        if (w->ndim() < 2 || w->dim(0) <= 0) return -1;
        return times(2, times(a->size(), w->size() / w->dim(0)));
    }
    if (n.onnx && (op == "MatMul" || op == "Gemm")) {
        // MatMul: A [..., M, K] or [K]; Gemm: A [M, K] or, transposed, [K, M].
        if (a->ndim() == 0) return -1;
        int64_t k = a->dim(a->ndim() - 1);
        if (op == "Gemm" && a->ndim() == 2 && truthy(n.attrs, "transA")) k = a->dim(0);
        return times(2, times(out.size(), k));
    }
    if (op == "dot" || op == "batch_dot") {
        if (a->ndim() < (op == "dot" ? 1 : 2)) return -1;
        const bool transA = truthy(n.attrs, "transpose_a");
        // dot of N-D arrays sums over A's last axis (its first when transposed); batch_dot over
        // the last axis of each matrix (the one before it when transposed).
        int64_t k = a->dim(a->ndim() - 1);
        if (transA) k = op == "dot" ? a->dim(0) : a->dim(a->ndim() - 2);
        return times(2, times(out.size(), k));
    }
    return -1;
}

} // namespace opscope
