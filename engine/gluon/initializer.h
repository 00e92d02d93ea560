#pragma once

#include "tensor/tensor.h"

#include <memory>
#include <string>

namespace opscope {
class Generator;
}

namespace opscope::gluon {

/// MXNet's initializers. Called with a parameter's name and its tensor, an initializer dispatches
/// on the name as MXNet's `Initializer.__call__` does: `*weight` gets the initializer's own rule,
/// `*bias`, `*beta`, `*moving_mean` zeros, `*gamma`, `*moving_var` ones. A parameter's own
/// initializer (Dense's bias_initializer "zeros") applies its rule to any name (MXNet's
/// `init` attribute). Every random draw comes from the given generator, so runs are reproducible.
class Initializer {
public:
    virtual ~Initializer() = default;
    /// Initializes by name (the global-initializer path).
    void operator()(const std::string& name, const Tensor& t, Generator& gen) const;
    /// Applies this initializer's own rule regardless of the name (a parameter's own init).
    virtual void initWeight(const std::string& name, const Tensor& t, Generator& gen) const = 0;
    /// MXNet's JSON-ish dump used in `__init__` attributes: "zeros", "ones", "[\"uniform\", …]".
    virtual std::string dumps() const = 0;
};
using InitPtr = std::shared_ptr<const Initializer>;

class Uniform : public Initializer {
public:
    explicit Uniform(float scale = 0.07f)
        : m_scale(scale)
    {
    }
    void initWeight(const std::string&, const Tensor& t, Generator& gen) const override;
    std::string dumps() const override;

private:
    float m_scale;
};

class Normal : public Initializer {
public:
    explicit Normal(float sigma = 0.01f)
        : m_sigma(sigma)
    {
    }
    void initWeight(const std::string&, const Tensor& t, Generator& gen) const override;
    std::string dumps() const override;

private:
    float m_sigma;
};

class Constant : public Initializer {
public:
    explicit Constant(float value)
        : m_value(value)
    {
    }
    void initWeight(const std::string&, const Tensor& t, Generator&) const override { t.fill(m_value); }
    std::string dumps() const override;

private:
    float m_value;
};

class Zero : public Constant {
public:
    Zero()
        : Constant(0.0f)
    {
    }
    std::string dumps() const override { return "zeros"; }
};

class One : public Constant {
public:
    One()
        : Constant(1.0f)
    {
    }
    std::string dumps() const override { return "ones"; }
};

/// Xavier/Glorot: rnd_type "uniform" or "gaussian", factor_type "avg", "in" or "out", magnitude.
class Xavier : public Initializer {
public:
    explicit Xavier(std::string rnd_type = "uniform", std::string factor_type = "avg", float magnitude = 3.0f);
    void initWeight(const std::string& name, const Tensor& t, Generator& gen) const override;
    std::string dumps() const override;

protected:
    std::string m_rndType;
    std::string m_factorType;
    float m_magnitude;
};

/// He/MSRA initialisation for PReLU: Xavier gaussian with magnitude 2 / (1 + slope²).
class MSRAPrelu : public Xavier {
public:
    explicit MSRAPrelu(std::string factor_type = "avg", float slope = 0.25f);
    std::string dumps() const override;

private:
    float m_slope;
};

/// "zeros", "ones", "uniform", "normal", "xavier" … by MXNet's registered names (for `__init__`).
InitPtr initializerByName(const std::string& name);

} // namespace opscope::gluon
