// LeakyReLU (MXNet 1.9 src/operator/leaky_relu-inl.h): leaky, elu, selu, gelu, prelu and rrelu.

#include "core/error.h"
#include "ops/nn/activation_kernels.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

namespace opscope {

namespace {

// mshadow_op.h's SELU constants.
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

enum class LeakyType { Elu, Gelu, Leaky, PReLU, RReLU, Selu };

struct LeakyReLUParams : OpParams {
    LeakyType type = LeakyType::Leaky;
    float slope = 0.25f;
    float lowerBound = 0.125f;
    float upperBound = 0.334f;
};

ParamsPtr parseLeakyReLU(const AttrMap& attrs)
{
    AttrReader r(attrs, "LeakyReLU");
    static const std::vector<std::string> names = { "elu", "gelu", "leaky", "prelu", "rrelu", "selu" };
    const std::string t = r.getEnum("act_type", names, "leaky");
    auto p = std::make_shared<LeakyReLUParams>();
    p->type = static_cast<LeakyType>(std::find(names.begin(), names.end(), t) - names.begin());
    p->slope = static_cast<float>(r.getFloat("slope", 0.25));
    p->lowerBound = static_cast<float>(r.getFloat("lower_bound", 0.125));
    p->upperBound = static_cast<float>(r.getFloat("upper_bound", 0.334));
    if (p->type == LeakyType::RReLU && p->lowerBound > p->upperBound)
        r.fail("lower_bound", "must not exceed upper_bound");
    return p;
}

void inferLeakyReLU(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<LeakyReLUParams>(op);
    const Shape& d = in[0];
    if (!d.known()) return;
    out[0] = d;
    if (p.type == LeakyType::RReLU) out[1] = d;
    if (p.type == LeakyType::PReLU) {
        if (d.ndim() < 2)
            throw ShapeError("input 'data': prelu needs data with a channel axis (N, C, ...), got " + d.str());
        // One slope per channel, or a single slope shared by all channels.
        Shape& g = in[1];
        if (!(g.ndim() == 1 && g[0] == 1)) assignShape(g, Shape({ d[1] }), "input 'gamma'");
    }
}

void leakyReLUReference(
    const LeakyReLUParams& p, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx)
{
    const int64_t n = in[0]->size();
    const Eigen::Map<const Eigen::ArrayXf> x(in[0]->data(), n);
    Eigen::Map<Eigen::ArrayXf> y(out[0]->data(), n);
    switch (p.type) {
    case LeakyType::Leaky:
        y = (x > 0.0f).select(x, p.slope * x);
        break;
    case LeakyType::Elu:
        y = (x > 0.0f).select(x, p.slope * x.expm1());
        break;
    case LeakyType::Selu:
        y = kSeluLambda * (x > 0.0f).select(x, kSeluAlpha * x.expm1());
        break;
    case LeakyType::Gelu:
        // MXNet uses the erf form, not the tanh approximation.
        y = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v * kInvSqrt2)); });
        break;
    case LeakyType::PReLU: {
        const Shape& s = in[0]->shape();
        const int64_t channels = s[1];
        const int64_t inner = s.product(2, s.ndim());
        const float* gamma = in[1]->data();
        const bool shared = in[1]->size() == 1;
        for (int64_t b = 0; b < s[0]; ++b) {
            for (int64_t c = 0; c < channels; ++c) {
                const int64_t off = (b * channels + c) * inner;
                const float g = gamma[shared ? 0 : c];
                const auto xs = x.segment(off, inner);
                y.segment(off, inner) = (xs > 0.0f).select(xs, g * xs);
            }
        }
        break;
    }
    case LeakyType::RReLU: {
        Eigen::Map<Eigen::ArrayXf> mask(out[1]->data(), n);
        if (ctx.training) {
            // A random slope per element, drawn from [lower_bound, upper_bound).
            Generator& gen = ctx.rng ? *ctx.rng : globalGenerator();
            for (int64_t i = 0; i < n; ++i)
                mask[i] = gen.uniform(p.lowerBound, p.upperBound);
            y = (x > 0.0f).select(x, mask * x);
        } else {
            // Inference uses the mean slope; the hidden mask output shows it.
            const float slope = (p.lowerBound + p.upperBound) / 2.0f;
            mask.setConstant(slope);
            y = (x > 0.0f).select(x, slope * x);
        }
        break;
    }
    }
}

// MXNet's gradients. leaky, elu and gelu as its oneDNN CPU path computes them, from the input (its
// mshadow fallback reads the output, which differs only for a negative slope); selu and rrelu from
// the output (mshadow's, no oneDNN path; rrelu's slopes from the hidden mask); prelu from the input,
// gamma getting Σ (x > 0 ? 0 : x) · dy over every axis but the channel one (over all of them for a
// single shared slope).
void backwardLeakyReLU(const BackwardArgs& a)
{
    const auto& p = paramsAs<LeakyReLUParams>(a.params);
    Tensor* gx = a.inGrad[0];
    Tensor* gGamma = p.type == LeakyType::PReLU ? a.inGrad[1] : nullptr;
    if (!a.outGrad[0]) {
        if (gx) gx->fill(0);
        if (gGamma) gGamma->fill(0);
        return;
    }
    const int64_t n = a.in[0]->size();
    const Eigen::Map<const Eigen::ArrayXf> dy(a.outGrad[0]->data(), n);
    const Eigen::Map<const Eigen::ArrayXf> x(a.in[0]->data(), n);
    const Eigen::Map<const Eigen::ArrayXf> y(a.out[0]->data(), n);
    if (p.type == LeakyType::PReLU) {
        const Shape& s = a.in[0]->shape();
        const int64_t channels = s[1];
        const int64_t inner = s.product(2, s.ndim());
        const float* gamma = a.in[1]->data();
        const bool shared = a.in[1]->size() == 1;
        std::vector<double> sums(static_cast<size_t>(a.in[1]->size()), 0.0);
        float* dx = gx ? gx->data() : nullptr;
        for (int64_t b = 0; b < s[0]; ++b) {
            for (int64_t c = 0; c < channels; ++c) {
                const size_t slot = shared ? 0 : static_cast<size_t>(c);
                const float g = gamma[slot];
                for (int64_t i = (b * channels + c) * inner, end = i + inner; i < end; ++i) {
                    if (dx) dx[i] = x[i] > 0.0f ? dy[i] : g * dy[i];
                    if (x[i] <= 0.0f) sums[slot] += static_cast<double>(x[i]) * dy[i];
                }
            }
        }
        if (gGamma)
            for (size_t k = 0; k < sums.size(); ++k)
                gGamma->at(static_cast<int64_t>(k)) = static_cast<float>(sums[k]);
        return;
    }
    if (!gx) return;
    Eigen::Map<Eigen::ArrayXf> dx(gx->data(), n);
    switch (p.type) {
    case LeakyType::Leaky:
        dx = (x > 0.0f).select(dy, p.slope * dy);
        break;
    case LeakyType::Elu:
        dx = (x > 0.0f).select(dy, p.slope * x.exp() * dy);
        break;
    case LeakyType::Selu:
        // mshadow_op::selu_grad: λ·(α + y) below 0, which is not the derivative λ·α·eˣ = y + λ·α; kept
        // as MXNet computes it (its CPU build has no oneDNN path for selu).
        dx = kSeluLambda * (y > 0.0f).select(dy, (y + kSeluAlpha) * dy);
        break;
    case LeakyType::Gelu:
        // Φ(x) + x·φ(x); MXNet's y/x + x·φ(x) is the same away from x = 0, where it is 0/0.
        dx = dy * x.unaryExpr([](float v) {
            return 0.5f * (1.0f + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v);
        });
        break;
    case LeakyType::RReLU: {
        const Eigen::Map<const Eigen::ArrayXf> mask(a.out[1]->data(), n);
        dx = (y > 0.0f).select(dy, mask * dy);
        break;
    }
    case LeakyType::PReLU:
        break;
    }
}

std::unique_ptr<Kernel> makeLeakyReLUDnnl(const OpParams& op, std::span<const Shape> in, std::span<const Shape>)
{
    using dnnl::algorithm;
    const auto& p = paramsAs<LeakyReLUParams>(op);
    switch (p.type) {
    case LeakyType::Leaky:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_relu, p.slope);
    case LeakyType::Elu:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_elu, p.slope);
    case LeakyType::Selu:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_elu, kSeluAlpha, 0.0f, kSeluLambda);
    case LeakyType::Gelu:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_gelu_erf);
    case LeakyType::PReLU:
    case LeakyType::RReLU:
        break; // per-channel or random slopes: reference kernel
    }
    return nullptr;
}

} // namespace

void registerLeakyReLU(OpRegistry& r)
{
    OpDef def;
    def.name = "LeakyReLU";
    def.parse = parseLeakyReLU;
    def.numInputs = [](const OpParams& op) { return paramsAs<LeakyReLUParams>(op).type == LeakyType::PReLU ? 2 : 1; };
    def.numOutputs = [](const OpParams& op) { return paramsAs<LeakyReLUParams>(op).type == LeakyType::RReLU ? 2 : 1; };
    def.numVisibleOutputs = [](const OpParams&) { return 1; };
    def.nameInputs({ "data", "gamma" }); // the first numInputs: gamma for prelu only
    def.outputNames = [](const OpParams& op) {
        return paramsAs<LeakyReLUParams>(op).type == LeakyType::RReLU ? std::vector<std::string> { "output", "mask" }
                                                                      : std::vector<std::string> { "output" };
    };
    def.inferShape = inferLeakyReLU;
    def.reference = [](const OpParams& op, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<LeakyReLUParams>(op), leakyReLUReference);
    };
    def.dnnl = makeLeakyReLUDnnl;
    def.dnnlPays = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return eltwiseDnnlPays(in[0].size(), paramsAs<LeakyReLUParams>(op).type == LeakyType::Leaky ? 1.0 : 8.0);
    };
    def.backward = backwardLeakyReLU;
    r.add(std::move(def));
}

} // namespace opscope
