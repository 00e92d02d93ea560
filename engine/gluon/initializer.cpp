#include "gluon/initializer.h"

#include "core/error.h"
#include "tensor/random.h"

#include <cmath>
#include <cstdio>

namespace opscope::gluon {

namespace {
    bool endsWith(const std::string& s, const char* suffix)
    {
        const std::string t(suffix);
        return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
    }
    std::string fmt(float v)
    {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
        return buf;
    }
}

void Initializer::operator()(const std::string& name, const Tensor& t, Generator& gen) const
{
    if (endsWith(name, "weight"))
        initWeight(name, t, gen);
    else if (endsWith(name, "bias") || endsWith(name, "beta") || endsWith(name, "moving_mean")
        || endsWith(name, "running_mean") || endsWith(name, "moving_inv_var"))
        t.fill(0.0f);
    else if (endsWith(name, "gamma") || endsWith(name, "moving_var") || endsWith(name, "running_var")
        || endsWith(name, "moving_avg"))
        t.fill(1.0f);
    else
        // MXNet raises here ("Unknown initialization pattern"); Gluon parameters of other names
        // (Embedding's weight ends with "weight") are covered above.
        throw UsageError("initializer: unknown initialization pattern for parameter '" + name
            + "' (names ending in weight, bias, gamma, beta, moving_mean or moving_var are known)");
}

void Uniform::initWeight(const std::string&, const Tensor& t, Generator& gen) const
{
    for (float& v : t.values())
        v = gen.uniform(-m_scale, m_scale);
}

std::string Uniform::dumps() const
{
    return "[\"uniform\", {\"scale\": " + fmt(m_scale) + "}]";
}

void Normal::initWeight(const std::string&, const Tensor& t, Generator& gen) const
{
    for (float& v : t.values())
        v = gen.normal(0.0f, m_sigma);
}

std::string Normal::dumps() const
{
    return "[\"normal\", {\"sigma\": " + fmt(m_sigma) + "}]";
}

std::string Constant::dumps() const
{
    return "[\"constant\", {\"value\": " + fmt(m_value) + "}]";
}

Xavier::Xavier(std::string rnd_type, std::string factor_type, float magnitude)
    : m_rndType(std::move(rnd_type))
    , m_factorType(std::move(factor_type))
    , m_magnitude(magnitude)
{
    if (m_rndType != "uniform" && m_rndType != "gaussian")
        throw UsageError("Xavier: rnd_type must be 'uniform' or 'gaussian', got '" + m_rndType + "'");
    if (m_factorType != "avg" && m_factorType != "in" && m_factorType != "out")
        throw UsageError("Xavier: factor_type must be 'avg', 'in' or 'out', got '" + m_factorType + "'");
}

void Xavier::initWeight(const std::string& name, const Tensor& t, Generator& gen) const
{
    const Shape& s = t.shape();
    if (s.ndim() < 2)
        throw UsageError("Xavier initializer cannot be applied to vector '" + name + "' of shape " + s.str()
            + ": it requires at least 2 dimensions");
    const double hw = static_cast<double>(s.product(2, s.ndim()));
    const double fanIn = static_cast<double>(s[1]) * hw;
    const double fanOut = static_cast<double>(s[0]) * hw;
    const double factor = m_factorType == "avg" ? (fanIn + fanOut) / 2.0 : m_factorType == "in" ? fanIn : fanOut;
    const float scale = static_cast<float>(std::sqrt(m_magnitude / factor));
    if (m_rndType == "uniform") {
        for (float& v : t.values())
            v = gen.uniform(-scale, scale);
    } else {
        for (float& v : t.values())
            v = gen.normal(0.0f, scale);
    }
}

std::string Xavier::dumps() const
{
    return "[\"xavier\", {\"rnd_type\": \"" + m_rndType + "\", \"factor_type\": \"" + m_factorType
        + "\", \"magnitude\": " + fmt(m_magnitude) + "}]";
}

MSRAPrelu::MSRAPrelu(std::string factor_type, float slope)
    : Xavier("gaussian", std::move(factor_type), 2.0f / (1.0f + slope * slope))
    , m_slope(slope)
{
}

std::string MSRAPrelu::dumps() const
{
    return "[\"msraprelu\", {\"factor_type\": \"" + m_factorType + "\", \"slope\": " + fmt(m_slope) + "}]";
}

InitPtr initializerByName(const std::string& name)
{
    if (name == "zeros" || name == "zero")
        return std::make_shared<Zero>();
    if (name == "ones" || name == "one")
        return std::make_shared<One>();
    if (name == "uniform")
        return std::make_shared<Uniform>();
    if (name == "normal")
        return std::make_shared<Normal>();
    if (name == "xavier")
        return std::make_shared<Xavier>();
    if (name == "msraprelu")
        return std::make_shared<MSRAPrelu>();
    throw UsageError("unknown initializer '" + name + "'");
}

} // namespace opscope::gluon
