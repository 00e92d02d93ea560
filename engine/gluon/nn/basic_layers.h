#pragma once

#include "gluon/block.h"

#include <functional>

namespace opscope::gluon::nn {

/// MXNet's nn.Activation: `F.Activation(x, act_type, name="fwd")`; prefix hint is the act_type.
class Activation : public HybridBlock {
public:
    explicit Activation(std::string activation, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    const std::string& act_type() const { return m_actType; }

private:
    std::string m_actType;
};

/// MXNet's nn.Dense(units, activation, use_bias, flatten, weight_initializer, bias_initializer
/// "zeros", in_units). in_units 0 defers the weight's shape to the first call.
class Dense : public HybridBlock {
public:
    explicit Dense(int64_t units, std::optional<std::string> activation = std::nullopt, bool use_bias = true,
        bool flatten = true, InitPtr weight_initializer = nullptr, InitPtr bias_initializer = nullptr,
        int64_t in_units = 0, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    const ParamPtr& weight() const { return m_weight; }
    const ParamPtr& bias() const { return m_bias; }

private:
    int64_t m_units;
    bool m_flatten;
    ParamPtr m_weight, m_bias;
    std::shared_ptr<Activation> m_act;
};

/// MXNet's nn.Dropout(rate, axes): `F.Dropout(x, p, axes, name="fwd")`, or `F.identity` at rate 0.
class Dropout : public HybridBlock {
public:
    explicit Dropout(double rate, std::vector<int64_t> axes = {}, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    double m_rate;
    std::vector<int64_t> m_axes;
};

/// MXNet's nn.BatchNorm(axis 1, momentum 0.9, epsilon 1e-5, center, scale, use_global_stats,
/// initializers, in_channels). Parameters gamma, beta, running_mean, running_var.
class BatchNorm : public HybridBlock {
public:
    struct Options {
        int64_t axis = 1;
        double momentum = 0.9;
        double epsilon = 1e-5;
        bool center = true;
        bool scale = true;
        bool use_global_stats = false;
        int64_t in_channels = 0;
    };
    BatchNorm();
    explicit BatchNorm(Options options, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    Options m_opt;
    ParamPtr m_gamma, m_beta, m_runningMean, m_runningVar;
};

/// MXNet's nn.LayerNorm(axis -1, epsilon 1e-5, center, scale, in_channels).
class LayerNorm : public HybridBlock {
public:
    explicit LayerNorm(int64_t axis = -1, double epsilon = 1e-5, bool center = true, bool scale = true,
        int64_t in_channels = 0, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    int64_t m_axis;
    double m_epsilon;
    ParamPtr m_gamma, m_beta;
};

/// MXNet's nn.Embedding(input_dim, output_dim, weight_initializer).
class Embedding : public HybridBlock {
public:
    Embedding(int64_t input_dim, int64_t output_dim, InitPtr weight_initializer = nullptr,
        const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    const ParamPtr& weight() const { return m_weight; }

private:
    int64_t m_inputDim, m_outputDim;
    ParamPtr m_weight;
};

/// MXNet's nn.Flatten: `F.Flatten(x)` without a name, hence `flatten0_flatten0`.
class Flatten : public HybridBlock {
public:
    explicit Flatten(const std::optional<std::string>& prefix = std::nullopt)
        : HybridBlock("flatten", prefix)
    {
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
};

/// MXNet's nn.LeakyReLU(alpha): `F.LeakyReLU(x, act_type="leaky", slope=alpha, name="fwd")`.
class LeakyReLU : public HybridBlock {
public:
    explicit LeakyReLU(double alpha, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    double m_alpha;
};

/// MXNet's nn.ELU(alpha 1.0): `F.LeakyReLU(x, act_type="elu", slope=alpha)` (no name given).
class ELU : public HybridBlock {
public:
    explicit ELU(double alpha = 1.0, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    double m_alpha;
};

/// MXNet's nn.SELU: `F.LeakyReLU(x, act_type="selu", name="fwd")`.
class SELU : public HybridBlock {
public:
    explicit SELU(const std::optional<std::string>& prefix = std::nullopt)
        : HybridBlock("selu", prefix)
    {
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
};

/// MXNet's nn.GELU: `F.LeakyReLU(x, act_type="gelu", name="fwd")`.
class GELU : public HybridBlock {
public:
    explicit GELU(const std::optional<std::string>& prefix = std::nullopt)
        : HybridBlock("gelu", prefix)
    {
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
};

/// MXNet's nn.HybridLambda: wraps a function of (F, inputs), or an operator name such as "tanh"
/// (called without a name, so it is named `<prefix><op><k>`).
class HybridLambda : public HybridBlock {
public:
    using Function = std::function<std::vector<Value>(const F&, const std::vector<Value>&)>;
    explicit HybridLambda(const std::string& op, const std::optional<std::string>& prefix = std::nullopt);
    explicit HybridLambda(Function fn, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    Function m_fn;
};

} // namespace opscope::gluon::nn
