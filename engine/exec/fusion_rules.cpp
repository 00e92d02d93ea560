#include "exec/fusion_rules.h"

#include "ops/attrs.h"
#include "ops/onnx/onnx_op.h"

#include <cmath>

namespace opscope::fusion {

namespace {
bool activation(const Node& n, const char* type)
{
    const auto it = n.attrs.find("act_type");
    return it != n.attrs.end() && it->second == type;
}
}

bool takesPostOps(const Node& n)
{
    if (n.isVariable()) return false;
    return n.onnx ? n.op == "Conv" : n.def->name == "Convolution";
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
        if (n.onnx) {
            if (n.op == "Relu") return PostOp { K::Relu };
            if (n.op == "Sigmoid") return PostOp { K::Sigmoid };
            if (n.op == "Tanh") return PostOp { K::Tanh };
            return std::nullopt;
        }
        const std::string& op = n.def->name;
        // MXNet's relu is mshadow's (NaN gives 0); Activation's relu is oneDNN's (NaN stays).
        if (op == "relu") return PostOp { K::Relu };
        if (op == "Activation" && activation(n, "relu")) return PostOp { K::Relu, 0.0f, 0.0f, true };
        if (op == "sigmoid" || (op == "Activation" && activation(n, "sigmoid"))) return PostOp { K::Sigmoid };
        if (op == "tanh" || (op == "Activation" && activation(n, "tanh"))) return PostOp { K::Tanh };
        if (op == "LeakyReLU" && activation(n, "gelu")) return PostOp { K::Gelu };
        // Not clip: oneDNN's clip post-op turns NaN into a bound, MXNet's and ONNX's keep it.
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

} // namespace opscope::fusion
