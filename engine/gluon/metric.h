#pragma once

#include "tensor/tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace opscope::gluon {

/// MXNet 1.x's mx.metric.EvalMetric: a running sum over a count of instances; get() is their ratio
/// (NaN before any update). update() reads the tensors' values and keeps none of them. Not
/// thread-safe: one thread at a time.
class EvalMetric {
public:
    explicit EvalMetric(std::string name)
        : m_name(std::move(name))
    {
    }
    virtual ~EvalMetric() = default;

    const std::string& name() const { return m_name; }
    /// Pairs labels[i] with preds[i] (UsageError when the counts differ).
    virtual void update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds) = 0;
    void update(const Tensor& labels, const Tensor& preds)
    {
        update(std::vector<Tensor> { labels }, std::vector<Tensor> { preds });
    }
    /// (name, sum_metric / num_inst).
    std::pair<std::string, double> get() const;
    void reset()
    {
        m_sumMetric = 0.0;
        m_numInst = 0;
    }
    double sum_metric() const { return m_sumMetric; }
    int64_t num_inst() const { return m_numInst; }

protected:
    double m_sumMetric = 0.0;
    int64_t m_numInst = 0;

private:
    std::string m_name;
};

/// MXNet's mx.metric.Accuracy(axis=1): predictions whose shape differs from the labels' are reduced
/// by argmax over `axis` (the first maximum wins); both are then truncated to integers, flattened and
/// compared. Labels are float class indices. A size mismatch is a ShapeError naming both shapes.
class Accuracy : public EvalMetric {
public:
    explicit Accuracy(int axis = 1, std::string name = "accuracy");
    using EvalMetric::update;
    void update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds) override;
    int axis() const { return m_axis; }

private:
    int m_axis;
};

/// MXNet's mx.metric.Loss ("loss"): the mean of every element of the predictions given (the
/// per-sample losses); labels are ignored.
class MeanLoss : public EvalMetric {
public:
    explicit MeanLoss(std::string name = "loss");
    using EvalMetric::update;
    void update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds) override;
    /// Adds the elements of `losses`.
    void update(const Tensor& losses) { update(std::vector<Tensor> {}, std::vector<Tensor> { losses }); }
};

} // namespace opscope::gluon
