#include "gluon/metric.h"

#include "core/error.h"

#include <cstdint>
#include <limits>

namespace opscope::gluon {

std::pair<std::string, double> EvalMetric::get() const
{
    if (m_numInst == 0) return { m_name, std::numeric_limits<double>::quiet_NaN() };
    return { m_name, m_sumMetric / static_cast<double>(m_numInst) };
}

Accuracy::Accuracy(int axis, std::string name)
    : EvalMetric(std::move(name))
    , m_axis(axis)
{
}

void Accuracy::update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds)
{
    if (labels.size() != preds.size())
        throw UsageError(name() + ": " + std::to_string(labels.size()) + " label arrays but "
            + std::to_string(preds.size()) + " prediction arrays");
    for (size_t k = 0; k < labels.size(); ++k) {
        const Tensor& label = labels[k];
        const Tensor& pred = preds[k];
        if (!label.defined() || !pred.defined())
            throw UsageError(name() + ": label or prediction " + std::to_string(k) + " is undefined");
        std::vector<int32_t> predLabel;
        if (pred.shape() != label.shape()) {
            // argmax over the axis: outer × classes × inner.
            const int nd = pred.ndim();
            const int axis = m_axis < 0 ? m_axis + nd : m_axis;
            if (axis < 0 || axis >= nd)
                throw ShapeError(name() + ": axis " + std::to_string(m_axis)
                    + " is out of range for predictions of shape " + pred.shape().str());
            int64_t outer = 1, inner = 1;
            for (int d = 0; d < axis; ++d)
                outer *= pred.shape()[d];
            for (int d = axis + 1; d < nd; ++d)
                inner *= pred.shape()[d];
            const int64_t classes = pred.shape()[axis];
            const float* p = pred.data();
            predLabel.reserve(static_cast<size_t>(outer * inner));
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t in = 0; in < inner; ++in) {
                    int64_t best = 0;
                    for (int64_t c = 1; c < classes; ++c)
                        if (p[(o * classes + c) * inner + in] > p[(o * classes + best) * inner + in]) best = c;
                    predLabel.push_back(static_cast<int32_t>(best));
                }
        } else {
            for (float v : pred.values())
                predLabel.push_back(static_cast<int32_t>(v));
        }
        if (static_cast<int64_t>(predLabel.size()) != label.size())
            throw ShapeError(name() + ": shape of labels " + label.shape().str()
                + " does not match shape of predictions " + pred.shape().str());
        int64_t correct = 0;
        const float* l = label.data();
        for (size_t i = 0; i < predLabel.size(); ++i)
            correct += predLabel[i] == static_cast<int32_t>(l[i]) ? 1 : 0;
        m_sumMetric += static_cast<double>(correct);
        m_numInst += static_cast<int64_t>(predLabel.size());
    }
}

MeanLoss::MeanLoss(std::string name)
    : EvalMetric(std::move(name))
{
}

void MeanLoss::update(const std::vector<Tensor>&, const std::vector<Tensor>& preds)
{
    for (const Tensor& pred : preds) {
        if (!pred.defined()) throw UsageError(name() + ": a loss tensor is undefined");
        double sum = 0.0;
        for (float v : pred.values())
            sum += v;
        m_sumMetric += sum;
        m_numInst += pred.size();
    }
}

} // namespace opscope::gluon
