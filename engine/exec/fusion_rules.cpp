#include "exec/fusion_rules.h"

#include "ops/attrs.h"
#include "ops/onnx/onnx_op.h"

#include <array>
#include <cmath>
#include <limits>

namespace opscope::fusion {

namespace {
bool activation(const Node& n, const char* type)
{
    const auto it = n.attrs.find("act_type");
    return it != n.attrs.end() && it->second == type;
}
}

bool isMatrixProduct(const Node& n)
{
    return !n.isVariable() && n.onnx && (n.op == "MatMul" || n.op == "Gemm");
}

bool takesPostOps(const Node& n)
{
    if (n.isVariable()) return false;
    if (isMatrixProduct(n)) return true;
    return n.onnx ? n.op == "Conv" : n.def->name == "Convolution" || n.def->name == "FullyConnected";
}

bool isAdd(const Node& n)
{
    if (n.isVariable() || n.inputs.size() != 2) return false;
    return n.onnx ? n.op == "Add" : n.def->name == "elemwise_add" || n.def->name == "broadcast_add";
}

std::optional<PostOp> elementwise(const Node& n)
{
    using K = PostOp::Kind;
    if (n.isVariable() || n.numOutputs != 1) return std::nullopt;
    try {
        // A clip keeps NaN (the kernel applies it after storing, not oneDNN's clip post-op, which
        // turns NaN into a bound).
        if (n.onnx) {
            if (n.op == "Relu") return PostOp { K::Relu };
            if (n.op == "Sigmoid") return PostOp { K::Sigmoid };
            if (n.op == "Tanh") return PostOp { K::Tanh };
            if (n.op == "Clip") {
                constexpr float inf = std::numeric_limits<float>::infinity();
                PostOp clip { K::Clip, -inf, inf, true };
                const auto* p = dynamic_cast<const onnx_ops::OnnxParams*>(n.params.get());
                if (!p) return std::nullopt;
                if (p->opset < 11) { // bounds as attributes
                    const onnx_ops::OnnxAttrs a(n.attrs, "Clip");
                    clip.lo = static_cast<float>(a.getFloat("min", -inf));
                    clip.hi = static_cast<float>(a.getFloat("max", inf));
                } else { // bounds as inputs, each optional
                    clip.boundInputs = static_cast<uint8_t>((p->hasInput(1) ? 1 : 0) | (p->hasInput(2) ? 2 : 0));
                }
                return clip;
            }
            return std::nullopt;
        }
        const std::string& op = n.def->name;
        // MXNet's relu is mshadow's (NaN gives 0); Activation's relu is oneDNN's (NaN stays).
        if (op == "relu") return PostOp { K::Relu };
        if (op == "Activation" && activation(n, "relu")) return PostOp { K::Relu, 0.0f, 0.0f, true };
        if (op == "sigmoid" || (op == "Activation" && activation(n, "sigmoid"))) return PostOp { K::Sigmoid };
        if (op == "tanh" || (op == "Activation" && activation(n, "tanh"))) return PostOp { K::Tanh };
        if (op == "LeakyReLU" && activation(n, "gelu")) return PostOp { K::Gelu };
        if (op == "clip") { // the same as ONNX's order only when a_min <= a_max
            const AttrReader r(n.attrs, "clip");
            const auto lo = static_cast<float>(r.getFloat("a_min")), hi = static_cast<float>(r.getFloat("a_max"));
            if (lo <= hi) return PostOp { K::Clip, lo, hi, true };
        }
    } catch (const Error&) {
        return std::nullopt; // attributes the op itself refuses: its own kernel says so
    }
    return std::nullopt;
}

bool isNormalization(const Node& n, bool training)
{
    if (n.isVariable() || n.inputs.size() != 5) return false;
    if (n.onnx) return n.op == "BatchNormalization" && n.numOutputs == 1;
    if (n.def->name != "BatchNorm") return false;
    try {
        const AttrReader r(n.attrs, "BatchNorm");
        return r.getInt("axis", 1) == 1 && (!training || r.getBool("use_global_stats", false));
    } catch (const Error&) {
        return false;
    }
}

void normalizationAffine(const Node& n, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
    const Tensor& var, Tensor& scale, Tensor& shift)
{
    const int64_t channels = mean.size();
    const float* g = gamma.data();
    const float* b = beta.data();
    const float* m = mean.data();
    const float* v = var.data();
    float* sc = scale.data();
    float* sh = shift.data();
    if (n.onnx) { // ONNX's kernel: y = a·x + b in double, a = scale/sqrt(var + eps), b = bias - a·mean
        const double eps = onnx_ops::OnnxAttrs(n.attrs, "BatchNormalization").getFloat("epsilon", 1e-5);
        for (int64_t c = 0; c < channels; ++c) {
            const double a = g[c] / std::sqrt(static_cast<double>(v[c]) + eps);
            sc[c] = static_cast<float>(a);
            sh[c] = static_cast<float>(b[c] - a * m[c]);
        }
        return;
    }
    // MXNet's kernel: scale = invStd·gamma (gamma as 1 under fix_gamma), shift = beta - mean·scale.
    const AttrReader r(n.attrs, "BatchNorm");
    const double eps = r.getFloat("eps", 1e-3);
    const bool fixGamma = r.getBool("fix_gamma", true);
    for (int64_t c = 0; c < channels; ++c) {
        const double variance = v[c];
        const float invStd = variance == 0.0 && eps == 0.0 ? 0.0f : static_cast<float>(1.0 / std::sqrt(variance + eps));
        sc[c] = fixGamma ? invStd : invStd * g[c];
        sh[c] = b[c] - m[c] * sc[c];
    }
}

namespace {
bool onnxNode(const Node& n, const char* op, size_t inputs)
{
    return !n.isVariable() && n.onnx && n.op == op && n.inputs.size() == inputs && n.numOutputs == 1;
}

// Who reads each value of a graph, with the tests a chain applies to a value: read by one node alone,
// a float32 of a given shape, ready before a given node runs.
struct Uses {
    Uses(const Graph& graph, std::span<const Shape> sh, std::span<const DType> ty)
        : g(graph), shapes(sh), types(ty), count(sh.size(), 0), entryNode(sh.size(), 0), readers(sh.size())
    {
        for (uint32_t id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k)
                entryNode[g.entryId(id, k)] = id;
            if (n.isVariable()) continue;
            for (const NodeEntry& e : n.inputs) {
                ++count[g.entryId(e)];
                readers[g.entryId(e)].push_back(id);
            }
        }
        for (const NodeEntry& h : g.heads())
            ++count[g.entryId(h)];
    }
    // The node that alone reads `entry` (no other node, not a head), or -1.
    int64_t soleReader(uint32_t entry) const
    {
        return count[entry] == 1 && readers[entry].size() == 1 ? static_cast<int64_t>(readers[entry][0]) : -1;
    }
    bool floatOf(uint32_t entry, const Shape& shape) const
    {
        return types[entry] == DType::Float32 && shapes[entry] == shape;
    }
    // A variable, or computed by a node that runs before `node`.
    bool readyBefore(uint32_t entry, uint32_t node) const
    {
        return g.node(entryNode[entry]).isVariable() || entryNode[entry] < node;
    }
    // A single float32 value ready before `node` runs (a clip's bound, a GELU's constant).
    bool scalarBefore(uint32_t entry, uint32_t node) const
    {
        return readyBefore(entry, node) && types[entry] == DType::Float32 && shapes[entry].size() == 1;
    }

    const Graph& g;
    std::span<const Shape> shapes;
    std::span<const DType> types;
    std::vector<uint32_t> count, entryNode;
    std::vector<std::vector<uint32_t>> readers;
};

// A GELU as exporters write it (PyTorch's erf form), reading `cur`:
//   Div(cur, a) -> Erf -> Add(., b) -> Mul(cur, .) -> Mul(., c)
// with a, b and c single float32 values ready before `producer` runs, and every value but the last
// read by the next node alone and of cur's shape. Operands of Add and Mul in either order.
struct GeluGroup {
    std::array<uint32_t, 5> nodes; // Div, Erf, Add, Mul, Mul
    std::array<uint32_t, 3> scalars; // a, b, c
};

std::optional<GeluGroup> geluGroup(const Uses& u, uint32_t cur, uint32_t producer)
{
    const Graph& g = u.g;
    const std::vector<uint32_t>& first = u.readers[cur];
    if (u.count[cur] != 2 || first.size() != 2) return std::nullopt;
    const Shape& shape = u.shapes[cur];
    const auto in = [&](uint32_t id, size_t k) { return g.entryId(g.node(id).inputs[k]); };
    const auto out = [&](uint32_t id) { return g.entryId(id, 0); };
    const auto next = [&](uint32_t id) -> int64_t { // the node that alone reads id's output, of cur's shape
        return u.floatOf(out(id), shape) ? u.soleReader(out(id)) : -1;
    };
    const auto scalar = [&](int64_t e) { return e >= 0 && u.scalarBefore(static_cast<uint32_t>(e), producer); };
    // The other operand of a two-input node one of whose operands is `e`, or -1.
    const auto other = [&](uint32_t id, uint32_t e) -> int64_t {
        const uint32_t a = in(id, 0), b = in(id, 1);
        if (a == b) return -1;
        return a == e ? static_cast<int64_t>(b) : b == e ? static_cast<int64_t>(a) : -1;
    };
    // The node `id` when it is an ONNX `op` with `inputs` inputs.
    const auto is = [&](int64_t id, const char* op, size_t inputs) {
        return id >= 0 && onnxNode(g.node(static_cast<uint32_t>(id)), op, inputs);
    };
    GeluGroup grp {};
    const bool divFirst = is(first[0], "Div", 2) && in(first[0], 0) == cur;
    grp.nodes[0] = first[divFirst ? 0 : 1];
    grp.nodes[3] = first[divFirst ? 1 : 0];
    if (!is(grp.nodes[0], "Div", 2) || in(grp.nodes[0], 0) != cur || !scalar(in(grp.nodes[0], 1))) return std::nullopt;
    grp.scalars[0] = in(grp.nodes[0], 1);
    const int64_t erf = next(grp.nodes[0]);
    if (!is(erf, "Erf", 1)) return std::nullopt;
    grp.nodes[1] = static_cast<uint32_t>(erf);
    const int64_t add = next(grp.nodes[1]);
    if (!is(add, "Add", 2)) return std::nullopt;
    grp.nodes[2] = static_cast<uint32_t>(add);
    const int64_t b = other(grp.nodes[2], out(grp.nodes[1]));
    if (!scalar(b)) return std::nullopt;
    grp.scalars[1] = static_cast<uint32_t>(b);
    if (next(grp.nodes[2]) != static_cast<int64_t>(grp.nodes[3]) || !is(grp.nodes[3], "Mul", 2)
        || other(grp.nodes[3], out(grp.nodes[2])) != static_cast<int64_t>(cur))
        return std::nullopt;
    const int64_t mul = next(grp.nodes[3]);
    if (!is(mul, "Mul", 2)) return std::nullopt;
    grp.nodes[4] = static_cast<uint32_t>(mul);
    const int64_t c = other(grp.nodes[4], out(grp.nodes[3]));
    if (!scalar(c) || !u.floatOf(out(grp.nodes[4]), shape)) return std::nullopt;
    grp.scalars[2] = static_cast<uint32_t>(c);
    return grp;
}
}

std::vector<uint32_t> Chain::nodes() const
{
    std::vector<uint32_t> out;
    for (size_t k = 0; k < consumers.size(); ++k) {
        if (k < parts.size()) out.insert(out.end(), parts[k].begin(), parts[k].end());
        out.push_back(consumers[k]);
    }
    return out;
}

std::vector<Chain> chains(const Graph& g, std::span<const Shape> shapes, std::span<const DType> types, bool training,
    const NodePostOp& asPostOp)
{
    const Uses u(g, shapes, types);
    std::vector<Chain> out;
    for (uint32_t c = 0; c < g.size(); ++c) {
        const Node& conv = g.node(c);
        if (!takesPostOps(conv) || conv.numOutputs != 1 || types[g.entryId(c, 0)] != DType::Float32) continue;
        Chain chain;
        chain.producer = c;
        Shape shape = shapes[g.entryId(c, 0)];
        const bool product = isMatrixProduct(conv);
        if (product && (shape.ndim() < 1 || shape.isScalar())) continue;
        // A vector along the output's last axis (a linear layer's bias): (N), (1, N), (1, 1, N)…
        const auto lastAxisVector = [&](uint32_t e) {
            const Shape& s = shapes[e];
            if (types[e] != DType::Float32 || s.ndim() < 1 || s.ndim() > shape.ndim() || s.isScalar()) return false;
            for (int d = 0; d + 1 < s.ndim(); ++d)
                if (s[d] != 1) return false;
            return s[s.ndim() - 1] == shape[shape.ndim() - 1];
        };
        uint32_t cur = g.entryId(c, 0);
        bool sum = false, depthwise = false;
        for (;;) {
            // The kernel applies a NaN-keeping op after storing: nothing after it but a depthwise
            // convolution (the next node, when asPostOp names it).
            const bool nanKept = !chain.ops.empty() && chain.ops.back().keepNaN;
            if (nanKept && (product || !asPostOp)) break;
            if (product) {
                if (const auto gelu = geluGroup(u, cur, c)) {
                    chain.ops.push_back(PostOp { PostOp::Kind::GeluParts });
                    chain.consumers.push_back(gelu->nodes[4]);
                    chain.parts.emplace_back(gelu->nodes.begin(), gelu->nodes.begin() + 4);
                    chain.residuals.push_back(-1);
                    chain.bounds.insert(chain.bounds.end(), gelu->scalars.begin(), gelu->scalars.end());
                    cur = g.entryId(gelu->nodes[4], 0);
                    continue;
                }
            }
            const int64_t r = u.soleReader(cur);
            if (r < 0) break;
            const auto id = static_cast<uint32_t>(r);
            const Node& n = g.node(id);
            const uint32_t out0 = g.entryId(id, 0);
            const bool dataFirst = !n.inputs.empty() && g.entryId(n.inputs[0]) == cur;
            // A depthwise convolution of the value, its weights and bias ready: once, and not after
            // a residual (oneDNN fuses it into a 1x1 convolution only).
            if (const std::optional<PostOp> dw = asPostOp && !depthwise && !sum && !product && dataFirst && n.inputs.size() == 3
                    ? asPostOp(id) : std::nullopt;
                dw && dw->kind == PostOp::Kind::Depthwise && types[out0] == DType::Float32) {
                const uint32_t w = g.entryId(n.inputs[1]), b = g.entryId(n.inputs[2]);
                if (!u.readyBefore(w, c) || !u.readyBefore(b, c)) break;
                chain.ops.push_back(*dw);
                chain.bounds.push_back(w);
                chain.bounds.push_back(b);
                chain.consumers.push_back(id);
                chain.parts.emplace_back();
                chain.residuals.push_back(-1);
                depthwise = true;
                shape = shapes[out0];
                cur = out0;
                continue;
            }
            if (nanKept) break;
            if (!u.floatOf(out0, shape)) break;
            int64_t residual = -1;
            if (depthwise && (isAdd(n) || isNormalization(n, training))) break; // element-wise ops only after it
            if (isAdd(n)) {
                // An add of the chain's value and a residual ready before the convolution runs.
                const uint32_t a = g.entryId(n.inputs[0]), b = g.entryId(n.inputs[1]);
                const uint32_t other = a == cur ? b : a;
                if (a == b || !u.readyBefore(other, c)) break;
                if (!sum && u.floatOf(other, shape)) {
                    chain.ops.push_back(PostOp { PostOp::Kind::Sum });
                    sum = true;
                } else if (product && lastAxisVector(other)) { // a matrix product's bias
                    chain.ops.push_back(PostOp { PostOp::Kind::Bias });
                } else {
                    break;
                }
                residual = other;
            } else if (isNormalization(n, training)) {
                // Its four per-channel parameters are variables; its other outputs nobody reads.
                // Channels on axis 1: a convolution's, or a fully connected layer's (rows, units).
                if (product || !dataFirst || shape.ndim() < 2 || (shape.ndim() == 2) != (conv.opName() == "FullyConnected"))
                    break;
                const Shape channels { shape[1] };
                bool ok = true;
                for (size_t k = 1; k < 5; ++k) {
                    const uint32_t e = g.entryId(n.inputs[k]);
                    ok = ok && g.node(u.entryNode[e]).isVariable() && u.floatOf(e, channels);
                }
                for (uint32_t k = 1; k < static_cast<uint32_t>(n.numOutputs); ++k)
                    ok = ok && u.count[g.entryId(id, k)] == 0;
                if (!ok) break;
                chain.ops.push_back(PostOp { PostOp::Kind::Affine });
            } else if (const auto op = elementwise(n)) {
                // Its other inputs (a clip's bounds) ready before the convolution runs.
                if (!dataFirst || n.inputs.size() != 1 + static_cast<size_t>(op->extraInputs())) break;
                bool ready = true;
                std::vector<uint32_t> bounds;
                for (size_t k = 1; k < n.inputs.size(); ++k) {
                    const uint32_t e = g.entryId(n.inputs[k]);
                    ready = ready && u.scalarBefore(e, c);
                    bounds.push_back(e);
                }
                if (!ready) break;
                chain.bounds.insert(chain.bounds.end(), bounds.begin(), bounds.end());
                chain.ops.push_back(*op);
            } else {
                break;
            }
            chain.consumers.push_back(id);
            chain.parts.emplace_back();
            chain.residuals.push_back(residual);
            cur = out0;
        }
        if (!chain.consumers.empty()) out.push_back(std::move(chain));
    }
    return out;
}

std::string describe(const Graph& g, const Chain& chain)
{
    std::string out;
    for (size_t k = 0; k < chain.ops.size(); ++k) {
        if (!out.empty()) out += ", ";
        switch (chain.ops[k].kind) {
        case PostOp::Kind::Affine:
            out += g.node(chain.consumers[k]).opName() + " (a per-channel scale and shift)";
            break;
        case PostOp::Kind::Sum:
            out += "add (the residual)";
            break;
        case PostOp::Kind::Bias:
            out += "add (the bias)";
            break;
        case PostOp::Kind::Relu:
            out += "relu";
            break;
        case PostOp::Kind::Sigmoid:
            out += "sigmoid";
            break;
        case PostOp::Kind::Tanh:
            out += "tanh";
            break;
        case PostOp::Kind::Gelu:
            out += "gelu";
            break;
        case PostOp::Kind::GeluParts:
            out += "gelu (Div, Erf, Add, Mul, Mul)";
            break;
        case PostOp::Kind::Clip:
            out += "clip";
            break;
        case PostOp::Kind::Depthwise:
            out += "depthwise convolution (3x3, stride " + std::to_string(chain.ops[k].stride) + ")";
            break;
        }
    }
    return out;
}

} // namespace opscope::fusion
