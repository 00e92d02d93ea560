// Gluon losses: values against a direct double-precision computation (eager, hybridized and
// hybridized with static_alloc), sample weights, gradients with respect to pred through autograd
// against central differences, naming, and a loss used inside a traced parent block.

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/nn/basic_layers.h"
#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <optional>

using namespace opscope;
using namespace opscope::gluon;

namespace {

// ---- the direct computation ------------------------------------------------------------------

/// A double tensor: the element-wise loss before weighting and the batch mean.
struct DTensor {
    Shape shape;
    std::vector<double> v;
};

std::vector<int64_t> unravel(int64_t i, const Shape& s)
{
    std::vector<int64_t> idx(static_cast<size_t>(s.ndim()));
    for (int d = s.ndim() - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = i % s[d];
        i /= s[d];
    }
    return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s)
{
    int64_t i = 0;
    for (int d = 0; d < s.ndim(); ++d)
        i = i * s[d] + (s[d] == 1 ? 0 : idx[static_cast<size_t>(d)]); // size-1 dims broadcast
    return i;
}

/// f(pred, label) element by element (the label is read flat: MXNet reshapes it to pred's shape).
DTensor elementwise(const Tensor& pred, const Tensor& label, const std::function<double(double, double)>& f)
{
    DTensor out { pred.shape(), {} };
    for (int64_t i = 0; i < pred.size(); ++i)
        out.v.push_back(f(pred.at(i), label.at(i)));
    return out;
}

/// -Σ_axis label·log_softmax(pred) (dense) or -log_softmax(pred)[label] (sparse), axis kept as 1.
DTensor softmaxCE(const Tensor& pred, const Tensor& label, int axis, bool sparse, bool fromLogits)
{
    const Shape& s = pred.shape();
    if (axis < 0) axis += s.ndim();
    Shape keep = s;
    keep[axis] = 1;
    DTensor out { keep, std::vector<double>(static_cast<size_t>(keep.size())) };
    for (int64_t o = 0; o < keep.size(); ++o) {
        std::vector<int64_t> idx = unravel(o, keep);
        std::vector<double> logp;
        for (int64_t c = 0; c < s[axis]; ++c) {
            idx[static_cast<size_t>(axis)] = c;
            logp.push_back(pred.at(ravel(idx, s)));
        }
        if (!fromLogits) {
            double m = logp[0];
            for (double x : logp)
                m = std::max(m, x);
            double sum = 0;
            for (double x : logp)
                sum += std::exp(x - m);
            for (double& x : logp)
                x -= m + std::log(sum);
        }
        double l = 0;
        if (sparse) {
            l = -logp[static_cast<size_t>(label.at(o))];
        } else {
            for (int64_t c = 0; c < s[axis]; ++c) {
                idx[static_cast<size_t>(axis)] = c;
                l -= label.at(ravel(idx, s)) * logp[static_cast<size_t>(c)];
            }
        }
        out.v[static_cast<size_t>(o)] = l;
    }
    return out;
}

/// _apply_weighting, then the mean over every axis but batchAxis.
std::vector<double> finish(const DTensor& loss, std::optional<double> weight, const Tensor& sampleWeight, int batchAxis)
{
    const Shape& s = loss.shape;
    if (batchAxis < 0) batchAxis += s.ndim();
    const int64_t batch = s[batchAxis];
    std::vector<double> sum(static_cast<size_t>(batch), 0.0);
    for (int64_t i = 0; i < s.size(); ++i) {
        const std::vector<int64_t> idx = unravel(i, s);
        double l = loss.v[static_cast<size_t>(i)];
        if (sampleWeight.defined()) l *= sampleWeight.at(ravel(idx, sampleWeight.shape()));
        if (weight) l *= *weight;
        sum[static_cast<size_t>(idx[static_cast<size_t>(batchAxis)])] += l;
    }
    for (double& v : sum)
        v /= static_cast<double>(s.size() / batch);
    return sum;
}

double softplus(double x)
{
    return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
}

// ---- one case: a loss, its inputs and the direct computation ---------------------------------

struct Case {
    std::string name;
    std::function<std::shared_ptr<Loss>()> make;
    Shape predShape, labelShape;
    std::function<Tensor(const Shape&, Generator&)> pred, label;
    std::function<std::vector<double>(const Tensor& pred, const Tensor& label, const Tensor& sw)> expected;
    Shape weightShape; ///< sample_weight's shape for the weighted variant
};

Tensor uniform(const Shape& s, Generator& g, float lo = -2, float hi = 2)
{
    return Tensor::uniform(s, lo, hi, &g);
}

Tensor classes(const Shape& s, Generator& g, int n)
{
    Tensor t = Tensor::uniform(s, 0, static_cast<float>(n), &g);
    for (float& v : t.values())
        v = std::min(std::floor(v), static_cast<float>(n - 1));
    return t;
}

/// Rows of probabilities along `axis` (a dense label).
Tensor distribution(const Shape& s, Generator& g, int axis)
{
    Tensor t = Tensor::uniform(s, 0.05f, 1, &g);
    if (axis < 0) axis += s.ndim();
    Shape keep = s;
    keep[axis] = 1;
    for (int64_t o = 0; o < keep.size(); ++o) {
        std::vector<int64_t> idx = unravel(o, keep);
        double sum = 0;
        for (int64_t c = 0; c < s[axis]; ++c) {
            idx[static_cast<size_t>(axis)] = c;
            sum += t.at(ravel(idx, s));
        }
        for (int64_t c = 0; c < s[axis]; ++c) {
            idx[static_cast<size_t>(axis)] = c;
            t.at(ravel(idx, s)) = static_cast<float>(t.at(ravel(idx, s)) / sum);
        }
    }
    return t;
}

std::vector<Case> cases()
{
    std::vector<Case> c;
    c.push_back({ "L2", [] { return std::make_shared<L2Loss>(); }, Shape({ 5, 3 }), Shape({ 5, 3 }),
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l, [](double x, double z) { return (z - x) * (z - x); }), 0.5, sw, 0);
        },
        Shape({ 5, 1 }) });
    // A (batch, 1) prediction against a (batch,) label: the label is reshaped, not broadcast.
    c.push_back({ "L2ColumnPred", [] { return std::make_shared<L2Loss>(3.0); }, Shape({ 6, 1 }), Shape({ 6 }),
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l, [](double x, double z) { return (z - x) * (z - x); }), 1.5, sw, 0);
        },
        Shape({ 6, 1 }) });
    // batch_axis 1: (time, batch, features) gives (batch,).
    c.push_back({ "L2BatchAxis1", [] { return std::make_shared<L2Loss>(1.0, 1); }, Shape({ 3, 4, 2 }),
        Shape({ 3, 4, 2 }), [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l, [](double x, double z) { return (z - x) * (z - x); }), 0.5, sw, 1);
        },
        Shape({ 1, 4, 1 }) });
    c.push_back({ "L1", [] { return std::make_shared<L1Loss>(); }, Shape({ 4, 2, 3 }), Shape({ 4, 6 }),
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l, [](double x, double z) { return std::fabs(z - x); }), std::nullopt, sw, 0);
        },
        Shape({ 4, 1, 1 }) });
    c.push_back({ "L1Weighted", [] { return std::make_shared<L1Loss>(2.5); }, Shape({ 5, 3 }), Shape({ 5, 3 }),
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Shape& s, Generator& g) { return uniform(s, g); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l, [](double x, double z) { return std::fabs(z - x); }), 2.5, sw, 0);
        },
        Shape({ 5, 1 }) });
    // Logits up to ±30 (exp would overflow float without the stable form), soft and hard labels.
    c.push_back({ "SigmoidBCE", [] { return std::make_shared<SigmoidBinaryCrossEntropyLoss>(); }, Shape({ 6, 4 }),
        Shape({ 6, 4 }), [](const Shape& s, Generator& g) { return uniform(s, g, -30, 30); },
        [](const Shape& s, Generator& g) {
            Tensor t = uniform(s, g, 0, 1);
            for (int64_t i = 0; i < t.size(); i += 2)
                t.at(i) = t.at(i) < 0.5f ? 0.0f : 1.0f;
            return t;
        },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            // -z log σ(x) - (1 - z) log(1 - σ(x)) = softplus(x) - x z
            return finish(
                elementwise(p, l, [](double x, double z) { return softplus(x) - x * z; }), std::nullopt, sw, 0);
        },
        Shape({ 6, 1 }) });
    c.push_back({ "SigmoidBCEFromSigmoid", [] { return std::make_shared<SigmoidBinaryCrossEntropyLoss>(true, 0.5); },
        Shape({ 5, 3 }), Shape({ 5, 3 }), [](const Shape& s, Generator& g) { return uniform(s, g, 0.05f, 0.95f); },
        [](const Shape& s, Generator& g) { return uniform(s, g, 0, 1); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(elementwise(p, l,
                              [](double x, double z) {
                                  const double eps = 1e-12;
                                  return -(std::log(x + eps) * z + std::log(1 - x + eps) * (1 - z));
                              }),
                0.5, sw, 0);
        },
        Shape({ 5, 1 }) });
    c.push_back({ "SoftmaxCESparse", [] { return std::make_shared<SoftmaxCrossEntropyLoss>(); }, Shape({ 6, 5 }),
        Shape({ 6 }), [](const Shape& s, Generator& g) { return uniform(s, g, -3, 3); },
        [](const Shape& s, Generator& g) { return classes(s, g, 5); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(softmaxCE(p, l, -1, true, false), std::nullopt, sw, 0);
        },
        Shape({ 6, 1 }) });
    c.push_back({ "SoftmaxCEDense", [] { return std::make_shared<SoftmaxCrossEntropyLoss>(-1, false); },
        Shape({ 6, 5 }), Shape({ 6, 5 }), [](const Shape& s, Generator& g) { return uniform(s, g, -3, 3); },
        [](const Shape& s, Generator& g) { return distribution(s, g, -1); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(softmaxCE(p, l, -1, false, false), std::nullopt, sw, 0);
        },
        Shape({ 6, 1 }) });
    // Classes on axis 1 of (batch, classes, positions): a sparse label (batch, positions).
    c.push_back({ "SoftmaxCEAxis1", [] { return std::make_shared<SoftmaxCrossEntropyLoss>(1, true, false, 2.0); },
        Shape({ 3, 4, 5 }), Shape({ 3, 5 }), [](const Shape& s, Generator& g) { return uniform(s, g, -3, 3); },
        [](const Shape& s, Generator& g) { return classes(s, g, 4); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(softmaxCE(p, l, 1, true, false), 2.0, sw, 0);
        },
        Shape({ 3, 1, 1 }) });
    c.push_back({ "SoftmaxCEDenseFromLogits", [] { return std::make_shared<SoftmaxCrossEntropyLoss>(-1, false, true); },
        Shape({ 4, 3 }), Shape({ 4, 3 }), [](const Shape& s, Generator& g) { return uniform(s, g, -3, -0.1f); },
        [](const Shape& s, Generator& g) { return distribution(s, g, -1); },
        [](const Tensor& p, const Tensor& l, const Tensor& sw) {
            return finish(softmaxCE(p, l, -1, false, true), std::nullopt, sw, 0);
        },
        Shape({ 4, 1 }) });
    return c;
}

enum class Mode { Eager, Hybrid, StaticAlloc };

std::shared_ptr<Loss> build(const Case& c, Mode mode)
{
    auto loss = c.make();
    if (mode != Mode::Eager) loss->hybridize(true, mode == Mode::StaticAlloc);
    return loss;
}

Tensor run(Loss& loss, const Tensor& pred, const Tensor& label, const Tensor& sw)
{
    return sw.defined() ? loss.call({ pred, label, sw }).at(0) : loss.call({ pred, label }).at(0);
}

::testing::AssertionResult near(const Tensor& got, const std::vector<double>& want, double rtol = 2e-5)
{
    if (got.shape() != Shape({ static_cast<int64_t>(want.size()) }))
        return ::testing::AssertionFailure() << "shape " << got.shape().str() << ", expected (" << want.size() << ",)";
    for (size_t i = 0; i < want.size(); ++i)
        if (!(std::fabs(got.at(static_cast<int64_t>(i)) - want[i]) <= 1e-5 + rtol * std::fabs(want[i])))
            return ::testing::AssertionFailure()
                << "sample " << i << ": " << got.at(static_cast<int64_t>(i)) << ", expected " << want[i];
    return ::testing::AssertionSuccess();
}

std::string modeName(Mode m)
{
    return m == Mode::Eager ? "eager" : m == Mode::Hybrid ? "hybrid" : "static_alloc";
}

} // namespace

class LossModes : public ::testing::TestWithParam<Mode> { };

TEST_P(LossModes, ValuesMatchADirectComputation)
{
    for (const Case& c : cases()) {
        auto loss = build(c, GetParam());
        Generator g(11);
        for (int batch = 0; batch < 3; ++batch) {
            const Tensor pred = c.pred(c.predShape, g), label = c.label(c.labelShape, g);
            EXPECT_TRUE(near(run(*loss, pred, label, {}), c.expected(pred, label, {})))
                << c.name << ", batch " << batch;
        }
    }
}

TEST_P(LossModes, SampleWeights)
{
    for (const Case& c : cases()) {
        auto loss = build(c, GetParam());
        Generator g(12);
        for (int batch = 0; batch < 2; ++batch) {
            const Tensor pred = c.pred(c.predShape, g), label = c.label(c.labelShape, g);
            const Tensor sw = uniform(c.weightShape, g, 0, 3);
            EXPECT_TRUE(near(run(*loss, pred, label, sw), c.expected(pred, label, sw)))
                << c.name << ", batch " << batch;
            // Without the weight again: a hybridized loss retraces for the other number of inputs.
            EXPECT_TRUE(near(run(*loss, pred, label, {}), c.expected(pred, label, {}))) << c.name << ", unweighted";
        }
    }
}

TEST_P(LossModes, GradientWithRespectToPredEqualsCentralDifferences)
{
    for (const Case& c : cases()) {
        for (bool weighted : { false, true }) {
            auto loss = build(c, GetParam());
            Generator g(13);
            const Tensor pred = c.pred(c.predShape, g), label = c.label(c.labelShape, g);
            const Tensor sw = weighted ? uniform(c.weightShape, g, 0, 3) : Tensor();
            const auto batch = static_cast<int64_t>(c.expected(pred, label, sw).size());
            const Tensor hg = uniform(Shape({ batch }), g, -1, 1);

            autograd::clear_record();
            const Tensor grad = Tensor::zeros(pred.shape());
            autograd::mark_variables({ pred }, { grad });
            Tensor l;
            {
                auto r = autograd::record();
                l = run(*loss, pred, label, sw);
            }
            autograd::backward(l, hg);
            autograd::clear_record();

            // d/dpred of Σ hg·loss, by central differences of the direct computation.
            auto objective = [&](const Tensor& p) {
                const std::vector<double> v = c.expected(p, label, sw);
                double s = 0;
                for (size_t i = 0; i < v.size(); ++i)
                    s += hg.at(static_cast<int64_t>(i)) * v[i];
                return s;
            };
            for (int64_t e = 0; e < pred.size(); ++e) {
                const double h = 1e-3;
                Tensor plus = pred.copy(), minus = pred.copy();
                plus.at(e) += static_cast<float>(h);
                minus.at(e) -= static_cast<float>(h);
                const double step = static_cast<double>(plus.at(e)) - minus.at(e);
                const double numeric = (objective(plus) - objective(minus)) / step;
                EXPECT_NEAR(grad.at(e), numeric, 2e-4 + 2e-3 * std::fabs(numeric))
                    << c.name << (weighted ? " weighted" : "") << ", pred[" << e << "]";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Loss, LossModes, ::testing::Values(Mode::Eager, Mode::Hybrid, Mode::StaticAlloc),
    [](const ::testing::TestParamInfo<Mode>& i) { return modeName(i.param); });

TEST(Loss, HandComputedValues)
{
    // L2Loss halves the squared error: ((1-3)² + (2-2)²) / 2 / 2 elements = 1.
    const Tensor p = Tensor::fromValues({ 1, 2 }, std::vector<float> { 1, 2 });
    const Tensor z = Tensor::fromValues({ 1, 2 }, std::vector<float> { 3, 2 });
    EXPECT_FLOAT_EQ(std::make_shared<L2Loss>()->call({ p, z }).at(0).at(0), 1.0f);
    EXPECT_FLOAT_EQ(std::make_shared<L1Loss>()->call({ p, z }).at(0).at(0), 1.0f);
    // BCE on logit 0: log 2 whatever the label.
    const Tensor zero = Tensor::zeros({ 2, 1 });
    const Tensor labels = Tensor::fromValues({ 2, 1 }, std::vector<float> { 0, 1 });
    const Tensor bce = std::make_shared<SigmoidBinaryCrossEntropyLoss>()->call({ zero, labels }).at(0);
    EXPECT_FLOAT_EQ(bce.at(0), std::log(2.0f));
    EXPECT_FLOAT_EQ(bce.at(1), std::log(2.0f));
    // Large logits stay finite: x = 100, z = 1 costs ~0; x = -100, z = 1 costs 100.
    const Tensor big = Tensor::fromValues({ 2, 1 }, std::vector<float> { 100, -100 });
    const Tensor ones = Tensor::ones({ 2, 1 });
    const Tensor large = std::make_shared<SigmoidBinaryCrossEntropyLoss>()->call({ big, ones }).at(0);
    EXPECT_NEAR(large.at(0), 0.0f, 1e-6);
    EXPECT_FLOAT_EQ(large.at(1), 100.0f);
    // Uniform logits over 4 classes: log 4 for any class.
    const Tensor flat = Tensor::zeros({ 2, 4 });
    const Tensor cls = Tensor::fromValues({ 2 }, std::vector<float> { 3, 0 });
    const Tensor ce = std::make_shared<SoftmaxCrossEntropyLoss>()->call({ flat, cls }).at(0);
    EXPECT_FLOAT_EQ(ce.at(0), std::log(4.0f));
    EXPECT_FLOAT_EQ(ce.at(1), std::log(4.0f));
}

TEST(Loss, SigmoidBCEGradientAtLogitZeroIsMXNets)
{
    // relu and abs have a zero gradient at 0 (as in MXNet), so the stable form's gradient at a logit
    // of exactly 0 is -z rather than sigmoid(0) - z: a kink of the formula, not of the loss.
    autograd::clear_record();
    const Tensor pred = Tensor::zeros({ 2, 1 }), grad = Tensor::zeros({ 2, 1 });
    const Tensor label = Tensor::fromValues({ 2, 1 }, std::vector<float> { 0, 1 });
    autograd::mark_variables({ pred }, { grad });
    auto loss = std::make_shared<SigmoidBCELoss>();
    Tensor l;
    {
        auto r = autograd::record();
        l = loss->call({ pred, label }).at(0);
    }
    autograd::backward(l);
    autograd::clear_record();
    EXPECT_EQ(grad.toVector(), (std::vector<float> { 0, -1 }));
}

TEST(Loss, SparseAndDenseLabelsAgreeOnOneHotLabels)
{
    Generator g(21);
    const Tensor pred = uniform({ 7, 6 }, g, -4, 4);
    const Tensor cls = classes({ 7 }, g, 6);
    Tensor oneHot = Tensor::zeros({ 7, 6 });
    for (int64_t i = 0; i < 7; ++i)
        oneHot.at(i * 6 + static_cast<int64_t>(cls.at(i))) = 1;
    for (bool hybrid : { false, true }) {
        auto sparse = std::make_shared<SoftmaxCrossEntropyLoss>();
        auto dense = std::make_shared<SoftmaxCrossEntropyLoss>(-1, false);
        sparse->hybridize(hybrid);
        dense->hybridize(hybrid);
        const Tensor a = sparse->call({ pred, cls }).at(0), b = dense->call({ pred, oneHot }).at(0);
        for (int64_t i = 0; i < 7; ++i)
            EXPECT_NEAR(a.at(i), b.at(i), 1e-5) << i;
    }
}

TEST(Loss, NamesFollowMXNet)
{
    NameManager::resetGlobalCounters();
    auto ce = std::make_shared<SoftmaxCrossEntropyLoss>();
    auto l2 = std::make_shared<L2Loss>();
    auto bce = std::make_shared<SigmoidBCELoss>();
    auto l1 = std::make_shared<L1Loss>();
    EXPECT_EQ(ce->name(), "softmaxcrossentropyloss0");
    EXPECT_EQ(l2->name(), "l2loss0");
    EXPECT_EQ(bce->name(), "sigmoidbinarycrossentropyloss0");
    EXPECT_EQ(l1->name(), "l1loss0");
    EXPECT_EQ(std::make_shared<SoftmaxCELoss>()->name(), "softmaxcrossentropyloss1");
    // The traced graph: log_softmax, pick (keepdims), the negation, and the batch mean.
    ce->hybridize();
    ce->call({ Tensor::zeros({ 2, 3 }), Tensor::zeros({ 2 }) });
    std::vector<std::string> ops;
    for (const auto& n : ce->graph()->nodes()) {
        if (n.isVariable()) continue;
        ops.push_back(n.op);
        EXPECT_EQ(n.name.rfind("softmaxcrossentropyloss0_", 0), 0u) << n.name;
    }
    EXPECT_EQ(ops, (std::vector<std::string> { "log_softmax", "pick", "_mul_scalar", "mean" }));
}

TEST(Loss, WrongNumberOfInputsIsAUsageError)
{
    auto loss = std::make_shared<L2Loss>();
    const Tensor x = Tensor::zeros({ 2, 2 });
    EXPECT_THROW(loss->call({ x }), UsageError);
    EXPECT_THROW(loss->call({ x, x, x, x }), UsageError);
    EXPECT_THROW(loss->call({ x, Tensor::zeros({ 3, 2 }) }), ShapeError);
}

namespace {
// A model and its loss in one traced block: (x, label) -> loss(dense(x), label).
struct WithLoss : HybridBlock {
    WithLoss()
        : HybridBlock("withloss", std::nullopt)
    {
        auto scope = name_scope();
        dense = std::make_shared<nn::Dense>(3, std::nullopt, true, true, nullptr, nullptr, 4);
        loss = std::make_shared<SoftmaxCrossEntropyLoss>();
        register_child(dense);
        register_child(loss);
    }
    std::vector<Value> hybrid_forward(const F&, const std::vector<Value>& x) override
    {
        return { (*loss)((*dense)(x.at(0)), x.at(1)) };
    }
    std::shared_ptr<nn::Dense> dense;
    std::shared_ptr<SoftmaxCrossEntropyLoss> loss;
};
} // namespace

TEST(Loss, InsideATracedParentGivesTheEagerParameterGradients)
{
    Generator g(31);
    const Tensor x = uniform({ 5, 4 }, g), label = classes({ 5 }, g, 3);
    std::vector<std::vector<float>> grads[2];
    for (int hybrid = 0; hybrid < 2; ++hybrid) {
        autograd::clear_record();
        auto net = std::make_shared<WithLoss>();
        globalGenerator().seed(5);
        net->initialize();
        if (hybrid) net->hybridize();
        Tensor l;
        {
            auto r = autograd::record();
            l = net->call({ x, label }).at(0);
        }
        EXPECT_EQ(l.shape(), Shape({ 5 }));
        autograd::backward(l);
        for (const ParamPtr& p : net->collect_params().values())
            grads[hybrid].push_back(p->grad().toVector());
    }
    ASSERT_EQ(grads[0].size(), 2u);
    for (size_t i = 0; i < grads[0].size(); ++i)
        for (size_t e = 0; e < grads[0][i].size(); ++e)
            EXPECT_NEAR(grads[0][i][e], grads[1][i][e], 1e-5);
    // The weight's gradient is not all zero (the loss reached the dense layer).
    double norm = 0;
    for (float v : grads[1][0])
        norm += std::fabs(v);
    EXPECT_GT(norm, 1e-3);
}
