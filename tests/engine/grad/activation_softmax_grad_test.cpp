// Gradients of Activation, LeakyReLU, softmax, log_softmax, SoftmaxActivation, SoftmaxOutput and
// Embedding against central differences (SoftmaxOutput against its cross-entropy loss).

#include "common/grad_check.h"

#include <cmath>
#include <gtest/gtest.h>
#include <optional>
#include <vector>

using namespace opscope;
using opscope::test::checkGradient;
using opscope::test::GradCheckOptions;

namespace {

Tensor rnd(const Shape& s, uint64_t seed, float lo = -1, float hi = 1)
{
    Generator g(seed);
    return Tensor::uniform(s, lo, hi, &g);
}

// Uniform in [-hi, hi] with no value closer to 0 than `margin` (clear of the kinks at 0).
Tensor awayFromZero(const Shape& s, uint64_t seed, float margin = 0.05f, float hi = 1.5f)
{
    Tensor t = rnd(s, seed, -hi, hi);
    for (float& v : t.values())
        if (std::fabs(v) < margin) v = v < 0 ? v - margin : v + margin;
    return t;
}

Tensor values(const Shape& s, std::vector<float> v)
{
    return Tensor::fromValues(s, v);
}

// The gradient of input 0 for the head gradient `dy` (undefined: none).
Tensor dataGrad(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, const Tensor& dy = {})
{
    const std::vector<Tensor> outs = invokeOp(op, attrs, inputs, KernelKind::Reference);
    std::vector<bool> wanted(inputs.size(), false);
    wanted[0] = true;
    return invokeBackward(op, attrs, inputs, outs, { dy }, wanted)[0];
}

::testing::AssertionResult allEqual(const Tensor& t, float value)
{
    for (int64_t i = 0; i < t.size(); ++i)
        if (t.at(i) != value) return ::testing::AssertionFailure() << "element " << i << " is " << t.at(i);
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult near(const Tensor& a, const Tensor& b, float tol = 1e-5f)
{
    if (a.shape() != b.shape()) return ::testing::AssertionFailure() << a.shape().str() << " vs " << b.shape().str();
    for (int64_t i = 0; i < a.size(); ++i)
        if (std::fabs(a.at(i) - b.at(i)) > tol)
            return ::testing::AssertionFailure() << "element " << i << ": " << a.at(i) << " vs " << b.at(i);
    return ::testing::AssertionSuccess();
}

// SoftmaxOutput ignores its head gradient: its gradient is that of a cross-entropy loss. This checks
// it against central differences of scale · Σ −Σ_c t_c log p_c over the softmaxes of the
// (outer, n, inner) output, with t the one-hot of `labels` (one per softmax; nullopt: not in the
// loss) smoothed by `alpha`, or the rows of `probs` when given.
::testing::AssertionResult checkCrossEntropy(const AttrMap& attrs, const Tensor& data, const Tensor& label,
    int64_t outer, int64_t n, int64_t inner, const std::vector<std::optional<int>>& labels, double scale,
    double alpha = 0, const Tensor& probs = {})
{
    auto loss = [&](const Tensor& x) {
        const Tensor p = invokeOp("SoftmaxOutput", attrs, { x, label }, KernelKind::Reference)[0];
        double l = 0;
        for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
                const auto& k = labels[static_cast<size_t>(o * inner + i)];
                if (!probs.defined() && !k) continue;
                for (int64_t c = 0; c < n; ++c) {
                    const int64_t e = (o * n + c) * inner + i;
                    const double t = probs.defined() ? probs.at(e) : (c == *k ? 1 - alpha : alpha / (n - 1));
                    l -= t * std::log(static_cast<double>(p.at(e)));
                }
            }
        }
        return scale * l;
    };
    // A random head gradient must change nothing.
    const Tensor g = dataGrad("SoftmaxOutput", attrs, { data, label }, rnd(data.shape(), 99));
    const double eps = 1e-2;
    for (int64_t e = 0; e < data.size(); ++e) {
        Tensor plus = data.copy(), minus = data.copy();
        plus.at(e) += static_cast<float>(eps);
        minus.at(e) -= static_cast<float>(eps);
        const double numeric
            = (loss(plus) - loss(minus)) / (static_cast<double>(plus.at(e)) - static_cast<double>(minus.at(e)));
        if (std::fabs(numeric - g.at(e)) > 1e-3 + 1e-2 * std::fabs(numeric))
            return ::testing::AssertionFailure()
                << "d loss / d data[" << e << "] analytic " << g.at(e) << " numeric " << numeric;
    }
    return ::testing::AssertionSuccess();
}

} // namespace

// ---- Activation --------------------------------------------------------------------------------

TEST(Gradient, ActivationSmoothTypes)
{
    for (const char* type : { "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish" }) {
        SCOPED_TRACE(type);
        EXPECT_TRUE(checkGradient("Activation", { { "act_type", type } }, { rnd({ 2, 3, 4 }, 1, -3, 3) }));
    }
    // softrelu is x itself above 20 (its gradient from the output is then 1).
    EXPECT_TRUE(checkGradient(
        "Activation", { { "act_type", "softrelu" } }, { values({ 4 }, { -25.0f, -0.5f, 21.0f, 30.0f }) }));
    EXPECT_TRUE(checkGradient("Activation", { { "act_type", "mish" } }, { values({ 3 }, { -8.0f, 4.0f, 22.0f }) }));
}

TEST(Gradient, ActivationRelu)
{
    EXPECT_TRUE(checkGradient("Activation", { { "act_type", "relu" } }, { awayFromZero({ 3, 5 }, 2) }));
    // MXNet's relu_grad reads the output: y > 0, so 0 at x = 0.
    const Tensor g = dataGrad("Activation", { { "act_type", "relu" } }, { values({ 3 }, { -1.0f, 0.0f, 2.0f }) },
        values({ 3 }, { 5.0f, 5.0f, 5.0f }));
    EXPECT_EQ(g.toVector(), (std::vector<float> { 0.0f, 0.0f, 5.0f }));
}

// ---- LeakyReLU ---------------------------------------------------------------------------------

TEST(Gradient, LeakyReLULeakyAndElu)
{
    const Tensor x = awayFromZero({ 2, 3, 4 }, 3);
    EXPECT_TRUE(checkGradient("LeakyReLU", {}, { x }));
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "leaky" }, { "slope", "0.1" } }, { x }));
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "elu" } }, { x }));
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "elu" }, { "slope", "0.7" } }, { x }));
    // A negative slope: the gradient follows the input's sign (oneDNN's path), not the output's.
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "leaky" }, { "slope", "-0.5" } }, { x }));
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "elu" }, { "slope", "-0.5" } }, { x }));
}

TEST(Gradient, LeakyReLUGelu)
{
    EXPECT_TRUE(checkGradient("LeakyReLU", { { "act_type", "gelu" } }, { rnd({ 2, 3, 4 }, 4, -3, 3) }));
    // Finite at 0, where MXNet's y / x form is 0/0: Φ(0) = 0.5.
    const Tensor g
        = dataGrad("LeakyReLU", { { "act_type", "gelu" } }, { values({ 1 }, { 0.0f }) }, values({ 1 }, { 1.0f }));
    EXPECT_FLOAT_EQ(g.at(0), 0.5f);
}

TEST(Gradient, LeakyReLUSelu)
{
    const AttrMap selu { { "act_type", "selu" } };
    // Above 0 the gradient is λ.
    EXPECT_TRUE(checkGradient("LeakyReLU", selu, { rnd({ 2, 5 }, 5, 0.05f, 2.0f) }));
    // Below 0 MXNet's selu_grad gives λ·(y + α), not the derivative λ·α·eˣ = y + λ·α; it is followed.
    constexpr double lambda = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
    const Tensor x = values({ 3 }, { -2.0f, -1.0f, -0.25f });
    const Tensor dy = values({ 3 }, { 1.0f, -2.0f, 0.5f });
    const Tensor y = invokeOp("LeakyReLU", selu, { x }, KernelKind::Reference)[0];
    const Tensor g = dataGrad("LeakyReLU", selu, { x }, dy);
    for (int64_t i = 0; i < 3; ++i) {
        const double mxnet = lambda * (y.at(i) + alpha) * dy.at(i);
        const double exact = lambda * alpha * std::exp(static_cast<double>(x.at(i))) * dy.at(i);
        EXPECT_NEAR(g.at(i), mxnet, 1e-5);
        EXPECT_GT(std::fabs(g.at(i) - exact), 1e-3);
    }
}

TEST(Gradient, LeakyReLUPReLU)
{
    const AttrMap prelu { { "act_type", "prelu" } };
    // One slope per channel (axis 1): gamma's gradient sums over the batch and spatial axes.
    EXPECT_TRUE(checkGradient("LeakyReLU", prelu, { awayFromZero({ 2, 3, 2, 2 }, 6), rnd({ 3 }, 7, 0.1f, 0.5f) }));
    EXPECT_TRUE(checkGradient("LeakyReLU", prelu, { awayFromZero({ 4, 3 }, 8), rnd({ 3 }, 9, 0.1f, 0.5f) }));
    // A single slope shared by every channel: summed over everything.
    EXPECT_TRUE(checkGradient("LeakyReLU", prelu, { awayFromZero({ 2, 3, 4 }, 10), values({ 1 }, { 0.3f }) }));
    // Only gamma asked for.
    GradCheckOptions o;
    o.wanted = { false, true };
    EXPECT_TRUE(checkGradient("LeakyReLU", prelu, { awayFromZero({ 2, 2, 3 }, 11), rnd({ 2 }, 12, 0.1f, 0.5f) }, o));
    // Positive inputs leave gamma without gradient.
    const std::vector<Tensor> in { rnd({ 2, 2 }, 13, 0.5f, 1.0f), values({ 2 }, { 0.2f, 0.3f }) };
    const std::vector<Tensor> outs = invokeOp("LeakyReLU", prelu, in, KernelKind::Reference);
    const auto grads = invokeBackward("LeakyReLU", prelu, in, outs, { Tensor::ones({ 2, 2 }) });
    EXPECT_TRUE(allEqual(grads[1], 0.0f));
    EXPECT_TRUE(allEqual(grads[0], 1.0f));
}

TEST(Gradient, LeakyReLURReLU)
{
    const AttrMap rrelu { { "act_type", "rrelu" } };
    const Tensor x = awayFromZero({ 3, 4 }, 14);
    // Training draws a slope per element (the hidden mask); inference uses their mean.
    GradCheckOptions train;
    train.training = true;
    EXPECT_TRUE(checkGradient("LeakyReLU", rrelu, { x }, train));
    EXPECT_TRUE(checkGradient("LeakyReLU", rrelu, { x }));
    // The gradient below 0 is the mask's slope.
    Generator gen(3);
    RunContext ctx { true, &gen };
    const std::vector<Tensor> outs = invokeOp("LeakyReLU", rrelu, { x }, KernelKind::Reference, &ctx);
    const Tensor g = invokeBackward("LeakyReLU", rrelu, { x }, outs, { Tensor::ones(x.shape()) }, {}, &ctx)[0];
    for (int64_t i = 0; i < x.size(); ++i)
        EXPECT_FLOAT_EQ(g.at(i), x.at(i) > 0 ? 1.0f : outs[1].at(i));
}

// ---- softmax, log_softmax, SoftmaxActivation ---------------------------------------------------

TEST(Gradient, SoftmaxAxes)
{
    const Tensor x = rnd({ 2, 3, 4 }, 15, -2, 2);
    for (const char* op : { "softmax", "log_softmax" }) {
        SCOPED_TRACE(op);
        EXPECT_TRUE(checkGradient(op, {}, { x }));
        EXPECT_TRUE(checkGradient(op, { { "axis", "0" } }, { x }));
        EXPECT_TRUE(checkGradient(op, { { "axis", "1" } }, { x }));
        EXPECT_TRUE(checkGradient(op, { { "axis", "-2" } }, { rnd({ 3, 5 }, 16, -2, 2) }));
    }
}

TEST(Gradient, SoftmaxTemperature)
{
    const Tensor x = rnd({ 3, 4 }, 17, -2, 2);
    for (const char* op : { "softmax", "log_softmax" }) {
        SCOPED_TRACE(op);
        EXPECT_TRUE(checkGradient(op, { { "temperature", "2.5" } }, { x }));
        EXPECT_TRUE(checkGradient(op, { { "temperature", "0.5" }, { "axis", "0" } }, { x }));
    }
}

TEST(Gradient, SoftmaxUseLength)
{
    const AttrMap attrs { { "use_length", "True" }, { "axis", "1" } };
    const Tensor x = rnd({ 2, 4, 3 }, 18, -2, 2);
    const Tensor length = values({ 2, 3 }, { 1, 4, 2, 3, 0, 4 });
    GradCheckOptions o;
    o.wanted = { true, false };
    EXPECT_TRUE(checkGradient("softmax", attrs, { x, length }, o));
    // Elements past each length get 0; the length (an index) gets zeros when asked for.
    const std::vector<Tensor> outs = invokeOp("softmax", attrs, { x, length }, KernelKind::Reference);
    const auto grads = invokeBackward("softmax", attrs, { x, length }, outs, { rnd(x.shape(), 19) });
    int past = 0;
    for (int64_t b = 0; b < 2; ++b) {
        for (int64_t j = 0; j < 4; ++j) {
            for (int64_t i = 0; i < 3; ++i) {
                if (j < length.at(b * 3 + i)) continue;
                EXPECT_EQ(grads[0].at((b * 4 + j) * 3 + i), 0.0f);
                ++past;
            }
        }
    }
    EXPECT_EQ(past, 24 - 14);
    EXPECT_TRUE(allEqual(grads[1], 0.0f));
}

TEST(Gradient, SoftmaxActivationModes)
{
    // instance: over the last axis; channel: over axis 1 at every position.
    EXPECT_TRUE(checkGradient("SoftmaxActivation", {}, { rnd({ 3, 5 }, 20, -2, 2) }));
    EXPECT_TRUE(checkGradient("SoftmaxActivation", {}, { rnd({ 2, 3, 4 }, 21, -2, 2) }));
    EXPECT_TRUE(checkGradient("SoftmaxActivation", { { "mode", "channel" } }, { rnd({ 2, 3, 2, 2 }, 22, -2, 2) }));
}

// ---- SoftmaxOutput -----------------------------------------------------------------------------

TEST(Gradient, SoftmaxOutputNormalization)
{
    const Tensor x = rnd({ 3, 5 }, 23, -2, 2);
    const Tensor label = values({ 3 }, { 0, 4, 2 });
    const std::vector<std::optional<int>> k { 0, 4, 2 };
    EXPECT_TRUE(checkCrossEntropy({}, x, label, 3, 5, 1, k, 1.0));
    EXPECT_TRUE(checkCrossEntropy({ { "grad_scale", "0.5" } }, x, label, 3, 5, 1, k, 0.5));
    EXPECT_TRUE(checkCrossEntropy({ { "normalization", "batch" } }, x, label, 3, 5, 1, k, 1.0 / 3));
    // valid counts the labels other than ignore_label (-1 by default): all 3 here.
    EXPECT_TRUE(
        checkCrossEntropy({ { "normalization", "valid" }, { "grad_scale", "2" } }, x, label, 3, 5, 1, k, 2.0 / 3));
    // The softmax − one_hot form itself.
    const Tensor p = invokeOp("SoftmaxOutput", {}, { x, label }, KernelKind::Reference)[0];
    const Tensor g = dataGrad("SoftmaxOutput", {}, { x, label });
    for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 5; ++c)
            EXPECT_FLOAT_EQ(g.at(r * 5 + c), p.at(r * 5 + c) - (c == *k[static_cast<size_t>(r)] ? 1.0f : 0.0f));
}

TEST(Gradient, SoftmaxOutputIgnoreLabel)
{
    const Tensor x = rnd({ 4, 3 }, 24, -2, 2);
    const Tensor label = values({ 4 }, { 0, 2, 1, 2 });
    const AttrMap attrs { { "use_ignore", "True" }, { "ignore_label", "2" }, { "normalization", "valid" } };
    // Rows labelled 2 get 0 and leave 2 valid labels.
    EXPECT_TRUE(checkCrossEntropy(attrs, x, label, 4, 3, 1, { 0, std::nullopt, 1, std::nullopt }, 0.5));
    const Tensor g = dataGrad("SoftmaxOutput", attrs, { x, label });
    for (int64_t c = 0; c < 3; ++c) {
        EXPECT_EQ(g.at(1 * 3 + c), 0.0f);
        EXPECT_EQ(g.at(3 * 3 + c), 0.0f);
    }
    // Without use_ignore the rows count fully, but valid still leaves them out of the count.
    EXPECT_TRUE(checkCrossEntropy(
        { { "ignore_label", "2" }, { "normalization", "valid" } }, x, label, 4, 3, 1, { 0, 2, 1, 2 }, 0.5));
    // Every label equal to ignore_label: the count is at least 1.
    EXPECT_TRUE(checkCrossEntropy({ { "ignore_label", "2" }, { "normalization", "valid" } }, x,
        values({ 4 }, { 2, 2, 2, 2 }), 4, 3, 1, { 2, 2, 2, 2 }, 1.0));
    EXPECT_TRUE(allEqual(dataGrad("SoftmaxOutput", attrs, { x, values({ 4 }, { 2, 2, 2, 2 }) }), 0.0f));
}

TEST(Gradient, SoftmaxOutputMultiOutput)
{
    // (N, C, H, W) = (2, 3, 2, 2) with labels (N, H·W): a softmax over C at each of 4 positions.
    const Tensor x = rnd({ 2, 3, 2, 2 }, 25, -2, 2);
    const Tensor label = values({ 2, 4 }, { 0, 1, 2, 1, 2, 2, 0, 1 });
    const std::vector<std::optional<int>> k { 0, 1, 2, 1, 2, 2, 0, 1 };
    AttrMap attrs { { "multi_output", "True" } };
    // MXNet divides by the spatial size even with normalization null.
    EXPECT_TRUE(checkCrossEntropy(attrs, x, label, 2, 3, 4, k, 1.0 / 4));
    attrs["normalization"] = "batch";
    EXPECT_TRUE(checkCrossEntropy(attrs, x, label, 2, 3, 4, k, 1.0 / 4 / 2));
    attrs["normalization"] = "valid";
    attrs["use_ignore"] = "True";
    attrs["ignore_label"] = "1";
    EXPECT_TRUE(checkCrossEntropy(
        attrs, x, label, 2, 3, 4, { 0, std::nullopt, 2, std::nullopt, 2, 2, 0, std::nullopt }, 1.0 / 5));
    // The label may also come as (N, H, W).
    EXPECT_TRUE(checkCrossEntropy({ { "multi_output", "True" } }, x, label.reshape({ 2, 2, 2 }), 2, 3, 4, k, 1.0 / 4));
}

TEST(Gradient, SoftmaxOutputPreserveShape)
{
    // A softmax over the last axis of (2, 3, 4), one label per (N, T).
    const Tensor x = rnd({ 2, 3, 4 }, 26, -2, 2);
    const Tensor label = values({ 2, 3 }, { 0, 3, 1, 2, 2, 0 });
    const std::vector<std::optional<int>> k { 0, 3, 1, 2, 2, 0 };
    EXPECT_TRUE(checkCrossEntropy({ { "preserve_shape", "True" } }, x, label, 6, 4, 1, k, 1.0));
    // batch divides by every label (MXNet's flattened label.size(0)), not by N.
    EXPECT_TRUE(checkCrossEntropy(
        { { "preserve_shape", "True" }, { "normalization", "batch" } }, x, label, 6, 4, 1, k, 1.0 / 6));
}

TEST(Gradient, SoftmaxOutputProbabilityLabel)
{
    // A label of the data's shape holds probabilities: (softmax − label) · grad_scale, no normalization.
    const Tensor x = rnd({ 3, 4 }, 27, -2, 2);
    Tensor probs = rnd({ 3, 4 }, 28, 0.1f, 1.0f);
    for (int64_t r = 0; r < 3; ++r) {
        float s = 0;
        for (int64_t c = 0; c < 4; ++c)
            s += probs.at(r * 4 + c);
        for (int64_t c = 0; c < 4; ++c)
            probs.at(r * 4 + c) /= s;
    }
    const std::vector<std::optional<int>> none(3);
    EXPECT_TRUE(checkCrossEntropy(
        { { "grad_scale", "2" }, { "normalization", "batch" } }, x, probs, 3, 4, 1, none, 2.0, 0, probs));
}

TEST(Gradient, SoftmaxOutputSmoothAlpha)
{
    const Tensor x = rnd({ 3, 4 }, 29, -2, 2);
    const Tensor label = values({ 3 }, { 1, 0, 3 });
    EXPECT_TRUE(checkCrossEntropy({ { "smooth_alpha", "0.2" } }, x, label, 3, 4, 1, { 1, 0, 3 }, 1.0, 0.2));
    const Tensor xm = rnd({ 2, 3, 2 }, 30, -2, 2);
    EXPECT_TRUE(checkCrossEntropy({ { "smooth_alpha", "0.1" }, { "multi_output", "True" } }, xm,
        values({ 2, 2 }, { 2, 0, 1, 1 }), 2, 3, 2, { 2, 0, 1, 1 }, 0.5, 0.1));
}

TEST(Gradient, SoftmaxOutputLabelsAndHeadGradient)
{
    const Tensor x = rnd({ 3, 4 }, 31, -2, 2);
    // Labels outside [0, C) (here 7 and the default ignore_label -1 without use_ignore) subtract
    // nothing; 2.9 truncates to class 2.
    const Tensor label = values({ 3 }, { 7, -1, 2.9f });
    const Tensor p = invokeOp("SoftmaxOutput", {}, { x, label }, KernelKind::Reference)[0];
    const Tensor g = dataGrad("SoftmaxOutput", {}, { x, label });
    for (int64_t i = 0; i < 12; ++i)
        EXPECT_FLOAT_EQ(g.at(i), p.at(i) - (i == 2 * 4 + 2 ? 1.0f : 0.0f));
    // No head gradient at all still gives the loss gradient. out_grad multiplies by the softmax
    // output (MXNet 1.x never passes the head gradient to the backward node).
    const Tensor dy = rnd(x.shape(), 32);
    const Tensor label2 = values({ 3 }, { 0, 1, 2 });
    const AttrMap scale3 { { "grad_scale", "3" } };
    const Tensor plain = dataGrad("SoftmaxOutput", scale3, { x, label2 });
    EXPECT_TRUE(near(plain, dataGrad("SoftmaxOutput", scale3, { x, label2 }, dy)));
    const AttrMap withOutGrad { { "grad_scale", "3" }, { "out_grad", "True" } };
    const Tensor p2 = invokeOp("SoftmaxOutput", withOutGrad, { x, label2 }, KernelKind::Reference)[0];
    const Tensor scaled = dataGrad("SoftmaxOutput", withOutGrad, { x, label2 }, dy);
    for (int64_t i = 0; i < 12; ++i)
        EXPECT_NEAR(scaled.at(i), plain.at(i) * p2.at(i), 1e-6);
    EXPECT_TRUE(near(scaled, dataGrad("SoftmaxOutput", withOutGrad, { x, label2 })));
    // The label gets zeros when asked for; the Softmax alias has the same gradient.
    const std::vector<Tensor> outs = invokeOp("SoftmaxOutput", {}, { x, label2 }, KernelKind::Reference);
    const auto grads = invokeBackward("SoftmaxOutput", {}, { x, label2 }, outs, {});
    EXPECT_TRUE(allEqual(grads[1], 0.0f));
    EXPECT_TRUE(near(grads[0], dataGrad("Softmax", {}, { x, label2 })));
}

// ---- Embedding ---------------------------------------------------------------------------------

TEST(Gradient, EmbeddingWeight)
{
    const AttrMap attrs { { "input_dim", "5" }, { "output_dim", "3" } };
    // Repeated rows add up; 9 clips to row 4, -2 to row 0, 2.7 truncates to row 2.
    const Tensor data = values({ 2, 4 }, { 0, 3, 3, 1, 9, -2, 2.7f, 3 });
    const Tensor weight = rnd({ 5, 3 }, 33);
    GradCheckOptions o;
    o.wanted = { false, true };
    EXPECT_TRUE(checkGradient("Embedding", attrs, { data, weight }, o));
    const Tensor dy = rnd({ 2, 4, 3 }, 34);
    const std::vector<Tensor> outs = invokeOp("Embedding", attrs, { data, weight }, KernelKind::Reference);
    const auto grads = invokeBackward("Embedding", attrs, { data, weight }, outs, { dy });
    const int rows[8] = { 0, 3, 3, 1, 4, 0, 2, 3 };
    std::vector<float> expected(15, 0.0f);
    for (int i = 0; i < 8; ++i)
        for (int c = 0; c < 3; ++c)
            expected[static_cast<size_t>(rows[i] * 3 + c)] += dy.at(i * 3 + c);
    EXPECT_TRUE(near(grads[1], values({ 5, 3 }, expected)));
    // The indices get zeros when asked for.
    EXPECT_TRUE(allEqual(grads[0], 0.0f));
}

// ---- all of them -------------------------------------------------------------------------------

TEST(Gradient, ActivationSoftmaxFamilyZeroHeadGradient)
{
    struct Case {
        const char* op;
        AttrMap attrs;
        std::vector<Tensor> inputs;
    };
    const Tensor x = awayFromZero({ 2, 3 }, 35);
    const std::vector<Case> cases {
        { "Activation", { { "act_type", "tanh" } }, { x } },
        { "LeakyReLU", { { "act_type", "prelu" } }, { x, values({ 3 }, { 0.1f, 0.2f, 0.3f }) } },
        { "LeakyReLU", { { "act_type", "rrelu" } }, { x } },
        { "softmax", {}, { x } },
        { "log_softmax", {}, { x } },
        { "SoftmaxActivation", {}, { x } },
        { "Embedding", { { "input_dim", "4" }, { "output_dim", "2" } },
            { values({ 2 }, { 1, 3 }), rnd({ 4, 2 }, 36) } },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.op);
        const std::vector<Tensor> outs = invokeOp(c.op, c.attrs, c.inputs, KernelKind::Reference);
        const auto grads = invokeBackward(c.op, c.attrs, c.inputs, outs, {});
        for (const Tensor& g : grads)
            EXPECT_TRUE(allEqual(g, 0.0f));
    }
}
