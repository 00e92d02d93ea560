#pragma once

#include "gluon/parameter.h"
#include "tensor/tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::gluon {

/// MXNet 1.x's mxnet.optimizer.Optimizer: updates a weight in place from its gradient. Each weight
/// is known by an index (its position in the Trainer's parameter list); its state (momentum, Adam's
/// moments) is created on the first update of that index and kept by the optimizer, as is the count
/// of updates per index (Adam's bias correction). The effective learning rate and weight decay of an
/// index are the optimizer's times the lr_mult / wd_mult of the Parameter at that index in the
/// param dict (set by the Trainer, read live), else of set_lr_mult() / set_wd_mult(), else 1.
/// The optimizer holds state tensors only; weights and gradients stay the caller's. Not thread-safe:
/// one thread at a time (the one that trains).
class Optimizer {
public:
    /// The hyper-parameters every optimizer takes (MXNet's Optimizer.__init__ keywords).
    struct Options {
        double learning_rate = 0.01;
        double wd = 0.0;
        double rescale_grad = 1.0;
        /// Gradients are clipped to [-clip_gradient, clip_gradient]; ≤ 0: no clipping.
        double clip_gradient = -1.0;
        int64_t begin_num_update = 0;
    };

    virtual ~Optimizer() = default;
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    /// Lower-case registry name ("sgd", "adam").
    virtual std::string name() const = 0;

    double learning_rate() const { return m_opt.learning_rate; }
    void set_learning_rate(double lr) { m_opt.learning_rate = lr; }
    double wd() const { return m_opt.wd; }
    void set_wd(double wd) { m_opt.wd = wd; }
    double rescale_grad() const { return m_opt.rescale_grad; }
    void set_rescale_grad(double scale) { m_opt.rescale_grad = scale; }
    double clip_gradient() const { return m_opt.clip_gradient; }
    void set_clip_gradient(double clip) { m_opt.clip_gradient = clip; }

    /// Per-index multipliers (MXNet's set_lr_mult / set_wd_mult with integer keys).
    void set_lr_mult(std::map<int, double> mults) { m_lrMult = std::move(mults); }
    void set_wd_mult(std::map<int, double> mults) { m_wdMult = std::move(mults); }
    /// MXNet's `optimizer.param_dict`: index → Parameter whose lr_mult / wd_mult apply (held, read
    /// at each update so later changes take effect).
    void set_param_dict(std::map<int, ParamPtr> params) { m_paramDict = std::move(params); }

    /// Updates `weight` in place from `grad` (same number of elements, else UsageError), creating
    /// the state of `index` first if it has none, and counting the update.
    void update(int index, const Tensor& weight, const Tensor& grad);

    /// Updates made on `index` (begin_num_update + the calls so far); MXNet's _index_update_count.
    int64_t updateCount(int index) const;
    /// The largest updateCount over all indices (MXNet's num_update).
    int64_t num_update() const { return m_numUpdate; }
    /// The state tensors of `index` (empty before its first update, or for a stateless rule).
    const std::vector<Tensor>& state(int index) const;
    /// Forgets all states and counts (the next update of each index starts afresh).
    void resetStates();

    /// Learning rate and weight decay for `index`, multipliers applied (MXNet's _get_lr/_get_wd).
    double lrFor(int index) const;
    double wdFor(int index) const;

protected:
    explicit Optimizer(const Options& options);
    const Options& options() const { return m_opt; }

    /// The state of a new index (zeros shaped like `weight`, or none).
    virtual std::vector<Tensor> createState(int index, const Tensor& weight) const = 0;
    /// Applies the rule; the count of `index` already includes this update.
    virtual void step(int index, const Tensor& weight, const Tensor& grad, std::vector<Tensor>& state) = 0;

private:
    Options m_opt;
    std::map<int, double> m_lrMult, m_wdMult;
    std::map<int, ParamPtr> m_paramDict;
    std::map<int, std::vector<Tensor>> m_states;
    std::map<int, int64_t> m_updateCount;
    int64_t m_numUpdate;
};
using OptimizerPtr = std::shared_ptr<Optimizer>;

/// MXNet's optimizer.SGD (sgd_update / sgd_mom_update kernels), with g = clip(rescale_grad·grad):
///   no momentum: weight = (1 − lr·wd)·weight − lr·g
///   momentum:    mom = momentum·mom − lr·wd·weight − lr·g; weight += mom
/// The momentum state exists when momentum ≠ 0.
class SGD : public Optimizer {
public:
    explicit SGD(double learning_rate = 0.01, double momentum = 0.0, double wd = 0.0, double rescale_grad = 1.0,
        double clip_gradient = -1.0, int64_t begin_num_update = 0);
    SGD(const Options& options, double momentum);

    std::string name() const override { return "sgd"; }
    double momentum() const { return m_momentum; }

protected:
    std::vector<Tensor> createState(int index, const Tensor& weight) const override;
    void step(int index, const Tensor& weight, const Tensor& grad, std::vector<Tensor>& state) override;

private:
    double m_momentum;
};

/// MXNet's optimizer.Adam (adam_update kernel), at update t of an index:
///   lr_t = lr·sqrt(1 − β2^t)/(1 − β1^t)
///   g = clip(rescale_grad·grad + wd·weight); m = β1·m + (1 − β1)·g; v = β2·v + (1 − β2)·g²
///   weight −= lr_t·m/(sqrt(v) + ε)
/// State: m (mean) then v (variance).
class Adam : public Optimizer {
public:
    explicit Adam(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8,
        double wd = 0.0, double rescale_grad = 1.0, double clip_gradient = -1.0, int64_t begin_num_update = 0);
    Adam(const Options& options, double beta1, double beta2, double epsilon);

    std::string name() const override { return "adam"; }
    double beta1() const { return m_beta1; }
    double beta2() const { return m_beta2; }
    double epsilon() const { return m_epsilon; }

protected:
    std::vector<Tensor> createState(int index, const Tensor& weight) const override;
    void step(int index, const Tensor& weight, const Tensor& grad, std::vector<Tensor>& state) override;

private:
    double m_beta1, m_beta2, m_epsilon;
};

/// MXNet's `mx.optimizer.create(name, **kwargs)`: "sgd" or "adam" (any case) with keyword values.
/// Every optimizer takes learning_rate, wd, rescale_grad, clip_gradient, begin_num_update and (no
/// effect on dense float32 weights) lazy_update, multi_precision; SGD also momentum, Adam beta1,
/// beta2, epsilon. Throws UsageError naming an unknown optimizer or parameter.
OptimizerPtr makeOptimizer(const std::string& name, const std::map<std::string, double>& params = {});

} // namespace opscope::gluon
