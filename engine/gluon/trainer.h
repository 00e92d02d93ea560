#pragma once

#include "gluon/optimizer.h"
#include "gluon/parameter.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::gluon {

/// MXNet 1.x's gluon.Trainer on one device: applies an Optimizer to a set of Parameters after
/// autograd::backward(). Parameter i of the list is index i of the optimizer, whose param dict the
/// Trainer sets (so each Parameter's lr_mult / wd_mult apply). The Trainer shares ownership of the
/// Parameters and the optimizer; weights are updated in place (blocks, hybridized or not, see the new
/// values). Gradients are left as they are: grad_req "write" overwrites them at the next backward,
/// "add" accumulates until the caller zeroes them (ParameterDict::zero_grad()), as in MXNet.
/// Not thread-safe: one thread at a time (the training loop's).
class Trainer {
public:
    /// `optimizer` is used as given (it may be shared, MXNet's Optimizer instance argument).
    Trainer(const ParameterDict& params, OptimizerPtr optimizer);
    /// MXNet's `Trainer(params, "sgd", {"learning_rate": 0.1})`; see makeOptimizer().
    Trainer(const ParameterDict& params, const std::string& optimizer,
        const std::map<std::string, double>& optimizer_params = {});
    Trainer(std::vector<ParamPtr> params, OptimizerPtr optimizer);
    Trainer(std::vector<ParamPtr> params, const std::string& optimizer,
        const std::map<std::string, double>& optimizer_params = {});

    /// One update of every parameter whose grad_req is not "null", with the gradient scaled by
    /// 1/batch_size (times the optimizer's rescale_grad when the Trainer was made). Call after
    /// backward, outside a record scope. A parameter that is not initialised yet (or whose shape is
    /// still deferred) is an error naming it, before any weight changes; with ignore_stale_grad it is
    /// skipped. Throws UsageError for batch_size ≤ 0.
    void step(int64_t batch_size, bool ignore_stale_grad = false);
    /// MXNet's Trainer.update: the same as step() on one device (no gradient reduction to do).
    void update(int64_t batch_size, bool ignore_stale_grad = false) { step(batch_size, ignore_stale_grad); }

    double learning_rate() const { return m_optimizer->learning_rate(); }
    void set_learning_rate(double lr) { m_optimizer->set_learning_rate(lr); }
    const OptimizerPtr& optimizer() const { return m_optimizer; }
    const std::vector<ParamPtr>& params() const { return m_params; }

private:
    void init(std::vector<ParamPtr> params, OptimizerPtr optimizer);

    std::vector<ParamPtr> m_params;
    OptimizerPtr m_optimizer;
    double m_scale = 1.0;
};

} // namespace opscope::gluon
