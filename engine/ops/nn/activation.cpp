// Activation (MXNet 1.9 src/operator/nn/activation.cc) and the oneDNN eltwise kernel shared with
// LeakyReLU.

#include "core/error.h"
#include "ops/nn/activation_kernels.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <algorithm>

namespace opscope {

namespace {

enum class ActType { ReLU, Sigmoid, Tanh, SoftReLU, SoftSign, LogSigmoid, Mish };

struct ActivationParams : OpParams {
    ActType type = ActType::ReLU;
};

ParamsPtr parseActivation(const AttrMap& attrs)
{
    AttrReader r(attrs, "Activation");
    if (!r.has("act_type")) r.fail("act_type", "required but missing");
    static const std::vector<std::string> names
        = { "relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish" };
    const std::string t = r.getEnum("act_type", names, "");
    auto p = std::make_shared<ActivationParams>();
    p->type = static_cast<ActType>(std::find(names.begin(), names.end(), t) - names.begin());
    return p;
}

void activationReference(
    const ActivationParams& p, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&)
{
    const Eigen::Map<const Eigen::ArrayXf> x(in[0]->data(), in[0]->size());
    Eigen::Map<Eigen::ArrayXf> y(out[0]->data(), out[0]->size());
    // MXNet's softrelu returns x itself above 20, where log1p(exp(x)) == x in float.
    const auto softrelu = (x > 20.0f).select(x, x.exp().log1p());
    switch (p.type) {
    case ActType::ReLU: // as oneDNN's relu kernel, which runs it for larger tensors: NaN stays NaN
        y = (x > 0.0f).select(x, x * 0.0f);
        break;
    case ActType::Sigmoid:
        y = 1.0f / (1.0f + (-x).exp());
        break;
    case ActType::Tanh:
        y = x.tanh();
        break;
    case ActType::SoftReLU:
        y = softrelu;
        break;
    case ActType::SoftSign:
        y = x / (1.0f + x.abs());
        break;
    case ActType::LogSigmoid:
        // log(1 / (1 + exp(-x))), written so that neither branch overflows.
        y = x.min(0.0f) - (-x.abs()).exp().log1p();
        break;
    case ActType::Mish:
        y = x * softrelu.tanh();
        break;
    }
}

// MXNet's gradients (mshadow_op's *_grad): relu, sigmoid, tanh, softrelu and log_sigmoid are computed
// from the output, softsign and mish from the input.
void backwardActivation(const BackwardArgs& a)
{
    Tensor* gx = a.inGrad[0];
    if (!gx) return;
    const int64_t n = gx->size();
    Eigen::Map<Eigen::ArrayXf> dx(gx->data(), n);
    if (!a.outGrad[0]) {
        dx.setZero();
        return;
    }
    const Eigen::Map<const Eigen::ArrayXf> dy(a.outGrad[0]->data(), n);
    const Eigen::Map<const Eigen::ArrayXf> x(a.in[0]->data(), n);
    const Eigen::Map<const Eigen::ArrayXf> y(a.out[0]->data(), n);
    switch (paramsAs<ActivationParams>(a.params).type) {
    case ActType::ReLU:
        dx = (y > 0.0f).select(dy, 0.0f);
        break;
    case ActType::Sigmoid:
        dx = dy * y * (1.0f - y);
        break;
    case ActType::Tanh:
        dx = dy * (1.0f - y.square());
        break;
    case ActType::SoftReLU:
        dx = dy * -(-y).expm1();
        break;
    case ActType::SoftSign:
        dx = dy / (1.0f + x.abs()).square();
        break;
    case ActType::LogSigmoid:
        dx = dy * (1.0f - y.exp());
        break;
    case ActType::Mish: {
        const auto softrelu = (x > 20.0f).select(x, x.exp().log1p());
        const Eigen::ArrayXf t = softrelu.tanh();
        dx = dy * (t + x * (1.0f / (1.0f + (-x).exp())) * (1.0f - t.square()));
        break;
    }
    }
}

std::unique_ptr<Kernel> makeActivationDnnl(const OpParams& op, std::span<const Shape> in, std::span<const Shape>)
{
    using dnnl::algorithm;
    switch (paramsAs<ActivationParams>(op).type) {
    case ActType::ReLU:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_relu);
    case ActType::Sigmoid:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_logistic);
    case ActType::Tanh:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_tanh);
    case ActType::SoftReLU:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_soft_relu);
    case ActType::LogSigmoid:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_logsigmoid);
    case ActType::Mish:
        return makeDnnlEltwiseKernel(in[0], algorithm::eltwise_mish);
    case ActType::SoftSign:
        break; // no oneDNN algorithm
    }
    return nullptr;
}

} // namespace

std::unique_ptr<Kernel> makeDnnlEltwiseKernel(
    const Shape& shape, dnnl::algorithm alg, float alpha, float beta, float outScale)
{
    try {
        return dnnlutil::makeEltwise(shape, alg, alpha, beta, outScale);
    } catch (const dnnl::error&) {
        return nullptr;
    }
}

bool eltwiseDnnlPays(int64_t elements, double flopsPerElement)
{
    return static_cast<double>(elements) * flopsPerElement >= dnnlutil::kMinFlops;
}

void registerActivation(OpRegistry& r)
{
    OpDef def;
    def.name = "Activation";
    def.parse = parseActivation;
    def.numInputs = [](const OpParams&) { return 1; };
    def.numOutputs = [](const OpParams&) { return 1; };
    // MXNet registers no input names (hence `relu0_fwd_input0`), and `output` for the output.
    def.nameOutputs({ "output" });
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) { out[0] = in[0]; };
    def.reference = [](const OpParams& op, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ActivationParams>(op), activationReference);
    };
    def.dnnl = makeActivationDnnl;
    def.dnnlPays = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return eltwiseDnnlPays(in[0].size(), paramsAs<ActivationParams>(op).type == ActType::ReLU ? 1.0 : 8.0);
    };
    def.backward = backwardActivation;
    r.add(std::move(def));

    registerLeakyReLU(r);
}

} // namespace opscope
