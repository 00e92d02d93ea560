// The bounds a convolution records for its output (dnnlutil::recordBounds) are found for those
// values only: the same start, at most as many, on the same thread, and not written since. A
// convolution with its relu inside records [0, the product's bound]; a max pooling believes a
// record instead of reading its input for NaN.

#include "ops/dnnl/finite_input.h"
#include "ops/nn/convolution.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

using namespace opscope;
using dnnlutil::recordBounds;
using dnnlutil::recordedBounds;

namespace {
// A 3×3 convolution of 16 channels to 16 over side × side, padded to keep the side, with oneDNN
// (kernel null when oneDNN runs none here).
struct Conv3x3 {
    std::vector<Shape> in, out;
    std::unique_ptr<Kernel> kernel;
};
Conv3x3 conv3x3(int64_t side)
{
    ConvolutionParams p;
    p.kernel = { 3, 3 };
    p.stride = p.dilate = { 1, 1 };
    p.pad = { 1, 1 };
    p.numFilter = 16;
    Conv3x3 c { { Shape({ 1, 16, side, side }), Shape({ 16, 16, 3, 3 }), Shape({ 16 }) }, { Shape({ 1, 16, side, side }) }, nullptr };
    c.kernel = makeConvolutionDnnl(p, c.in, c.out);
    return c;
}
}

TEST(RecordedBounds, AreFoundForTheValuesRecordedUntilTheyAreWritten)
{
    const Tensor t = Tensor::uniform(Shape({ 4, 6 }), 0, 6);
    (void)t.data(); // as the kernel that wrote it
    recordBounds(t, 0.0f, 6.0f);
    ASSERT_TRUE(recordedBounds(t).has_value());
    EXPECT_EQ(*recordedBounds(t), std::make_pair(0.0f, 6.0f));
    EXPECT_EQ(recordedBounds(t.reshape(Shape({ 24 }))), std::make_pair(0.0f, 6.0f)) << "the same values";
    EXPECT_TRUE(recordedBounds(t[0]).has_value()) << "the first row: the same start, fewer values";
    EXPECT_FALSE(recordedBounds(t[1]).has_value()) << "another start";
    EXPECT_FALSE(recordedBounds(t.copy()).has_value()) << "another tensor with the same values";
    std::optional<std::pair<float, float>> elsewhere;
    std::thread([&] { elsewhere = recordedBounds(t); }).join();
    EXPECT_FALSE(elsewhere.has_value()) << "another thread";

    t.at(3) = 100.0f; // a write through any handle of the storage
    EXPECT_FALSE(recordedBounds(t).has_value());
    recordBounds(t, -1.0f, 1.0f); // recorded again: the latest holds
    EXPECT_EQ(recordedBounds(t), std::make_pair(-1.0f, 1.0f));
    (void)t[0].data();
    EXPECT_FALSE(recordedBounds(t).has_value()) << "written through a row";
}

TEST(RecordedBounds, TheOldestOfManyIsForgotten)
{
    std::vector<Tensor> many;
    for (int k = 0; k < 20; ++k) {
        many.push_back(Tensor::zeros(Shape({ 8 })));
        recordBounds(many.back(), 0.0f, static_cast<float>(k));
    }
    EXPECT_FALSE(recordedBounds(many.front()).has_value());
    EXPECT_EQ(recordedBounds(many.back()), std::make_pair(0.0f, 19.0f));
}

TEST(RecordedBounds, TheInputsBoundGivesTheProductsBound)
{
    // Rows of one output channel: Σ|w| is 3 for the first, 1.5 for the second; biases 0.5 and -2.
    const float wv[] = { 1.0f, -1.0f, 1.0f, 0.5f, 0.5f, -0.5f }, bv[] = { 0.5f, -2.0f };
    const Tensor w = Tensor::fromValues(Shape({ 2, 3 }), wv), b = Tensor::fromValues(Shape({ 2 }), bv);
    dnnlutil::FiniteInput finite;
    finite.update(w, &b);
    const float x[] = { 0.25f, -4.0f, 1.0f };
    ASSERT_EQ(finite.bound(x, 3), 4.0f);
    const float within[] = { 0.0f, -0.5f, 3.5f };
    EXPECT_EQ(finite.bound(within, 3), 3.5f);
    EXPECT_GE(finite.outputBound(4.0f), 3 * 4.0f + 2.0f);
    EXPECT_LE(finite.outputBound(4.0f), (3 * 4.0f + 2.0f) * 1.01f);
    const float nan[] = { 0.25f, std::numeric_limits<float>::quiet_NaN(), 1.0f };
    EXPECT_FALSE(finite.bound(nan, 3).has_value());
    const float huge[] = { 0.25f, std::numeric_limits<float>::max(), 1.0f };
    EXPECT_FALSE(finite.bound(huge, 3).has_value()) << "beyond the weights' limit";
}

TEST(RecordedBounds, AConvolutionWithItsReluInsideRecordsABoundOnItsOutput)
{
    const Conv3x3 made = conv3x3(10);
    const std::vector<Shape>& in = made.in;
    const std::vector<Shape>& out = made.out;
    Kernel* const conv = made.kernel.get();
    if (!conv) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    ASSERT_TRUE(conv->setPostOps(std::vector<PostOp> { PostOp { PostOp::Kind::Relu, 0, 0, true } }));
    Generator gen(3);
    Tensor x = Tensor::uniform(in[0], -1, 1, &gen);
    const Tensor w = Tensor::uniform(in[1], -0.5f, 0.5f, &gen), b = Tensor::uniform(in[2], -0.5f, 0.5f, &gen);
    Tensor y(out[0]);
    const Tensor* args[] = { &x, &w, &b };
    Tensor* outs[] = { &y };
    RunContext ctx;
    conv->run(args, outs, ctx);
    const auto bounds = recordedBounds(y);
    ASSERT_TRUE(bounds.has_value());
    EXPECT_EQ(bounds->first, 0.0f);
    const float* v = y.view().data();
    const float largest = *std::max_element(v, v + y.size());
    EXPECT_GE(bounds->second, largest);
    EXPECT_LE(bounds->second, 16 * 9 * 0.5f * 1.0f * 1.01f + 0.5f) << "Σ|w| · max|x| + max|b| at most";

    // A NaN in the input: the relu runs after the store, NaN comes out, and nothing is recorded.
    x.at(17) = std::numeric_limits<float>::quiet_NaN();
    conv->run(args, outs, ctx);
    EXPECT_FALSE(recordedBounds(y).has_value());
    EXPECT_TRUE(std::any_of(y.view().data(), y.view().data() + y.size(), [](float f) { return std::isnan(f); }));
}

TEST(RecordedBounds, AMaxPoolingTakesTheRecordForItsInputInsteadOfLookingForNaN)
{
    const OpDef& pooling = OpRegistry::instance().get("Pooling");
    const ParamsPtr params = pooling.parse(AttrMap { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" } });
    const std::vector<Shape> in { Shape({ 1, 16, 4, 4 }) }, out { Shape({ 1, 16, 2, 2 }) };
    std::unique_ptr<Kernel> pool = pooling.makeKernel(*params, in, out, KernelKind::Dnnl);
    if (!pool || std::string(pool->backend()) != "dnnl") GTEST_SKIP() << "oneDNN runs no pooling on this machine";
    Tensor x = Tensor::uniform(in[0], 0, 1);
    x.at(5) = std::numeric_limits<float>::quiet_NaN();
    Tensor y(out[0]);
    const Tensor* args[] = { &x };
    Tensor* outs[] = { &y };
    RunContext ctx;
    const auto nans = [&] {
        const float* v = y.view().data();
        return std::count_if(v, v + y.size(), [](float f) { return std::isnan(f); });
    };
    pool->run(args, outs, ctx);
    EXPECT_EQ(nans(), 1) << "read, the NaN is found and kept";
    // A record saying the input holds no NaN (false here, to see that it is believed): not read.
    recordBounds(x, 0.0f, 1.0f);
    pool->run(args, outs, ctx);
    EXPECT_EQ(nans(), 0) << "oneDNN's max drops the NaN: the input was not read for it";
    x.at(6) = 0.5f; // written since the record: read again
    pool->run(args, outs, ctx);
    EXPECT_EQ(nans(), 1);
}

TEST(RecordedBounds, AConvolutionEndingWithOneDNNsReluRecordsThatNoNaNLeftIt)
{
    const Conv3x3 made = conv3x3(6);
    const std::vector<Shape>& in = made.in;
    const std::vector<Shape>& out = made.out;
    Kernel* const conv = made.kernel.get();
    if (!conv) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    ASSERT_TRUE(conv->setPostOps(std::vector<PostOp> { PostOp { PostOp::Kind::Relu } })); // NaN becomes 0
    Tensor x = Tensor::uniform(in[0], -1, 1);
    x.at(7) = std::numeric_limits<float>::quiet_NaN();
    x.at(40) = std::numeric_limits<float>::infinity();
    const Tensor w = Tensor::uniform(in[1], -0.5f, 0.5f), b = Tensor::uniform(in[2], -0.5f, 0.5f);
    Tensor y(out[0]);
    const Tensor* args[] = { &x, &w, &b };
    Tensor* outs[] = { &y };
    RunContext ctx;
    conv->run(args, outs, ctx);
    const auto bounds = recordedBounds(y);
    // Recorded only where oneDNN's kernel is a JIT one (its relu turns NaN into 0; the reference
    // kernel's keeps NaN): then the record must hold.
    if (!bounds) GTEST_SKIP() << "oneDNN runs a reference convolution here: no record";
    EXPECT_EQ(*bounds, std::make_pair(0.0f, std::numeric_limits<float>::infinity()));
    const float* v = y.view().data();
    EXPECT_EQ(std::count_if(v, v + y.size(), [](float f) { return std::isnan(f); }), 0) << "what the record says";
}
