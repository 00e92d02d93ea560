#include "gluon/loss.h"

#include "core/error.h"

namespace opscope::gluon {

// ---- Loss ----------------------------------------------------------------------------------

Loss::Loss(
    const std::string& hint, std::optional<double> weight, int64_t batch_axis, const std::optional<std::string>& prefix)
    : HybridBlock(hint, prefix)
    , m_weight(weight)
    , m_batchAxis(batch_axis)
{
}

std::vector<Value> Loss::forward(const std::vector<Value>& inputs)
{
    if (inputs.size() < 2 || inputs.size() > 3)
        throw UsageError("loss '" + name() + "': expected (pred, label) or (pred, label, sample_weight), got "
            + std::to_string(inputs.size()) + " inputs");
    for (const Value& v : inputs)
        if (!v.defined()) throw UsageError("loss '" + name() + "': an input is undefined");
    if (!inputs[0].isSymbol()) {
        // The cached graph has one variable per input it was traced with.
        if (m_numInputs != 0 && m_numInputs != inputs.size()) clearCache();
        m_numInputs = inputs.size();
    }
    return HybridBlock::forward(inputs);
}

std::optional<Value> Loss::sampleWeight(const std::vector<Value>& inputs)
{
    if (inputs.size() > 2) return inputs[2];
    return std::nullopt;
}

Value Loss::applyWeighting(
    const F& F, Value loss, std::optional<double> weight, const std::optional<Value>& sample_weight)
{
    if (sample_weight) loss = F.broadcast_mul(loss, *sample_weight);
    if (weight) loss = F.mul_scalar(loss, *weight);
    return loss;
}

Value Loss::reshapeLike(const F& F, const Value& x, const Value& y)
{
    return F.op("reshape_like", { x, y });
}

Value Loss::batchMean(const F& F, const Value& loss) const
{
    return F.op("mean", { loss }, { { "axis", std::to_string(m_batchAxis) }, { "exclude", "True" } });
}

Value Loss::negate(const F& F, const Value& x)
{
    return F.mul_scalar(x, -1.0);
}

// ---- L2Loss, L1Loss ------------------------------------------------------------------------

L2Loss::L2Loss(double weight, int64_t batch_axis, const std::optional<std::string>& prefix)
    : Loss("l2loss", weight, batch_axis, prefix)
{
}

std::vector<Value> L2Loss::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    const Value& pred = x.at(0);
    const Value label = reshapeLike(F, x.at(1), pred);
    Value loss = F.op("square", { F.op("elemwise_sub", { label, pred }) });
    loss = applyWeighting(F, loss, *weight() / 2, sampleWeight(x));
    return { batchMean(F, loss) };
}

L1Loss::L1Loss(std::optional<double> weight, int64_t batch_axis, const std::optional<std::string>& prefix)
    : Loss("l1loss", weight, batch_axis, prefix)
{
}

std::vector<Value> L1Loss::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    const Value& pred = x.at(0);
    const Value label = reshapeLike(F, x.at(1), pred);
    Value loss = F.op("abs", { F.op("elemwise_sub", { label, pred }) });
    loss = applyWeighting(F, loss, weight(), sampleWeight(x));
    return { batchMean(F, loss) };
}

// ---- SigmoidBinaryCrossEntropyLoss ---------------------------------------------------------

SigmoidBinaryCrossEntropyLoss::SigmoidBinaryCrossEntropyLoss(
    bool from_sigmoid, std::optional<double> weight, int64_t batch_axis, const std::optional<std::string>& prefix)
    : Loss("sigmoidbinarycrossentropyloss", weight, batch_axis, prefix)
    , m_fromSigmoid(from_sigmoid)
{
}

std::vector<Value> SigmoidBinaryCrossEntropyLoss::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    const Value& pred = x.at(0);
    const Value label = reshapeLike(F, x.at(1), pred);
    Value loss;
    if (!m_fromSigmoid) {
        // max(x, 0) - x·z + log(1 + exp(-|x|)): no exp of a large positive number.
        const Value relu = F.op("relu", { pred });
        const Value xz = F.op("elemwise_mul", { pred, label });
        const Value softplus = F.Activation(negate(F, F.op("abs", { pred })), "softrelu");
        loss = F.op("elemwise_add", { F.op("elemwise_sub", { relu, xz }), softplus });
    } else {
        constexpr double eps = 1e-12;
        const Value logP = F.log(F.plus_scalar(pred, eps));
        const Value oneMinusP = F.op("_rminus_scalar", { pred }, { { "scalar", floatAttr(1.0) } });
        const Value log1mP = F.log(F.plus_scalar(oneMinusP, eps));
        const Value oneMinusZ = F.op("_rminus_scalar", { label }, { { "scalar", floatAttr(1.0) } });
        loss = negate(F,
            F.op("elemwise_add",
                { F.op("elemwise_mul", { logP, label }), F.op("elemwise_mul", { log1mP, oneMinusZ }) }));
    }
    loss = applyWeighting(F, loss, weight(), sampleWeight(x));
    return { batchMean(F, loss) };
}

// ---- SoftmaxCrossEntropyLoss ---------------------------------------------------------------

SoftmaxCrossEntropyLoss::SoftmaxCrossEntropyLoss(int64_t axis, bool sparse_label, bool from_logits,
    std::optional<double> weight, int64_t batch_axis, const std::optional<std::string>& prefix)
    : Loss("softmaxcrossentropyloss", weight, batch_axis, prefix)
    , m_axis(axis)
    , m_sparseLabel(sparse_label)
    , m_fromLogits(from_logits)
{
}

std::vector<Value> SoftmaxCrossEntropyLoss::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    Value pred = x.at(0);
    Value label = x.at(1);
    if (!m_fromLogits) pred = F.log_softmax(pred, m_axis);
    const std::string axis = std::to_string(m_axis);
    Value loss;
    if (m_sparseLabel) {
        loss = negate(F, F.op("pick", { pred, label }, { { "axis", axis }, { "keepdims", "True" } }));
    } else {
        label = reshapeLike(F, label, pred);
        loss = negate(
            F, F.op("sum", { F.op("elemwise_mul", { pred, label }) }, { { "axis", axis }, { "keepdims", "True" } }));
    }
    loss = applyWeighting(F, loss, weight(), sampleWeight(x));
    return { batchMean(F, loss) };
}

} // namespace opscope::gluon
