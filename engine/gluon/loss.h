#pragma once

#include "gluon/block.h"

#include <optional>
#include <string>
#include <vector>

namespace opscope::gluon {

/// MXNet's gluon.loss.Loss: a HybridBlock called as (pred, label) or (pred, label, sample_weight)
/// that returns the loss of each sample, shape (batch,): the element-wise loss is multiplied by
/// sample_weight (broadcast) and by the scalar `weight` (MXNet's `_apply_weighting`), then averaged
/// over every axis but `batch_axis` (`F.mean(loss, axis=batch_axis, exclude=True)`). Built from
/// operators through F, so it runs eagerly, hybridized, inside a traced parent and under autograd.
class Loss : public HybridBlock {
public:
    std::optional<double> weight() const { return m_weight; }
    int64_t batch_axis() const { return m_batchAxis; }

    /// Checks there are 2 or 3 inputs; a hybridized loss retraces when their number changes.
    std::vector<Value> forward(const std::vector<Value>& inputs) override;
    using Block::operator();
    Value operator()(const Value& pred, const Value& label) { return forward({ pred, label }).at(0); }
    Value operator()(const Value& pred, const Value& label, const Value& sample_weight)
    {
        return forward({ pred, label, sample_weight }).at(0);
    }

protected:
    /// `hint`: MXNet's alias, the lower-case class name ("softmaxcrossentropyloss").
    Loss(const std::string& hint, std::optional<double> weight, int64_t batch_axis,
        const std::optional<std::string>& prefix);

    /// The third input, when given.
    static std::optional<Value> sampleWeight(const std::vector<Value>& inputs);
    /// MXNet's `_apply_weighting(F, loss, weight, sample_weight)`.
    static Value applyWeighting(
        const F& F, Value loss, std::optional<double> weight, const std::optional<Value>& sample_weight);
    /// MXNet's `_reshape_like(F, x, y)`: x with y's shape (`reshape_like`, eager and traced alike).
    static Value reshapeLike(const F& F, const Value& x, const Value& y);
    /// `F.mean(loss, axis=batch_axis, exclude=True)`.
    Value batchMean(const F& F, const Value& loss) const;
    /// `-x`, as MXNet's `__neg__` spells it (`_mul_scalar` by -1).
    static Value negate(const F& F, const Value& x);

private:
    std::optional<double> m_weight;
    int64_t m_batchAxis;
    size_t m_numInputs = 0; // inputs of the last direct call (a change retraces a hybridized loss)
};

/// MXNet's L2Loss: 0.5 · weight · (label − pred)², label reshaped to pred's shape. Note the ½: MXNet
/// applies weight/2, so the default weight 1 gives half the squared error.
class L2Loss : public Loss {
public:
    explicit L2Loss(
        double weight = 1.0, int64_t batch_axis = 0, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
};

/// MXNet's L1Loss: |label − pred|, label reshaped to pred's shape.
class L1Loss : public Loss {
public:
    explicit L1Loss(std::optional<double> weight = std::nullopt, int64_t batch_axis = 0,
        const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
};

/// MXNet's SigmoidBinaryCrossEntropyLoss (SigmoidBCELoss). On logits (from_sigmoid false) the stable
/// form relu(x) − x·z + softrelu(−|x|); on probabilities −(log(p + 1e-12)·z + log(1 − p + 1e-12)·(1 − z)).
/// Label reshaped to pred's shape. (MXNet's optional pos_weight input is not supported.)
class SigmoidBinaryCrossEntropyLoss : public Loss {
public:
    explicit SigmoidBinaryCrossEntropyLoss(bool from_sigmoid = false, std::optional<double> weight = std::nullopt,
        int64_t batch_axis = 0, const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    bool from_sigmoid() const { return m_fromSigmoid; }

private:
    bool m_fromSigmoid;
};
using SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss;

/// MXNet's SoftmaxCrossEntropyLoss (SoftmaxCELoss): with log p = log_softmax(pred, axis) (pred itself
/// when from_logits), −pick(log p, label, axis) for sparse labels (class indices, pred's shape
/// without `axis`), −Σ_axis label·log p for dense labels (reshaped to pred's shape).
class SoftmaxCrossEntropyLoss : public Loss {
public:
    explicit SoftmaxCrossEntropyLoss(int64_t axis = -1, bool sparse_label = true, bool from_logits = false,
        std::optional<double> weight = std::nullopt, int64_t batch_axis = 0,
        const std::optional<std::string>& prefix = std::nullopt);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    int64_t axis() const { return m_axis; }
    bool sparse_label() const { return m_sparseLabel; }
    bool from_logits() const { return m_fromLogits; }

private:
    int64_t m_axis;
    bool m_sparseLabel;
    bool m_fromLogits;
};
using SoftmaxCELoss = SoftmaxCrossEntropyLoss;

} // namespace opscope::gluon
