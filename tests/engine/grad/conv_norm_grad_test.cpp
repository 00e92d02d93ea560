// Gradients of Convolution, Pooling, BatchNorm, LayerNorm and Dropout against central differences,
// plus what the differences cannot see: blocked outputs, auxiliary states, ties, masks.

#include "common/grad_check.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <numeric>
#include <random>

using namespace opscope;
using opscope::test::checkGradient;
using opscope::test::GradCheckOptions;

namespace {

Tensor rnd(const Shape& s, uint64_t seed, float lo = -1, float hi = 1)
{
    Generator g(seed);
    return Tensor::uniform(s, lo, hi, &g);
}

// Values at least `spacing` apart in a shuffled order, so that no ±eps perturbation changes which
// element of a pooling window is the maximum.
Tensor distinct(const Shape& s, uint64_t seed, float spacing = 0.1f)
{
    std::vector<float> v(static_cast<size_t>(s.size()));
    std::iota(v.begin(), v.end(), 0.0f);
    std::mt19937_64 g(seed);
    std::shuffle(v.begin(), v.end(), g);
    for (float& x : v)
        x = (x - static_cast<float>(v.size()) / 2) * spacing;
    return Tensor::fromValues(s, v);
}

std::vector<Tensor> forward(
    const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, bool training, uint64_t seed = 1)
{
    Generator rng(seed);
    RunContext ctx;
    ctx.training = training;
    ctx.rng = &rng;
    return invokeOp(op, attrs, inputs, KernelKind::Reference, &ctx);
}

std::vector<Tensor> backward(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& outputs, const std::vector<Tensor>& outGrads, bool training,
    std::vector<bool> wanted = {})
{
    RunContext ctx;
    ctx.training = training;
    return invokeBackward(op, attrs, inputs, outputs, outGrads, std::move(wanted), &ctx);
}

// The operator's gradient called directly, into gradients prefilled with NaN (all wanted) so that
// an element left unwritten shows.
std::vector<Tensor> backwardIntoNaN(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& outputs, const std::vector<Tensor>& outGrads, bool training)
{
    const OpDef& def = OpRegistry::instance().get(op);
    const ParamsPtr params = def.parse(attrs);
    std::vector<Tensor> grads;
    std::vector<const Tensor*> in, out, og;
    std::vector<Tensor*> ig;
    for (const Tensor& t : inputs) {
        in.push_back(&t);
        grads.push_back(Tensor::full(t.shape(), std::numeric_limits<float>::quiet_NaN()));
    }
    for (Tensor& g : grads)
        ig.push_back(&g);
    for (size_t i = 0; i < outputs.size(); ++i) {
        out.push_back(&outputs[i]);
        og.push_back(i < outGrads.size() && outGrads[i].defined() ? &outGrads[i] : nullptr);
    }
    RunContext ctx;
    ctx.training = training;
    def.backward(BackwardArgs { *params, in, out, og, ig, ctx });
    return grads;
}

GradCheckOptions trainingOptions(std::vector<bool> wanted = {})
{
    GradCheckOptions o;
    o.training = true;
    o.wanted = std::move(wanted);
    return o;
}

GradCheckOptions wantedOptions(std::vector<bool> wanted)
{
    GradCheckOptions o;
    o.wanted = std::move(wanted);
    return o;
}

bool allZero(const Tensor& t)
{
    const auto v = t.values();
    return std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; });
}

bool allFinite(const Tensor& t)
{
    const auto v = t.values();
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

} // namespace

// ---- Convolution ------------------------------------------------------------------------------

TEST(Gradient, Convolution2D)
{
    EXPECT_TRUE(checkGradient("Convolution", { { "kernel", "(3, 3)" }, { "num_filter", "3" } },
        { rnd({ 2, 2, 4, 4 }, 1), rnd({ 3, 2, 3, 3 }, 2), rnd({ 3 }, 3) }));
}

TEST(Gradient, Convolution2DStridePad)
{
    EXPECT_TRUE(checkGradient("Convolution",
        { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "num_filter", "2" } },
        { rnd({ 1, 2, 5, 5 }, 4), rnd({ 2, 2, 3, 3 }, 5), rnd({ 2 }, 6) }));
    // Different strides and pads per axis, and a stride that skips the last column.
    EXPECT_TRUE(checkGradient("Convolution",
        { { "kernel", "(2, 3)" }, { "stride", "(1, 2)" }, { "pad", "(0, 1)" }, { "num_filter", "2" } },
        { rnd({ 2, 1, 3, 6 }, 7), rnd({ 2, 1, 2, 3 }, 8), rnd({ 2 }, 9) }));
}

TEST(Gradient, Convolution2DDilate)
{
    EXPECT_TRUE(checkGradient("Convolution",
        { { "kernel", "(2, 2)" }, { "dilate", "(2, 1)" }, { "pad", "(1, 0)" }, { "num_filter", "2" } },
        { rnd({ 1, 2, 5, 4 }, 10), rnd({ 2, 2, 2, 2 }, 11), rnd({ 2 }, 12) }));
}

TEST(Gradient, Convolution2DGroups)
{
    EXPECT_TRUE(checkGradient("Convolution", { { "kernel", "(3, 3)" }, { "num_filter", "4" }, { "num_group", "2" } },
        { rnd({ 2, 4, 4, 4 }, 13), rnd({ 4, 2, 3, 3 }, 14), rnd({ 4 }, 15) }));
    // Depthwise, without bias.
    EXPECT_TRUE(checkGradient("Convolution",
        { { "kernel", "(2, 2)" }, { "num_filter", "3" }, { "num_group", "3" }, { "no_bias", "True" } },
        { rnd({ 1, 3, 3, 3 }, 16), rnd({ 3, 1, 2, 2 }, 17) }));
}

TEST(Gradient, Convolution2DNoBiasOneByOne)
{
    // A 1x1 kernel with stride 1 and no padding: the forward reads the data without im2col.
    EXPECT_TRUE(checkGradient("Convolution", { { "kernel", "(1, 1)" }, { "num_filter", "3" }, { "no_bias", "True" } },
        { rnd({ 2, 2, 3, 3 }, 18), rnd({ 3, 2, 1, 1 }, 19) }));
}

TEST(Gradient, Convolution1D)
{
    EXPECT_TRUE(checkGradient("Convolution", { { "kernel", "(3,)" }, { "num_filter", "2" } },
        { rnd({ 2, 3, 6 }, 20), rnd({ 2, 3, 3 }, 21), rnd({ 2 }, 22) }));
    EXPECT_TRUE(checkGradient("Convolution",
        { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pad", "(1,)" }, { "dilate", "(2,)" }, { "num_filter", "4" },
            { "num_group", "2" } },
        { rnd({ 1, 2, 9 }, 23), rnd({ 4, 1, 3 }, 24), rnd({ 4 }, 25) }));
}

TEST(Gradient, ConvolutionWantedAndZeroHead)
{
    const AttrMap attrs { { "kernel", "(2, 2)" }, { "num_filter", "2" } };
    const std::vector<Tensor> in { rnd({ 1, 2, 3, 3 }, 26), rnd({ 2, 2, 2, 2 }, 27), rnd({ 2 }, 28) };
    // Only the weight asked for.
    EXPECT_TRUE(checkGradient("Convolution", attrs, in, wantedOptions({ false, true, false })));
    // No gradient of the output: every gradient asked for is written as zero.
    const auto out = forward("Convolution", attrs, in, false);
    for (const Tensor& g : backwardIntoNaN("Convolution", attrs, in, out, { Tensor() }, false))
        EXPECT_TRUE(allZero(g));
    // The bias gradient is the sum of the output gradient over the batch and positions.
    const Tensor head = rnd(out[0].shape(), 29);
    const auto withHead = backward("Convolution", attrs, in, out, { head }, false, { false, false, true });
    EXPECT_FALSE(withHead[0].defined());
    for (int64_t f = 0; f < 2; ++f) {
        float sum = 0;
        for (int64_t i = 0; i < 4; ++i)
            sum += head.at(f * 4 + i);
        EXPECT_NEAR(withHead[2].at(f), sum, 1e-5);
    }
}

// ---- Pooling ----------------------------------------------------------------------------------

TEST(Gradient, PoolingMax2D)
{
    EXPECT_TRUE(checkGradient("Pooling", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" } },
        { distinct({ 2, 2, 4, 4 }, 1) }));
    // Overlapping windows with padding: an element can be the maximum of several windows.
    EXPECT_TRUE(checkGradient("Pooling",
        { { "kernel", "(3, 3)" }, { "stride", "(1, 1)" }, { "pad", "(1, 1)" }, { "pool_type", "max" } },
        { distinct({ 1, 2, 4, 4 }, 2) }));
}

TEST(Gradient, PoolingMaxFullConvention)
{
    // 'full' adds a last window that runs over the right edge.
    EXPECT_TRUE(checkGradient("Pooling",
        { { "kernel", "(3, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" }, { "pooling_convention", "full" } },
        { distinct({ 1, 2, 6, 5 }, 3) }));
}

TEST(Gradient, PoolingMax1DAndGlobal)
{
    EXPECT_TRUE(checkGradient("Pooling", { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pool_type", "max" } },
        { distinct({ 2, 3, 7 }, 4) }));
    EXPECT_TRUE(checkGradient("Pooling", { { "kernel", "(1, 1)" }, { "global_pool", "True" }, { "pool_type", "max" } },
        { distinct({ 2, 3, 3, 4 }, 5) }));
}

TEST(Gradient, PoolingMaxTiesGoToTheFirst)
{
    // MXNet routes the gradient to the first maximum of a window in row-major order.
    const AttrMap attrs { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" } };
    const Tensor x = Tensor::fromValues({ 1, 1, 2, 4 }, std::vector<float> { 0, 3, 1, 1, 3, 3, 1, 1 });
    const auto out = forward("Pooling", attrs, { x }, false);
    const Tensor dy = Tensor::fromValues({ 1, 1, 1, 2 }, std::vector<float> { 2, -5 });
    const auto grads = backward("Pooling", attrs, { x }, out, { dy }, false);
    EXPECT_EQ(grads[0].toVector(), (std::vector<float> { 0, 2, -5, 0, 0, 0, 0, 0 }));
}

TEST(Gradient, PoolingMaxWindowInPadding)
{
    // A 1x1 kernel over padding 1: the border windows lie wholly in the padding and pass nothing
    // back; the inner ones pass their gradient straight through.
    const AttrMap attrs { { "kernel", "(1, 1)" }, { "pad", "(1, 1)" } };
    const Tensor x = distinct({ 1, 1, 2, 2 }, 6);
    const auto out = forward("Pooling", attrs, { x }, false);
    ASSERT_EQ(out[0].shape(), (Shape { 1, 1, 4, 4 }));
    const Tensor dy = rnd(out[0].shape(), 7);
    const auto grads = backward("Pooling", attrs, { x }, out, { dy }, false);
    EXPECT_EQ(grads[0].toVector(), (std::vector<float> { dy.at(5), dy.at(6), dy.at(9), dy.at(10) }));
}

TEST(Gradient, PoolingAvg2D)
{
    EXPECT_TRUE(checkGradient("Pooling", { { "kernel", "(2, 2)" }, { "stride", "(1, 1)" }, { "pool_type", "avg" } },
        { rnd({ 1, 2, 4, 3 }, 8) }));
    EXPECT_TRUE(checkGradient("Pooling", { { "kernel", "(2, 2)" }, { "global_pool", "True" }, { "pool_type", "avg" } },
        { rnd({ 2, 2, 3, 3 }, 9) }));
}

TEST(Gradient, PoolingAvgPadding)
{
    // count_include_pad divides by the padded window, otherwise by the data elements in it.
    for (const char* include : { "True", "False" }) {
        SCOPED_TRACE(include);
        EXPECT_TRUE(checkGradient("Pooling",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
                { "count_include_pad", include } },
            { rnd({ 1, 2, 5, 5 }, 10) }));
        EXPECT_TRUE(checkGradient("Pooling",
            { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pad", "(1,)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" }, { "count_include_pad", include } },
            { rnd({ 2, 2, 6 }, 11) }));
    }
    // The two divisors differ at the border: the corner's share of its window.
    const Tensor x = rnd({ 1, 1, 2, 2 }, 12);
    const Tensor dy = Tensor::ones({ 1, 1, 1, 1 });
    for (const auto& [include, expected] : { std::pair { "True", 1.0f / 9 }, std::pair { "False", 1.0f / 4 } }) {
        const AttrMap attrs { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "stride", "(2, 2)" },
            { "pool_type", "avg" }, { "count_include_pad", include } };
        const auto out = forward("Pooling", attrs, { x }, false);
        ASSERT_EQ(out[0].shape(), (Shape { 1, 1, 1, 1 }));
        const auto grads = backward("Pooling", attrs, { x }, out, { dy }, false);
        EXPECT_FLOAT_EQ(grads[0].at(0), expected) << include;
    }
}

TEST(Gradient, PoolingSum)
{
    EXPECT_TRUE(checkGradient("Pooling",
        { { "kernel", "(2, 3)" }, { "stride", "(1, 2)" }, { "pad", "(0, 1)" }, { "pool_type", "sum" } },
        { rnd({ 1, 2, 3, 5 }, 13) }));
}

TEST(Gradient, Pooling3DAndSameConvention)
{
    EXPECT_TRUE(
        checkGradient("Pooling", { { "kernel", "(2, 2, 2)" }, { "stride", "(1, 2, 1)" }, { "pool_type", "max" } },
            { distinct({ 1, 2, 3, 4, 3 }, 15) }));
    EXPECT_TRUE(checkGradient("Pooling",
        { { "kernel", "(2, 3, 2)" }, { "pad", "(1, 1, 0)" }, { "pool_type", "avg" }, { "count_include_pad", "False" } },
        { rnd({ 1, 1, 3, 3, 4 }, 16) }));
    // 'same' (1-D only): ceil(w / stride) windows, the last one clipped.
    EXPECT_TRUE(checkGradient("Pooling",
        { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pool_type", "max" }, { "pooling_convention", "same" } },
        { distinct({ 2, 2, 7 }, 17) }));
}

TEST(Gradient, PoolingZeroHead)
{
    const AttrMap attrs { { "kernel", "(2, 2)" } };
    const Tensor x = distinct({ 1, 1, 3, 3 }, 14);
    const auto out = forward("Pooling", attrs, { x }, false);
    EXPECT_TRUE(allZero(backwardIntoNaN("Pooling", attrs, { x }, out, { Tensor() }, false)[0]));
}

// ---- BatchNorm --------------------------------------------------------------------------------

namespace {
std::vector<Tensor> bnInputs(const Shape& data, int64_t channels, uint64_t seed)
{
    return { rnd(data, seed), rnd({ channels }, seed + 1, 0.5f, 1.5f), rnd({ channels }, seed + 2),
        rnd({ channels }, seed + 3, -0.3f, 0.3f), rnd({ channels }, seed + 4, 0.5f, 1.5f) };
}
const std::vector<bool> kBnParams { true, true, true, false, false };
} // namespace

TEST(Gradient, BatchNormTraining)
{
    // Batch statistics: the mean and variance depend on the data too.
    EXPECT_TRUE(checkGradient(
        "BatchNorm", { { "fix_gamma", "False" } }, bnInputs({ 4, 3, 2 }, 3, 1), trainingOptions(kBnParams)));
    EXPECT_TRUE(checkGradient("BatchNorm", { { "fix_gamma", "False" }, { "eps", "0.1" } },
        bnInputs({ 3, 2, 2, 2 }, 2, 6), trainingOptions(kBnParams)));
}

TEST(Gradient, BatchNormTrainingAxis)
{
    EXPECT_TRUE(checkGradient("BatchNorm", { { "fix_gamma", "False" }, { "axis", "-1" } }, bnInputs({ 2, 3, 4 }, 4, 11),
        trainingOptions(kBnParams)));
    EXPECT_TRUE(checkGradient("BatchNorm", { { "fix_gamma", "False" }, { "axis", "0" } }, bnInputs({ 2, 3, 2 }, 2, 16),
        trainingOptions(kBnParams)));
}

TEST(Gradient, BatchNormInference)
{
    // Moving statistics: an affine map of the data.
    EXPECT_TRUE(checkGradient(
        "BatchNorm", { { "fix_gamma", "False" } }, bnInputs({ 3, 2, 2 }, 2, 21), wantedOptions(kBnParams)));
    // use_global_stats uses them in training too.
    EXPECT_TRUE(checkGradient("BatchNorm", { { "fix_gamma", "False" }, { "use_global_stats", "True" } },
        bnInputs({ 3, 2, 2 }, 2, 26), trainingOptions(kBnParams)));
    // The two formulas differ: the training gradient of the data sums to zero per channel.
    const AttrMap attrs { { "fix_gamma", "False" } };
    const auto in = bnInputs({ 4, 2 }, 2, 31);
    const Tensor dy = rnd({ 4, 2 }, 36);
    const auto train = backward("BatchNorm", attrs, in, forward("BatchNorm", attrs, in, true), { dy }, true);
    const auto infer = backward("BatchNorm", attrs, in, forward("BatchNorm", attrs, in, false), { dy }, false);
    for (int64_t c = 0; c < 2; ++c) {
        float sumTrain = 0, sumInfer = 0, sumDy = 0;
        for (int64_t n = 0; n < 4; ++n) {
            sumTrain += train[0].at(n * 2 + c);
            sumInfer += infer[0].at(n * 2 + c);
            sumDy += dy.at(n * 2 + c);
        }
        EXPECT_NEAR(sumTrain, 0, 1e-5);
        const float movingInvStd = 1.0f / std::sqrt(in[4].at(c) + 1e-3f);
        EXPECT_NEAR(sumInfer, sumDy * in[1].at(c) * movingInvStd, 1e-5);
    }
}

TEST(Gradient, BatchNormFixGamma)
{
    // fix_gamma (the default) reads gamma as 1 and gives it a zero gradient.
    for (bool training : { true, false }) {
        SCOPED_TRACE(training);
        GradCheckOptions o = wantedOptions(kBnParams);
        o.training = training;
        const auto in = bnInputs({ 3, 2, 2 }, 2, 41);
        EXPECT_TRUE(checkGradient("BatchNorm", {}, in, o));
        const auto out = forward("BatchNorm", {}, in, training);
        const auto grads = backward("BatchNorm", {}, in, out, { rnd(out[0].shape(), 46) }, training, kBnParams);
        EXPECT_TRUE(allZero(grads[1]));
        EXPECT_FALSE(allZero(grads[0]));
        EXPECT_FALSE(allZero(grads[2]));
    }
}

TEST(Gradient, BatchNormBlockedOutputsAndAuxStates)
{
    const AttrMap attrs { { "fix_gamma", "False" }, { "output_mean_var", "True" } };
    auto in = bnInputs({ 3, 2, 2 }, 2, 51);
    const std::vector<float> movingMean = in[3].toVector(), movingVar = in[4].toVector();
    const auto out = forward("BatchNorm", attrs, in, true);
    // The forward updated the moving statistics; the gradient leaves them as they are.
    const std::vector<float> updatedMean = in[3].toVector(), updatedVar = in[4].toVector();
    EXPECT_NE(updatedMean, movingMean);
    const Tensor dy = rnd(out[0].shape(), 56);
    const auto plain = backward("BatchNorm", attrs, in, out, { dy }, true);
    const auto withStats = backward("BatchNorm", attrs, in, out, { dy, rnd({ 2 }, 57), rnd({ 2 }, 58) }, true);
    EXPECT_EQ(in[3].toVector(), updatedMean);
    EXPECT_EQ(in[4].toVector(), updatedVar);
    // The gradients of the mean and var outputs are blocked.
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(plain[static_cast<size_t>(i)].toVector(), withStats[static_cast<size_t>(i)].toVector()) << i;
    // The moving statistics get no gradient: zeros when asked for.
    EXPECT_TRUE(allZero(plain[3]));
    EXPECT_TRUE(allZero(plain[4]));
    EXPECT_FALSE(allZero(plain[0]));
    // No gradient of the output: all zero.
    for (const Tensor& g : backwardIntoNaN("BatchNorm", attrs, in, out, { Tensor(), rnd({ 2 }, 59), Tensor() }, true))
        EXPECT_TRUE(allZero(g));
}

// ---- LayerNorm --------------------------------------------------------------------------------

TEST(Gradient, LayerNormLastAxis)
{
    EXPECT_TRUE(checkGradient("LayerNorm", {}, { rnd({ 3, 5 }, 1), rnd({ 5 }, 2, 0.5f, 1.5f), rnd({ 5 }, 3) }));
    EXPECT_TRUE(checkGradient(
        "LayerNorm", { { "eps", "0.1" } }, { rnd({ 2, 2, 4 }, 4), rnd({ 4 }, 5, 0.5f, 1.5f), rnd({ 4 }, 6) }));
}

TEST(Gradient, LayerNormInnerAxis)
{
    EXPECT_TRUE(checkGradient(
        "LayerNorm", { { "axis", "1" } }, { rnd({ 2, 4, 3 }, 7), rnd({ 4 }, 8, 0.5f, 1.5f), rnd({ 4 }, 9) }));
    EXPECT_TRUE(checkGradient(
        "LayerNorm", { { "axis", "0" } }, { rnd({ 3, 2, 2 }, 10), rnd({ 3 }, 11, 0.5f, 1.5f), rnd({ 3 }, 12) }));
}

TEST(Gradient, LayerNormBlockedOutputs)
{
    const AttrMap attrs { { "output_mean_var", "True" } };
    const std::vector<Tensor> in { rnd({ 3, 4 }, 13), rnd({ 4 }, 14), rnd({ 4 }, 15) };
    const auto out = forward("LayerNorm", attrs, in, false);
    const Tensor dy = rnd(out[0].shape(), 16);
    const auto plain = backward("LayerNorm", attrs, in, out, { dy }, false);
    const auto withStats
        = backward("LayerNorm", attrs, in, out, { dy, rnd(out[1].shape(), 17), rnd(out[2].shape(), 18) }, false);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FALSE(allZero(plain[static_cast<size_t>(i)])) << i;
        EXPECT_EQ(plain[static_cast<size_t>(i)].toVector(), withStats[static_cast<size_t>(i)].toVector()) << i;
    }
    for (const Tensor& g : backwardIntoNaN("LayerNorm", attrs, in, out, { Tensor(), rnd(out[1].shape(), 19) }, false))
        EXPECT_TRUE(allZero(g));
}

// ---- Dropout ----------------------------------------------------------------------------------

TEST(Gradient, DropoutTraining)
{
    EXPECT_TRUE(checkGradient("Dropout", { { "p", "0.5" } }, { rnd({ 4, 6 }, 1) }, trainingOptions()));
    // The mask holds the scale factors already: dx = dy * mask, so 0 or dy / (1 - p).
    const AttrMap attrs { { "p", "0.25" } };
    const Tensor x = rnd({ 8, 8 }, 2);
    const auto out = forward("Dropout", attrs, { x }, true);
    const Tensor dy = rnd({ 8, 8 }, 3);
    const Tensor dx = backward("Dropout", attrs, { x }, out, { dy }, true)[0];
    int kept = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
        const bool keep = out[1].at(i) != 0.0f;
        kept += keep;
        EXPECT_FLOAT_EQ(dx.at(i), keep ? dy.at(i) / 0.75f : 0.0f) << i;
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, x.size());
}

TEST(Gradient, DropoutAxes)
{
    // One mask value per (n, w), shared along axis 1.
    EXPECT_TRUE(
        checkGradient("Dropout", { { "p", "0.5" }, { "axes", "(1,)" } }, { rnd({ 3, 4, 5 }, 4) }, trainingOptions()));
    const AttrMap attrs { { "p", "0.5" }, { "axes", "(0, 2)" } };
    const Tensor x = rnd({ 2, 6, 3 }, 5);
    const auto out = forward("Dropout", attrs, { x }, true);
    ASSERT_EQ(out[1].shape(), (Shape { 1, 6, 1 }));
    const Tensor dy = rnd(x.shape(), 6);
    const Tensor dx = backward("Dropout", attrs, { x }, out, { dy }, true)[0];
    for (int64_t i = 0; i < x.size(); ++i)
        EXPECT_FLOAT_EQ(dx.at(i), dy.at(i) * out[1].at((i / 3) % 6)) << i;
}

TEST(Gradient, DropoutInferenceAndAlways)
{
    const Tensor x = rnd({ 3, 5 }, 7);
    const Tensor dy = rnd({ 3, 5 }, 8);
    // Mode "training" passes through at inference, and so does p = 0 in training.
    for (const auto& [attrs, training] :
        { std::pair { AttrMap { { "p", "0.5" } }, false }, std::pair { AttrMap { { "p", "0" } }, true } }) {
        GradCheckOptions o;
        o.training = training;
        EXPECT_TRUE(checkGradient("Dropout", attrs, { x }, o));
        const auto out = forward("Dropout", attrs, { x }, training);
        EXPECT_EQ(backward("Dropout", attrs, { x }, out, { dy }, training)[0].toVector(), dy.toVector());
    }
    // Mode "always" drops at inference too.
    const AttrMap always { { "p", "0.5" }, { "mode", "always" } };
    EXPECT_TRUE(checkGradient("Dropout", always, { rnd({ 4, 6 }, 9) }));
    const auto out = forward("Dropout", always, { x }, false);
    const Tensor dx = backward("Dropout", always, { x }, out, { dy }, false)[0];
    bool dropped = false;
    for (int64_t i = 0; i < x.size(); ++i) {
        EXPECT_FLOAT_EQ(dx.at(i), dy.at(i) * out[1].at(i)) << i;
        dropped = dropped || dx.at(i) == 0.0f;
    }
    EXPECT_TRUE(dropped);
    EXPECT_TRUE(allZero(backwardIntoNaN("Dropout", always, { x }, out, { Tensor() }, false)[0]));
}

TEST(Gradient, DropoutAll)
{
    // p = 1 drops everything, and so does the gradient.
    const AttrMap attrs { { "p", "1" } };
    const Tensor x = rnd({ 2, 3 }, 10);
    const auto out = forward("Dropout", attrs, { x }, true);
    EXPECT_TRUE(allZero(backward("Dropout", attrs, { x }, out, { rnd({ 2, 3 }, 11) }, true)[0]));
}

TEST(Gradient, ConvNormWriteEveryGradientEntirely)
{
    struct Case {
        std::string op;
        AttrMap attrs;
        std::vector<Tensor> in;
        bool training;
    };
    const std::vector<Case> cases {
        { "Convolution", { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "num_filter", "2" } },
            { rnd({ 1, 2, 6, 6 }, 1), rnd({ 2, 2, 3, 3 }, 2), rnd({ 2 }, 3) }, false },
        { "Pooling", { { "kernel", "(2, 2)" }, { "stride", "(3, 3)" } }, { distinct({ 1, 2, 5, 5 }, 4) }, false },
        { "Pooling", { { "kernel", "(2, 2)" }, { "stride", "(3, 3)" }, { "pool_type", "avg" } },
            { rnd({ 1, 2, 5, 5 }, 5) }, false },
        { "BatchNorm", { { "fix_gamma", "True" } }, bnInputs({ 2, 3, 2 }, 3, 6), true },
        { "BatchNorm", { { "fix_gamma", "False" } }, bnInputs({ 2, 3, 2 }, 3, 11), false },
        { "LayerNorm", { { "axis", "1" } }, { rnd({ 2, 3, 2 }, 16), rnd({ 3 }, 17), rnd({ 3 }, 18) }, false },
        { "Dropout", { { "p", "0.5" }, { "axes", "(1,)" } }, { rnd({ 2, 3, 2 }, 19) }, true },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.op);
        const auto out = forward(c.op, c.attrs, c.in, c.training);
        std::vector<Tensor> heads;
        for (const Tensor& o : out)
            heads.push_back(rnd(o.shape(), 99));
        for (const Tensor& g : backwardIntoNaN(c.op, c.attrs, c.in, out, heads, c.training))
            EXPECT_TRUE(allFinite(g));
    }
}
