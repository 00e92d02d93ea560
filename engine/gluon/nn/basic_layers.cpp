#include "gluon/nn/basic_layers.h"

#include "core/error.h"
#include "ops/registry.h"

namespace opscope::gluon::nn {

Activation::Activation(std::string activation, const std::optional<std::string>& prefix)
    : HybridBlock(activation, prefix)
    , m_actType(std::move(activation))
{
}

std::vector<Value> Activation::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.Activation(x.at(0), m_actType, "fwd") };
}

Dense::Dense(int64_t units, std::optional<std::string> activation, bool use_bias, bool flatten,
    InitPtr weight_initializer, InitPtr bias_initializer, int64_t in_units, const std::optional<std::string>& prefix)
    : HybridBlock("dense", prefix)
    , m_units(units)
    , m_flatten(flatten)
{
    if (units <= 0)
        throw UsageError("Dense: units must be positive, got " + std::to_string(units));
    auto scope = name_scope();
    m_weight = addParam("weight", Shape({ units, in_units }), std::move(weight_initializer));
    if (use_bias)
        m_bias = addParam("bias", Shape({ units }), bias_initializer ? std::move(bias_initializer) : std::make_shared<Zero>());
    if (activation) {
        m_act = std::make_shared<Activation>(*activation, *activation + "_");
        register_child(m_act);
    }
}

std::vector<Value> Dense::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    const Value weight = F.param(m_weight);
    std::optional<Value> bias;
    if (m_bias)
        bias = F.param(m_bias);
    Value y = F.FullyConnected(x.at(0), weight, bias, m_units, m_flatten, "fwd");
    if (m_act)
        y = (*m_act)(y);
    return { y };
}

Dropout::Dropout(double rate, std::vector<int64_t> axes, const std::optional<std::string>& prefix)
    : HybridBlock("dropout", prefix)
    , m_rate(rate)
    , m_axes(std::move(axes))
{
    if (rate < 0 || rate >= 1)
        throw UsageError("Dropout: rate must be in [0, 1), got " + floatAttr(rate));
}

std::vector<Value> Dropout::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    if (m_rate > 0)
        return { F.op("Dropout", { x.at(0) },
            { { "p", floatAttr(m_rate) }, { "axes", tupleAttr(m_axes) }, { "cudnn_off", "False" } }, "fwd") };
    return { F.op("_copy", { x.at(0) }) };
}

BatchNorm::BatchNorm()
    : BatchNorm(Options {})
{
}

BatchNorm::BatchNorm(Options options, const std::optional<std::string>& prefix)
    : HybridBlock("batchnorm", prefix)
    , m_opt(options)
{
    const Shape c({ m_opt.in_channels });
    m_gamma = addParam("gamma", c, std::make_shared<One>(), m_opt.scale ? "write" : "null", m_opt.scale);
    m_beta = addParam("beta", c, std::make_shared<Zero>(), m_opt.center ? "write" : "null", m_opt.center);
    m_runningMean = addParam("running_mean", c, std::make_shared<Zero>(), "null", false);
    m_runningVar = addParam("running_var", c, std::make_shared<One>(), "null", false);
}

std::vector<Value> BatchNorm::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.op("BatchNorm",
        { x.at(0), F.param(m_gamma), F.param(m_beta), F.param(m_runningMean), F.param(m_runningVar) },
        { { "axis", std::to_string(m_opt.axis) }, { "eps", floatAttr(m_opt.epsilon) },
            { "momentum", floatAttr(m_opt.momentum) }, { "fix_gamma", boolAttr(!m_opt.scale) },
            { "use_global_stats", boolAttr(m_opt.use_global_stats) } },
        "fwd") };
}

LayerNorm::LayerNorm(
    int64_t axis, double epsilon, bool center, bool scale, int64_t in_channels, const std::optional<std::string>& prefix)
    : HybridBlock("layernorm", prefix)
    , m_axis(axis)
    , m_epsilon(epsilon)
{
    const Shape c({ in_channels });
    m_gamma = addParam("gamma", c, std::make_shared<One>(), scale ? "write" : "null", scale);
    m_beta = addParam("beta", c, std::make_shared<Zero>(), center ? "write" : "null", center);
}

std::vector<Value> LayerNorm::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.op("LayerNorm", { x.at(0), F.param(m_gamma), F.param(m_beta) },
        { { "axis", std::to_string(m_axis) }, { "eps", floatAttr(m_epsilon) } }) };
}

Embedding::Embedding(
    int64_t input_dim, int64_t output_dim, InitPtr weight_initializer, const std::optional<std::string>& prefix)
    : HybridBlock("embedding", prefix)
    , m_inputDim(input_dim)
    , m_outputDim(output_dim)
{
    m_weight = addParam("weight", Shape({ input_dim, output_dim }), std::move(weight_initializer));
}

std::vector<Value> Embedding::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.op("Embedding", { x.at(0), F.param(m_weight) },
        { { "input_dim", std::to_string(m_inputDim) }, { "output_dim", std::to_string(m_outputDim) },
            { "dtype", "float32" }, { "sparse_grad", "False" } },
        "fwd") };
}

std::vector<Value> Flatten::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.Flatten(x.at(0)) };
}

LeakyReLU::LeakyReLU(double alpha, const std::optional<std::string>& prefix)
    : HybridBlock("leakyrelu", prefix)
    , m_alpha(alpha)
{
    if (alpha < 0)
        throw UsageError("LeakyReLU: slope coefficient must be no less than 0, got " + floatAttr(alpha));
}

std::vector<Value> LeakyReLU::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.LeakyReLU(x.at(0), "leaky", m_alpha, "fwd") };
}

ELU::ELU(double alpha, const std::optional<std::string>& prefix)
    : HybridBlock("elu", prefix)
    , m_alpha(alpha)
{
}

std::vector<Value> ELU::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.LeakyReLU(x.at(0), "elu", m_alpha) };
}

std::vector<Value> SELU::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.op("LeakyReLU", { x.at(0) }, { { "act_type", "selu" } }, "fwd") };
}

std::vector<Value> GELU::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.op("LeakyReLU", { x.at(0) }, { { "act_type", "gelu" } }, "fwd") };
}

HybridLambda::HybridLambda(const std::string& op, const std::optional<std::string>& prefix)
    : HybridBlock("hybridlambda", prefix)
{
    if (!OpRegistry::instance().find(op))
        throw UsageError("HybridLambda: unknown operator '" + op + "'");
    m_fn = [op](const F& F, const std::vector<Value>& x) { return F.call(op, x); };
}

HybridLambda::HybridLambda(Function fn, const std::optional<std::string>& prefix)
    : HybridBlock("hybridlambda", prefix)
    , m_fn(std::move(fn))
{
    if (!m_fn)
        throw UsageError("HybridLambda: empty function");
}

std::vector<Value> HybridLambda::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return m_fn(F, x);
}

} // namespace opscope::gluon::nn
