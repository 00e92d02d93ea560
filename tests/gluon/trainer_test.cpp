// Optimizers (MXNet 1.x's SGD and Adam update rules, step by step against double-precision
// references), the Trainer on a Dense network after autograd::backward, a small training run, and the
// Accuracy / MeanLoss metrics.

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/metric.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/optimizer.h"
#include "gluon/sequential.h"
#include "gluon/trainer.h"
#include "tensor/random.h"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::gluon;

namespace {

Tensor rnd(const Shape& s, uint64_t seed, float lo = -1, float hi = 1)
{
    Generator g(seed);
    return Tensor::uniform(s, lo, hi, &g);
}

std::vector<double> toDouble(const Tensor& t)
{
    std::vector<double> v;
    for (float x : t.values())
        v.push_back(x);
    return v;
}

double clipRef(double x, double bound)
{
    return bound > 0 ? std::max(-bound, std::min(bound, x)) : x;
}

void expectClose(const Tensor& actual, const std::vector<double>& expected, const std::string& what)
{
    ASSERT_EQ(actual.size(), static_cast<int64_t>(expected.size())) << what;
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(actual.at(static_cast<int64_t>(i)), expected[i], 1e-6 + 2e-5 * std::fabs(expected[i]))
            << what << "[" << i << "]";
}

std::string messageOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

// ---- update rules ----

TEST(OptimizerSgd, PlainUpdateWithWeightDecayAndRescale)
{
    const double lr = 0.1, wd = 0.01, rescale = 0.5;
    SGD sgd(lr, 0.0, wd, rescale);
    const Tensor w = rnd({ 2, 3 }, 1);
    std::vector<double> ref = toDouble(w);
    for (int step = 0; step < 4; ++step) {
        const Tensor g = rnd({ 2, 3 }, 10 + step, -3, 3);
        sgd.update(0, w, g);
        for (size_t i = 0; i < ref.size(); ++i)
            ref[i] = (1 - lr * wd) * ref[i] - lr * rescale * g.at(static_cast<int64_t>(i));
        expectClose(w, ref, "step " + std::to_string(step));
        EXPECT_TRUE(sgd.state(0).empty()); // no momentum, no state
        EXPECT_EQ(sgd.updateCount(0), step + 1);
    }
}

TEST(OptimizerSgd, MomentumStateAcrossSteps)
{
    const double lr = 0.05, momentum = 0.9, wd = 0.001, rescale = 0.25;
    SGD sgd(lr, momentum, wd, rescale);
    const Tensor w = rnd({ 5 }, 2);
    std::vector<double> ref = toDouble(w), mom(ref.size(), 0.0);
    for (int step = 0; step < 6; ++step) {
        const Tensor g = rnd({ 5 }, 20 + step, -2, 2);
        sgd.update(3, w, g);
        for (size_t i = 0; i < ref.size(); ++i) {
            mom[i] = momentum * mom[i] - lr * wd * ref[i] - lr * rescale * g.at(static_cast<int64_t>(i));
            ref[i] += mom[i];
        }
        expectClose(w, ref, "weight, step " + std::to_string(step));
        ASSERT_EQ(sgd.state(3).size(), 1u);
        expectClose(sgd.state(3)[0], mom, "momentum, step " + std::to_string(step));
    }
    EXPECT_EQ(sgd.num_update(), 6);
}

TEST(OptimizerSgd, ClipAppliesToTheRescaledGradientNotToWeightDecay)
{
    // sgd_mom_update: mom = momentum·mom − lr·wd·w − lr·clip(rescale·g, c).
    const double lr = 0.1, momentum = 0.5, wd = 0.1, rescale = 0.5, clip = 0.3;
    SGD sgd(lr, momentum, wd, rescale, clip);
    SGD plain(lr, 0.0, wd, rescale, clip);
    const Tensor w = Tensor::fromValues({ 4 }, std::vector<float> { 2.0f, -2.0f, 0.5f, 10.0f });
    const Tensor w2 = w.copy();
    std::vector<double> ref = toDouble(w), ref2 = toDouble(w2), mom(4, 0.0);
    for (int step = 0; step < 3; ++step) {
        const Tensor g = Tensor::fromValues({ 4 }, std::vector<float> { 8.0f, -8.0f, 0.2f, 0.0f });
        sgd.update(0, w, g);
        plain.update(0, w2, g);
        for (size_t i = 0; i < 4; ++i) {
            const double cg = clipRef(rescale * g.at(static_cast<int64_t>(i)), clip);
            mom[i] = momentum * mom[i] - lr * wd * ref[i] - lr * cg;
            ref[i] += mom[i];
            ref2[i] = (1 - lr * wd) * ref2[i] - lr * cg;
        }
        expectClose(w, ref, "momentum, step " + std::to_string(step));
        expectClose(w2, ref2, "plain, step " + std::to_string(step));
    }
    // The large weight decays well beyond the clip bound: wd is outside the clip.
    EXPECT_LT(w2.at(3), 10.0f - 3 * lr * clip);
}

TEST(OptimizerSgd, NonPositiveClipMeansNoClipping)
{
    for (double clip : { 0.0, -1.0 }) {
        SGD sgd(1.0, 0.0, 0.0, 1.0, clip);
        const Tensor w = Tensor::zeros({ 1 });
        sgd.update(0, w, Tensor::full({ 1 }, 100.0f));
        EXPECT_FLOAT_EQ(w.at(0), -100.0f) << clip;
    }
}

TEST(OptimizerAdam, BiasCorrectedStepsWithWeightDecayRescaleAndClip)
{
    struct Case {
        double wd, rescale, clip;
    };
    for (const Case c : { Case { 0.0, 1.0, -1.0 }, Case { 0.01, 0.125, -1.0 }, Case { 0.1, 2.0, 0.5 } }) {
        const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
        Adam adam(lr, b1, b2, eps, c.wd, c.rescale, c.clip);
        const Tensor w = rnd({ 3, 2 }, 3);
        std::vector<double> ref = toDouble(w), m(ref.size(), 0.0), v(ref.size(), 0.0);
        for (int t = 1; t <= 7; ++t) {
            const Tensor g = rnd({ 3, 2 }, 30 + t, -1, 1);
            adam.update(0, w, g);
            const double lrT = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
            for (size_t i = 0; i < ref.size(); ++i) {
                // The gradient includes wd·weight before clipping.
                const double r = clipRef(g.at(static_cast<int64_t>(i)) * c.rescale + c.wd * ref[i], c.clip);
                m[i] = b1 * m[i] + (1 - b1) * r;
                v[i] = b2 * v[i] + (1 - b2) * r * r;
                ref[i] -= lrT * m[i] / (std::sqrt(v[i]) + eps);
            }
            const std::string what
                = "wd " + std::to_string(c.wd) + " clip " + std::to_string(c.clip) + " t " + std::to_string(t);
            expectClose(w, ref, "weight, " + what);
            ASSERT_EQ(adam.state(0).size(), 2u);
            expectClose(adam.state(0)[0], m, "mean, " + what);
            expectClose(adam.state(0)[1], v, "variance, " + what);
        }
    }
}

TEST(OptimizerAdam, EachIndexCountsItsOwnSteps)
{
    // The first step of an index moves every element by about lr (m/sqrt(v) = ±1 after correction),
    // whatever the other indices have done.
    Adam adam(0.01);
    const Tensor a = Tensor::zeros({ 3 }), b = Tensor::zeros({ 3 });
    for (int i = 0; i < 5; ++i)
        adam.update(0, a, Tensor::full({ 3 }, 0.3f));
    adam.update(1, b, Tensor::full({ 3 }, -4.0f));
    EXPECT_EQ(adam.updateCount(0), 5);
    EXPECT_EQ(adam.updateCount(1), 1);
    EXPECT_EQ(adam.num_update(), 5);
    for (int64_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(b.at(i), 0.01, 1e-6);
        EXPECT_NEAR(a.at(i), -0.05, 1e-5);
    }
}

TEST(OptimizerAdam, ResetStatesStartsAfresh)
{
    Adam adam(0.1);
    const Tensor w = Tensor::zeros({ 2 });
    adam.update(0, w, Tensor::full({ 2 }, 1.0f));
    adam.resetStates();
    EXPECT_TRUE(adam.state(0).empty());
    EXPECT_EQ(adam.updateCount(0), 0);
    adam.update(0, w, Tensor::full({ 2 }, 1.0f));
    EXPECT_NEAR(w.at(0), -0.2, 1e-5); // float32 kernel: 1 − β2 is not exactly 0.001
}

TEST(Optimizer, MismatchedGradientIsAUsageError)
{
    SGD sgd;
    EXPECT_THROW(sgd.update(0, Tensor::zeros({ 3 }), Tensor::zeros({ 4 })), UsageError);
    sgd.update(0, Tensor::zeros({ 3 }), Tensor::zeros({ 3 }));
    SGD mom(0.1, 0.9);
    mom.update(0, Tensor::zeros({ 3 }), Tensor::zeros({ 3 }));
    EXPECT_THROW(mom.update(0, Tensor::zeros({ 2 }), Tensor::zeros({ 2 })), UsageError); // state of index 0 is (3,)
}

TEST(Optimizer, MultipliersByIndex)
{
    SGD sgd(1.0, 0.0, 0.5);
    sgd.set_lr_mult({ { 1, 0.25 } });
    sgd.set_wd_mult({ { 1, 0.0 } });
    EXPECT_DOUBLE_EQ(sgd.lrFor(0), 1.0);
    EXPECT_DOUBLE_EQ(sgd.lrFor(1), 0.25);
    EXPECT_DOUBLE_EQ(sgd.wdFor(0), 0.5);
    EXPECT_DOUBLE_EQ(sgd.wdFor(1), 0.0);
}

TEST(Optimizer, FactoryNamesAndParameters)
{
    auto sgd = makeOptimizer("SGD", { { "learning_rate", 0.2 }, { "momentum", 0.9 }, { "wd", 1e-4 } });
    ASSERT_TRUE(std::dynamic_pointer_cast<SGD>(sgd));
    EXPECT_EQ(sgd->name(), "sgd");
    EXPECT_DOUBLE_EQ(sgd->learning_rate(), 0.2);
    EXPECT_DOUBLE_EQ(sgd->wd(), 1e-4);
    EXPECT_DOUBLE_EQ(std::dynamic_pointer_cast<SGD>(sgd)->momentum(), 0.9);
    EXPECT_DOUBLE_EQ(makeOptimizer("sgd")->learning_rate(), 0.01);

    auto adam = std::dynamic_pointer_cast<Adam>(makeOptimizer("adam", { { "beta1", 0.8 }, { "clip_gradient", 5 } }));
    ASSERT_TRUE(adam);
    EXPECT_DOUBLE_EQ(adam->learning_rate(), 0.001);
    EXPECT_DOUBLE_EQ(adam->beta1(), 0.8);
    EXPECT_DOUBLE_EQ(adam->beta2(), 0.999);
    EXPECT_DOUBLE_EQ(adam->epsilon(), 1e-8);
    EXPECT_DOUBLE_EQ(adam->clip_gradient(), 5.0);

    const std::string unknown = messageOf([] { makeOptimizer("rmsprop2", {}); });
    EXPECT_NE(unknown.find("rmsprop2"), std::string::npos) << unknown;
    const std::string badParam = messageOf([] { makeOptimizer("sgd", { { "beta1", 0.9 } }); });
    EXPECT_NE(badParam.find("beta1"), std::string::npos) << badParam;
    EXPECT_NE(badParam.find("sgd"), std::string::npos) << badParam;
    EXPECT_THROW(makeOptimizer("adam", { { "momentum", 0.9 } }), UsageError);
}

// ---- Trainer ----

namespace {

std::shared_ptr<HybridSequential> makeNet(bool deferred = false)
{
    autograd::clear_record();
    NameManager::resetGlobalCounters();
    auto net = std::make_shared<HybridSequential>();
    net->add(std::make_shared<nn::Dense>(4, std::nullopt, true, true, nullptr, nullptr, deferred ? 0 : 5));
    net->add(std::make_shared<nn::Dense>(2, std::nullopt, true, true, nullptr, nullptr, deferred ? 0 : 4));
    globalGenerator().seed(7);
    net->initialize();
    return net;
}

// Records net(x) and back-propagates head gradient hg into the parameters' grads.
void forwardBackward(HybridSequential& net, const Tensor& x, const Tensor& hg)
{
    Tensor y;
    {
        auto r = autograd::record();
        y = net.call(x);
    }
    autograd::backward(y, hg);
}

} // namespace

TEST(Trainer, SgdStepMovesEachWeightByMinusLrGradOverBatch)
{
    for (int hybrid = 0; hybrid < 2; ++hybrid) {
        auto net = makeNet();
        if (hybrid) net->hybridize();
        const ParameterDict params = net->collect_params();
        const ParamPtr frozen = params.values()[3]; // dense1_bias
        frozen->set_grad_req("null");
        const std::vector<float> frozenBefore = frozen->data().toVector();

        const int64_t batch = 4;
        forwardBackward(*net, rnd({ batch, 5 }, 40), rnd({ batch, 2 }, 41));
        std::vector<std::vector<float>> before, grads;
        for (const ParamPtr& p : params.values()) {
            before.push_back(p->data().toVector());
            grads.push_back(p->grad_req() == "null" ? std::vector<float> {} : p->grad().toVector());
        }

        Trainer trainer(params, "sgd", { { "learning_rate", 0.1 } });
        trainer.step(batch);
        EXPECT_DOUBLE_EQ(trainer.optimizer()->rescale_grad(), 0.25);
        for (size_t k = 0; k < params.size(); ++k) {
            const ParamPtr& p = params.values()[k];
            if (p == frozen) continue;
            double moved = 0;
            for (size_t e = 0; e < before[k].size(); ++e) {
                const double expected = double(before[k][e]) - 0.1 * double(grads[k][e]) / batch;
                EXPECT_NEAR(p->data().at(int64_t(e)), expected, 1e-7 + 1e-6 * std::fabs(expected))
                    << p->name() << "[" << e << "]";
                moved += std::fabs(p->data().at(int64_t(e)) - before[k][e]);
            }
            EXPECT_GT(moved, 0.0) << p->name();
            // Gradients are left for the next backward to overwrite.
            EXPECT_EQ(p->grad().toVector(), grads[k]) << p->name();
        }
        EXPECT_EQ(frozen->data().toVector(), frozenBefore);
        // The hybridized block computes with the updated weights.
        const Tensor x = rnd({ 1, 5 }, 42);
        const Tensor y = net->call(x);
        auto eager = makeNet();
        for (size_t k = 0; k < params.size(); ++k)
            eager->collect_params().values()[k]->data().copyFrom(params.values()[k]->data().view());
        const Tensor ye = eager->call(x);
        for (int64_t e = 0; e < y.size(); ++e)
            EXPECT_NEAR(y.at(e), ye.at(e), 1e-6) << (hybrid ? "hybridized" : "eager");
    }
}

TEST(Trainer, RescaleGradIsTheOptimizersScaleOverBatchSize)
{
    auto net = makeNet();
    auto opt = std::make_shared<SGD>(0.1, 0.0, 0.0, 2.0);
    Trainer trainer(net->collect_params(), opt);
    forwardBackward(*net, rnd({ 2, 5 }, 50), rnd({ 2, 2 }, 51));
    trainer.step(4);
    EXPECT_DOUBLE_EQ(opt->rescale_grad(), 0.5);
    trainer.step(2); // from the scale the Trainer was made with, not the last one
    EXPECT_DOUBLE_EQ(opt->rescale_grad(), 1.0);
    EXPECT_EQ(opt->updateCount(0), 2);
    EXPECT_THROW(trainer.step(0), UsageError);
}

TEST(Trainer, LearningRateAndParameterMultipliers)
{
    auto net = makeNet();
    const ParameterDict params = net->collect_params();
    Trainer trainer(params, "sgd", { { "learning_rate", 0.5 } });
    EXPECT_DOUBLE_EQ(trainer.learning_rate(), 0.5);
    trainer.set_learning_rate(0.2);
    EXPECT_DOUBLE_EQ(trainer.learning_rate(), 0.2);
    EXPECT_DOUBLE_EQ(trainer.optimizer()->learning_rate(), 0.2);

    // lr_mult is read at each step (MXNet's param_dict).
    const ParamPtr w = params.values()[0];
    w->lr_mult = 0.5f;
    for (const ParamPtr& p : params.values())
        p->grad().fill(1.0f);
    const std::vector<float> before = w->data().toVector();
    trainer.step(1);
    for (size_t e = 0; e < before.size(); ++e)
        EXPECT_NEAR(w->data().at(int64_t(e)), before[e] - 0.1f, 1e-6);
    EXPECT_DOUBLE_EQ(trainer.optimizer()->lrFor(0), 0.1);
    EXPECT_DOUBLE_EQ(trainer.optimizer()->lrFor(1), 0.2);
}

TEST(Trainer, GradReqAddIsNotZeroedByStep)
{
    auto net = makeNet();
    const ParameterDict params = net->collect_params();
    params.values()[0]->set_grad_req("add");
    Trainer trainer(params, "sgd", {});
    const Tensor x = rnd({ 2, 5 }, 60), hg = rnd({ 2, 2 }, 61);
    forwardBackward(*net, x, hg);
    const std::vector<float> once = params.values()[0]->grad().toVector();
    trainer.step(2);
    EXPECT_EQ(params.values()[0]->grad().toVector(), once);
    net->collect_params().zero_grad();
    for (float g : params.values()[0]->grad().values())
        EXPECT_EQ(g, 0.0f);
}

TEST(Trainer, DeferredParametersAreAnErrorNamingThemOrSkipped)
{
    auto net = makeNet(true); // shapes of the weights wait for the first forward call
    const ParameterDict params = net->collect_params();
    Trainer trainer(params, "sgd", { { "learning_rate", 1.0 } });
    const ParamPtr bias0 = params.values()[1];
    ASSERT_TRUE(bias0->initialized()); // (4,) is known
    bias0->grad().fill(1.0f);
    const std::vector<float> before = bias0->data().toVector();

    const std::string msg = messageOf([&] { trainer.step(1); });
    EXPECT_NE(msg.find("Parameter 'dense0_weight'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("deferred"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dense1_weight"), std::string::npos) << msg;
    EXPECT_EQ(bias0->data().toVector(), before); // nothing moved

    trainer.step(1, true);
    for (size_t e = 0; e < before.size(); ++e)
        EXPECT_FLOAT_EQ(bias0->data().at(int64_t(e)), before[e] - 1.0f);

    auto never = std::make_shared<Parameter>("lonely_weight", Shape { 2 });
    Trainer t2(std::vector<ParamPtr> { never }, "adam", {});
    const std::string msg2 = messageOf([&] { t2.step(1); });
    EXPECT_NE(msg2.find("Parameter 'lonely_weight' has not been initialized"), std::string::npos) << msg2;
    t2.step(1, true);

    EXPECT_THROW((void)Trainer(params, OptimizerPtr {}), UsageError);
    EXPECT_THROW((void)Trainer(std::vector<ParamPtr> { never, never }, "sgd"), UsageError);
}

namespace {

// y = 3x + 1 with x in [-1, 1): 64 points.
void lineData(Tensor& x, Tensor& y)
{
    x = rnd({ 64, 1 }, 70);
    y = Tensor({ 64, 1 });
    for (int64_t i = 0; i < 64; ++i)
        y.at(i) = 3.0f * x.at(i) + 1.0f;
}

// Per-sample L2 loss ½(pred − y)² (Gluon's L2Loss) and its gradient with respect to pred.
double l2(const Tensor& pred, const Tensor& y, Tensor* grad, MeanLoss* metric)
{
    Tensor losses({ pred.shape()[0] });
    double sum = 0;
    for (int64_t i = 0; i < pred.size(); ++i) {
        const float d = pred.at(i) - y.at(i);
        losses.at(i) = 0.5f * d * d;
        sum += losses.at(i);
        if (grad) grad->at(i) = d;
    }
    if (metric) metric->update(losses);
    return sum / static_cast<double>(pred.size());
}

double trainLine(const std::string& optimizer, const std::map<std::string, double>& params, bool hybrid, int epochs,
    nn::Dense** out, std::shared_ptr<nn::Dense>& keep)
{
    autograd::clear_record();
    NameManager::resetGlobalCounters();
    keep = std::make_shared<nn::Dense>(1, std::nullopt, true, true, nullptr, nullptr, 1);
    globalGenerator().seed(5);
    keep->initialize();
    if (hybrid) keep->hybridize();
    *out = keep.get();
    Tensor x, y;
    lineData(x, y);
    Trainer trainer(keep->collect_params(), optimizer, params);
    const double first = l2(keep->call(x), y, nullptr, nullptr);
    MeanLoss metric;
    for (int epoch = 0; epoch < epochs; ++epoch) {
        metric.reset();
        Tensor pred;
        {
            auto r = autograd::record();
            pred = keep->call(x);
        }
        Tensor grad(pred.shape());
        l2(pred, y, &grad, &metric);
        autograd::backward(pred, grad); // the gradient of Σ losses
        trainer.step(64);
    }
    EXPECT_EQ(metric.get().first, "loss");
    const double last = l2(keep->call(x), y, nullptr, nullptr);
    EXPECT_LT(last, first / 10) << optimizer << (hybrid ? " hybridized" : " eager") << ": loss " << first << " → "
                                << last;
    return last;
}

} // namespace

TEST(Trainer, DenseLearnsALineWithSgdMomentumAndAdam)
{
    struct Run {
        std::string optimizer;
        std::map<std::string, double> params;
        int epochs;
    };
    const std::vector<Run> runs { { "sgd", { { "learning_rate", 0.5 } }, 60 },
        { "sgd", { { "learning_rate", 0.1 }, { "momentum", 0.9 } }, 100 },
        { "adam", { { "learning_rate", 0.1 } }, 150 } };
    for (const Run& run : runs)
        for (int hybrid = 0; hybrid < 2; ++hybrid) {
            std::shared_ptr<nn::Dense> keep;
            nn::Dense* dense = nullptr;
            const double loss = trainLine(run.optimizer, run.params, hybrid != 0, run.epochs, &dense, keep);
            EXPECT_LT(loss, 1e-2) << run.optimizer;
            EXPECT_NEAR(dense->weight()->data().at(0), 3.0f, 0.2f) << run.optimizer;
            EXPECT_NEAR(dense->bias()->data().at(0), 1.0f, 0.2f) << run.optimizer;
        }
}

// ---- metrics ----

TEST(MetricAccuracy, ArgmaxOverClassesAgainstFloatLabels)
{
    Accuracy acc;
    EXPECT_TRUE(std::isnan(acc.get().second));
    const Tensor preds = Tensor::fromValues({ 4, 3 },
        std::vector<float> { 0.1f, 0.7f, 0.2f, /**/ 0.9f, 0.05f, 0.05f, /**/ 0.3f, 0.3f, 0.4f, /**/ 0.5f, 0.5f, 0.0f });
    const Tensor labels = Tensor::fromValues({ 4 }, std::vector<float> { 1, 0, 1, 1 });
    acc.update(labels, preds); // argmax 1, 0, 2, 0 (first of a tie)
    EXPECT_EQ(acc.get().first, "accuracy");
    EXPECT_DOUBLE_EQ(acc.get().second, 0.5);
    EXPECT_EQ(acc.num_inst(), 4);

    // Several arrays at once; predictions already as class indices are compared directly.
    acc.update({ Tensor::fromValues({ 2 }, std::vector<float> { 2, 0 }) },
        { Tensor::fromValues({ 2 }, std::vector<float> { 2, 1 }) });
    EXPECT_DOUBLE_EQ(acc.get().second, 3.0 / 6.0);
    acc.reset();
    EXPECT_TRUE(std::isnan(acc.get().second));

    // (N, C, W) predictions against (N, W) labels: argmax over axis 1 for every position.
    const Tensor seq = Tensor::fromValues({ 1, 2, 3 }, std::vector<float> { 1, 0, 5, /**/ 0, 1, 4 });
    acc.update(Tensor::fromValues({ 1, 3 }, std::vector<float> { 0, 1, 1 }), seq);
    EXPECT_DOUBLE_EQ(acc.get().second, 2.0 / 3.0);

    // Axis −1.
    Accuracy last(-1);
    last.update(Tensor::fromValues({ 2 }, std::vector<float> { 2, 1 }), preds.slice(0, 2).copy());
    EXPECT_DOUBLE_EQ(last.get().second, 0.0);
}

TEST(MetricAccuracy, MismatchedShapesNameBoth)
{
    Accuracy acc;
    const std::string msg = messageOf([&] { acc.update(Tensor::zeros({ 3 }), Tensor::zeros({ 4, 2 })); });
    EXPECT_NE(msg.find("(3,)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4, 2)"), std::string::npos) << msg;
    EXPECT_THROW(acc.update(std::vector<Tensor> { Tensor::zeros({ 1 }) }, std::vector<Tensor> {}), UsageError);
}

TEST(MetricMeanLoss, MeanOfAllElements)
{
    MeanLoss loss;
    loss.update(Tensor::fromValues({ 2 }, std::vector<float> { 1, 3 }));
    loss.update({}, { Tensor::fromValues({ 2, 2 }, std::vector<float> { 2, 2, 2, 8 }) });
    EXPECT_EQ(loss.get().first, "loss");
    EXPECT_DOUBLE_EQ(loss.get().second, 18.0 / 6.0);
}
