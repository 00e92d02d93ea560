#include "gluon/trainer.h"

#include "core/error.h"

#include <set>

namespace opscope::gluon {

namespace {

// MXNet's Parameter._check_and_get messages.
std::string uninitializedMessage(const Parameter& p)
{
    if (p.deferred())
        return "Parameter '" + p.name()
            + "' has not been initialized yet because initialization was deferred. Actual initialization "
              "happens during the first forward pass. Please pass one batch of data through the network "
              "before accessing Parameters. You can also avoid deferred initialization by specifying "
              "in_units, num_features, etc., for network layers.";
    return "Parameter '" + p.name()
        + "' has not been initialized. Note that you should initialize parameters and create Trainer with "
          "Block.collect_params() instead of Block.params because the later does not include Parameters of "
          "nested child Blocks";
}

} // namespace

Trainer::Trainer(const ParameterDict& params, OptimizerPtr optimizer)
{
    init(params.values(), std::move(optimizer));
}

Trainer::Trainer(
    const ParameterDict& params, const std::string& optimizer, const std::map<std::string, double>& optimizer_params)
{
    init(params.values(), makeOptimizer(optimizer, optimizer_params));
}

Trainer::Trainer(std::vector<ParamPtr> params, OptimizerPtr optimizer)
{
    init(std::move(params), std::move(optimizer));
}

Trainer::Trainer(
    std::vector<ParamPtr> params, const std::string& optimizer, const std::map<std::string, double>& optimizer_params)
{
    init(std::move(params), makeOptimizer(optimizer, optimizer_params));
}

void Trainer::init(std::vector<ParamPtr> params, OptimizerPtr optimizer)
{
    if (!optimizer) throw UsageError("Trainer: the optimizer is null");
    std::set<std::string> names;
    std::map<int, ParamPtr> dict;
    for (size_t i = 0; i < params.size(); ++i) {
        if (!params[i]) throw UsageError("Trainer: parameter " + std::to_string(i) + " of the list is null");
        if (!names.insert(params[i]->name()).second)
            throw UsageError("Trainer: parameter '" + params[i]->name() + "' is given more than once");
        dict[static_cast<int>(i)] = params[i];
    }
    m_params = std::move(params);
    m_optimizer = std::move(optimizer);
    m_optimizer->set_param_dict(std::move(dict));
    m_scale = m_optimizer->rescale_grad();
}

void Trainer::step(int64_t batch_size, bool ignore_stale_grad)
{
    if (batch_size <= 0)
        throw UsageError("Trainer.step: batch_size must be positive, got " + std::to_string(batch_size));
    // Every parameter is checked before any weight changes.
    std::vector<size_t> todo;
    std::string error;
    std::vector<std::string> alsoMissing;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const Parameter& p = *m_params[i];
        if (p.grad_req() == "null") continue;
        if (!p.initialized()) {
            if (ignore_stale_grad) continue;
            if (error.empty())
                error = uninitializedMessage(p);
            else
                alsoMissing.push_back(p.name());
            continue;
        }
        todo.push_back(i);
    }
    if (!error.empty()) {
        if (!alsoMissing.empty()) {
            error += " (also not initialized:";
            for (const std::string& n : alsoMissing)
                error += " '" + n + "'";
            error += ")";
        }
        throw UsageError(error);
    }
    m_optimizer->set_rescale_grad(m_scale / static_cast<double>(batch_size));
    for (size_t i : todo)
        m_optimizer->update(static_cast<int>(i), m_params[i]->data(), m_params[i]->grad());
}

} // namespace opscope::gluon
