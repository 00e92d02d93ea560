#include "gluon/optimizer.h"

#include "core/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace opscope::gluon {

namespace {

// mshadow_op::clip: the value bounded to [-bound, bound].
inline float clipTo(float x, float bound)
{
    if (x > bound) return bound;
    if (x < -bound) return -bound;
    return x;
}

} // namespace

Optimizer::Optimizer(const Options& options)
    : m_opt(options)
    , m_numUpdate(options.begin_num_update)
{
}

void Optimizer::update(int index, const Tensor& weight, const Tensor& grad)
{
    if (!weight.defined() || !grad.defined())
        throw UsageError(
            name() + " optimizer: update of index " + std::to_string(index) + " needs a defined weight and gradient");
    if (weight.size() != grad.size())
        throw UsageError(name() + " optimizer: index " + std::to_string(index) + " has weight of shape "
            + weight.shape().str() + " but gradient of shape " + grad.shape().str());
    auto it = m_states.find(index);
    if (it == m_states.end())
        it = m_states.emplace(index, createState(index, weight)).first;
    else
        for (const Tensor& s : it->second)
            if (s.size() != weight.size())
                throw UsageError(name() + " optimizer: index " + std::to_string(index) + " has state of shape "
                    + s.shape().str() + " but weight of shape " + weight.shape().str());
    // MXNet's _update_count.
    auto count = m_updateCount.emplace(index, m_opt.begin_num_update).first;
    ++count->second;
    m_numUpdate = std::max(m_numUpdate, count->second);
    step(index, weight, grad, it->second);
}

int64_t Optimizer::updateCount(int index) const
{
    auto it = m_updateCount.find(index);
    return it == m_updateCount.end() ? m_opt.begin_num_update : it->second;
}

const std::vector<Tensor>& Optimizer::state(int index) const
{
    static const std::vector<Tensor> none;
    auto it = m_states.find(index);
    return it == m_states.end() ? none : it->second;
}

void Optimizer::resetStates()
{
    m_states.clear();
    m_updateCount.clear();
    m_numUpdate = m_opt.begin_num_update;
}

double Optimizer::lrFor(int index) const
{
    double lr = m_opt.learning_rate;
    if (auto p = m_paramDict.find(index); p != m_paramDict.end() && p->second) return lr * p->second->lr_mult;
    if (auto m = m_lrMult.find(index); m != m_lrMult.end()) return lr * m->second;
    return lr;
}

double Optimizer::wdFor(int index) const
{
    double wd = m_opt.wd;
    if (auto p = m_paramDict.find(index); p != m_paramDict.end() && p->second) return wd * p->second->wd_mult;
    if (auto m = m_wdMult.find(index); m != m_wdMult.end()) return wd * m->second;
    return wd;
}

// ---- SGD ----

SGD::SGD(double learning_rate, double momentum, double wd, double rescale_grad, double clip_gradient,
    int64_t begin_num_update)
    : SGD(Options { learning_rate, wd, rescale_grad, clip_gradient, begin_num_update }, momentum)
{
}

SGD::SGD(const Options& options, double momentum)
    : Optimizer(options)
    , m_momentum(momentum)
{
}

std::vector<Tensor> SGD::createState(int, const Tensor& weight) const
{
    if (m_momentum == 0.0) return {};
    return { Tensor::zeros(weight.shape()) };
}

void SGD::step(int index, const Tensor& weight, const Tensor& grad, std::vector<Tensor>& state)
{
    // The kernels compute in the weight's type (float32), with float arguments, in this order.
    const float lr = static_cast<float>(lrFor(index));
    const float wd = static_cast<float>(wdFor(index));
    const float rescale = static_cast<float>(rescale_grad());
    const bool clip = clip_gradient() > 0.0;
    const float bound = static_cast<float>(clip_gradient());
    // MXNet passes momentum only when positive; a state made for a negative one decays with 0.
    const float momentum = m_momentum > 0.0 ? static_cast<float>(m_momentum) : 0.0f;
    float* w = weight.data();
    const float* g = grad.data();
    const int64_t n = weight.size();
    if (state.empty()) { // sgd_update
        const float decay = 1.f - lr * wd;
        if (clip)
            for (int64_t i = 0; i < n; ++i)
                w[i] = decay * w[i] - lr * clipTo(rescale * g[i], bound);
        else
            for (int64_t i = 0; i < n; ++i)
                w[i] = decay * w[i] - (lr * rescale) * g[i];
        return;
    }
    float* mom = state[0].data(); // sgd_mom_update
    for (int64_t i = 0; i < n; ++i) {
        if (clip)
            mom[i] = momentum * mom[i] - lr * wd * w[i] - lr * clipTo(rescale * g[i], bound);
        else
            mom[i] = momentum * mom[i] - lr * wd * w[i] - lr * rescale * g[i];
        w[i] = w[i] + mom[i];
    }
}

// ---- Adam ----

Adam::Adam(double learning_rate, double beta1, double beta2, double epsilon, double wd, double rescale_grad,
    double clip_gradient, int64_t begin_num_update)
    : Adam(Options { learning_rate, wd, rescale_grad, clip_gradient, begin_num_update }, beta1, beta2, epsilon)
{
}

Adam::Adam(const Options& options, double beta1, double beta2, double epsilon)
    : Optimizer(options)
    , m_beta1(beta1)
    , m_beta2(beta2)
    , m_epsilon(epsilon)
{
}

std::vector<Tensor> Adam::createState(int, const Tensor& weight) const
{
    return { Tensor::zeros(weight.shape()), Tensor::zeros(weight.shape()) };
}

void Adam::step(int index, const Tensor& weight, const Tensor& grad, std::vector<Tensor>& state)
{
    // The Python wrapper folds the bias correction into the learning rate (in double precision).
    const double t = static_cast<double>(updateCount(index));
    const double coef1 = 1.0 - std::pow(m_beta1, t);
    const double coef2 = 1.0 - std::pow(m_beta2, t);
    const float lr = static_cast<float>(lrFor(index) * std::sqrt(coef2) / coef1);
    const float wd = static_cast<float>(wdFor(index));
    const float rescale = static_cast<float>(rescale_grad());
    const bool clip = clip_gradient() > 0.0;
    const float bound = static_cast<float>(clip_gradient());
    const float beta1 = static_cast<float>(m_beta1), beta2 = static_cast<float>(m_beta2);
    const float epsilon = static_cast<float>(m_epsilon);
    float* w = weight.data();
    const float* g = grad.data();
    float* mean = state[0].data();
    float* var = state[1].data();
    const int64_t n = weight.size();
    for (int64_t i = 0; i < n; ++i) { // adam_update
        float r = g[i] * rescale + w[i] * wd;
        if (clip) r = clipTo(r, bound);
        mean[i] = beta1 * mean[i] + (1.f - beta1) * r;
        var[i] = beta2 * var[i] + (1.f - beta2) * r * r;
        w[i] = w[i] - lr * mean[i] / (std::sqrt(var[i]) + epsilon);
    }
}

// ---- factory ----

OptimizerPtr makeOptimizer(const std::string& name, const std::map<std::string, double>& params)
{
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    static const std::vector<std::string> common = { "learning_rate", "wd", "rescale_grad", "clip_gradient",
        "begin_num_update", "lazy_update", "multi_precision" };
    std::vector<std::string> own;
    Optimizer::Options o;
    if (key == "sgd") {
        own = { "momentum" };
        o.learning_rate = 0.01;
    } else if (key == "adam") {
        own = { "beta1", "beta2", "epsilon" };
        o.learning_rate = 0.001;
    } else {
        throw UsageError("Cannot find optimizer '" + name + "' (known: adam, sgd)");
    }
    std::vector<std::string> accepted = own;
    accepted.insert(accepted.end(), common.begin(), common.end());
    for (const auto& [k, v] : params) {
        (void)v;
        if (std::find(accepted.begin(), accepted.end(), k) == accepted.end()) {
            std::string list;
            for (const std::string& a : accepted)
                list += (list.empty() ? "" : ", ") + a;
            throw UsageError("optimizer '" + key + "' has no parameter '" + k + "' (accepted: " + list + ")");
        }
    }
    auto get = [&params](const std::string& k, double fallback) {
        auto it = params.find(k);
        return it == params.end() ? fallback : it->second;
    };
    o.learning_rate = get("learning_rate", o.learning_rate);
    o.wd = get("wd", o.wd);
    o.rescale_grad = get("rescale_grad", o.rescale_grad);
    o.clip_gradient = get("clip_gradient", o.clip_gradient);
    const double begin = get("begin_num_update", 0.0);
    if (begin < 0 || begin != std::floor(begin))
        throw UsageError(
            "optimizer '" + key + "': begin_num_update must be a whole number ≥ 0, got " + std::to_string(begin));
    o.begin_num_update = static_cast<int64_t>(begin);
    if (key == "sgd") return std::make_shared<SGD>(o, get("momentum", 0.0));
    return std::make_shared<Adam>(o, get("beta1", 0.9), get("beta2", 0.999), get("epsilon", 1e-8));
}

} // namespace opscope::gluon
