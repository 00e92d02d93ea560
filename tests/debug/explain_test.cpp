// Explanations of a prediction (debug/explain.h) on models whose answer is known: a linear model's
// saliency is its weight row, Grad-CAM of a one-channel network is its rectified feature map, and
// occlusion finds the one pixel that decides the class.

#include "core/error.h"
#include "debug/explain.h"
#include "gluon/initializer.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "models/registry.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace opscope;
using namespace opscope::gluon;

namespace {

// Dense(3) over a flattened (1, 1, 4, 4) input, weights w[k][p] = (k + 1) * (p - 7) / 10, no bias.
std::shared_ptr<HybridSequential> linearModel(bool hybrid)
{
    auto net = std::make_shared<HybridSequential>();
    auto dense = std::make_shared<nn::Dense>(3, std::nullopt, false);
    net->add(dense);
    net->initialize();
    net->initializeFor({ Shape { 1, 1, 4, 4 } });
    Tensor w({ 3, 16 });
    for (int k = 0; k < 3; ++k)
        for (int p = 0; p < 16; ++p)
            w.data()[k * 16 + p] = static_cast<float>((k + 1) * (p - 7)) / 10.0f;
    dense->weight()->set_data(w);
    if (hybrid) net->hybridize();
    return net;
}

Tensor ramp(const Shape& s, float scale = 0.1f)
{
    Tensor x(s);
    for (int64_t i = 0; i < x.size(); ++i)
        x.data()[i] = scale * static_cast<float>(i % 7 + 1);
    return x;
}

} // namespace

TEST(Explain, SaliencyOfALinearModelIsItsWeightRow)
{
    for (bool hybrid : { false, true }) {
        auto net = linearModel(hybrid);
        const Tensor x = ramp({ 1, 1, 4, 4 });
        debug::ExplainOptions o;
        o.classIndex = 1;
        const debug::Explanation s = debug::explain(*net, x, o);
        ASSERT_EQ(s.heat.shape(), Shape({ 4, 4 }));
        EXPECT_EQ(s.classIndex, 1);
        for (int p = 0; p < 16; ++p)
            EXPECT_FLOAT_EQ(s.heat.data()[p], std::fabs(2.0f * static_cast<float>(p - 7) / 10.0f)) << "pixel " << p;
        o.method = debug::ExplainMethod::GradientTimesInput;
        const debug::Explanation g = debug::explain(*net, x, o);
        double score = 0;
        for (int p = 0; p < 16; ++p) {
            EXPECT_FLOAT_EQ(g.heat.data()[p], 2.0f * static_cast<float>(p - 7) / 10.0f * x.data()[p]);
            score += g.heat.data()[p];
        }
        EXPECT_NEAR(score, g.score, 1e-5); // a linear model without bias: the parts sum to the score
    }
}

TEST(Explain, TheTopClassesAndTheDefaultClass)
{
    auto net = linearModel(true);
    const Tensor x = ramp({ 1, 1, 4, 4 });
    const debug::Explanation s = debug::explain(*net, x, {});
    ASSERT_EQ(s.top.size(), 3u); // fewer classes than topK
    EXPECT_EQ(s.classIndex, s.top[0].first);
    EXPECT_GE(s.top[0].second, s.top[1].second);
    EXPECT_GE(s.top[1].second, s.top[2].second);
    EXPECT_FLOAT_EQ(s.score, s.top[0].second);
}

TEST(Explain, GradCamOfAOneChannelNetworkIsItsRectifiedMap)
{
    // conv (one channel, 1×1, weight 2) → global average → Dense(2) with weights +1 and -1.
    for (bool hybrid : { false, true }) {
        auto net = std::make_shared<HybridSequential>();
        nn::Conv::Options co;
        co.use_bias = false;
        auto conv = std::make_shared<nn::Conv2D>(1, 1, co);
        auto dense = std::make_shared<nn::Dense>(2, std::nullopt, false);
        net->add(conv, std::make_shared<nn::GlobalAvgPool2D>(), std::make_shared<nn::Flatten>(), dense);
        net->initialize();
        net->initializeFor({ Shape { 1, 1, 6, 6 } });
        conv->weight()->set_data(Tensor::full({ 1, 1, 1, 1 }, 2.0f));
        dense->weight()->set_data(Tensor::fromValues(Shape({ 2, 1 }), std::vector<float> { 1.0f, -1.0f }));
        if (hybrid) net->hybridize();
        Tensor x = ramp({ 1, 1, 6, 6 });
        x.data()[7] = -0.5f; // one negative pixel: rectified away for class 0
        debug::ExplainOptions o;
        o.method = debug::ExplainMethod::GradCam;
        o.classIndex = 0;
        const debug::Explanation e = debug::explain(*net, x, o);
        EXPECT_FALSE(e.layer.empty());
        ASSERT_EQ(e.raw.shape(), Shape({ 6, 6 }));
        ASSERT_EQ(e.heat.shape(), Shape({ 6, 6 }));
        // α = ∂score/∂A averaged = 1/36; map = ReLU(α · 2x).
        for (int p = 0; p < 36; ++p) {
            EXPECT_NEAR(e.raw.data()[p], std::max(0.0f, 2.0f * x.data()[p] / 36.0f), 1e-6) << "pixel " << p;
            EXPECT_NEAR(e.heat.data()[p], e.raw.data()[p], 1e-6); // same grid: no resampling
        }
        o.classIndex = 1; // α = -1/36: only the negative pixel remains
        const debug::Explanation n = debug::explain(*net, x, o);
        for (int p = 0; p < 36; ++p)
            EXPECT_NEAR(n.raw.data()[p], p == 7 ? 2.0f * 0.5f / 36.0f : 0.0f, 1e-6) << "pixel " << p;
    }
}

TEST(Explain, OcclusionFindsThePixelThatAloneDecides)
{
    // Dense(2) over an 8×8 image: class 0 reads only pixel (5, 6).
    auto net = std::make_shared<HybridSequential>();
    auto dense = std::make_shared<nn::Dense>(2, std::nullopt, false);
    net->add(dense);
    net->initialize();
    net->initializeFor({ Shape { 1, 1, 8, 8 } });
    Tensor w = Tensor::zeros({ 2, 64 });
    w.data()[5 * 8 + 6] = 1.0f;
    dense->weight()->set_data(w);
    net->hybridize();
    const Tensor x = Tensor::full({ 1, 1, 8, 8 }, 1.0f);
    debug::ExplainOptions o;
    o.method = debug::ExplainMethod::Occlusion;
    o.patch = 2;
    o.stride = 1;
    o.batch = 5; // several batches, the last one short
    int64_t calls = 0, lastDone = -1, lastTotal = 0;
    o.progress = [&](int64_t done, int64_t total) {
        EXPECT_GT(done, lastDone);
        lastDone = done, lastTotal = total, ++calls;
        return true;
    };
    const debug::Explanation e = debug::explain(*net, x, o);
    EXPECT_EQ(e.classIndex, 0);
    EXPECT_EQ(lastTotal, 49); // 7 × 7 patch positions
    EXPECT_EQ(lastDone, 49);
    EXPECT_GE(calls, 10);
    ASSERT_EQ(e.heat.shape(), Shape({ 8, 8 }));
    EXPECT_FLOAT_EQ(e.heat.at(5 * 8 + 6), 1.0f); // every patch over it removes the whole score
    for (int y = 0; y < 8; ++y)
        for (int xx = 0; xx < 8; ++xx)
            if (std::abs(y - 5) > 1 || std::abs(xx - 6) > 1) {
                EXPECT_EQ(e.heat.at(y * 8 + xx), 0.0f) << y << "," << xx;
            }
    // Cancelled from the progress callback: nothing computed past it.
    o.progress = [](int64_t done, int64_t) { return done < 10; };
    EXPECT_TRUE(debug::explain(*net, x, o).cancelled);
}

TEST(Explain, WhatCannotBeExplainedIsAClearError)
{
    auto net = linearModel(true);
    const Tensor x = ramp({ 1, 1, 4, 4 });
    debug::ExplainOptions o;
    o.classIndex = 3;
    try {
        debug::explain(*net, x, o);
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("class 3 is outside the 3 classes"), std::string::npos) << e.what();
    }
    o.classIndex = -1;
    EXPECT_THROW(debug::explain(*net, ramp({ 2, 1, 4, 4 }), o), UsageError); // batch 2
    o.method = debug::ExplainMethod::GradCam;
    try {
        debug::explain(*net, x, o);
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("no convolution"), std::string::npos) << e.what();
    }
    o.layer = "nosuchnode";
    EXPECT_THROW(debug::explain(*net, x, o), UsageError);
    // A model whose output is not one row of class scores.
    auto conv = std::make_shared<HybridSequential>();
    conv->add(std::make_shared<nn::Conv2D>(2, 3));
    conv->initialize();
    conv->hybridize();
    try {
        debug::explain(*conv, ramp({ 1, 1, 6, 6 }), {});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("(1, 2, 4, 4)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(debug::parseMethod("lime"), UsageError);
    // An input without elements.
    EXPECT_THROW(debug::explain(*net, Tensor::zeros({ 1, 1, 0, 4 }), {}), UsageError);
}

TEST(Explain, TheLenetSampleLooksAtTheStrokesOfItsSeven)
{
    samples::Sample lenet = samples::makeSample("lenet");
    lenet.block->hybridize();
    const Tensor& x = lenet.defaultInputs.at(0);
    for (auto m : { debug::ExplainMethod::Saliency, debug::ExplainMethod::Occlusion }) {
        debug::ExplainOptions o;
        o.method = m;
        const debug::Explanation e = debug::explain(*lenet.block, x, o);
        EXPECT_EQ(e.classIndex, 7) << debug::methodName(m);
        ASSERT_EQ(e.heat.shape(), Shape({ 28, 28 }));
        // The explanation is stronger on the ink than on the empty border.
        double ink = 0, border = 0;
        int inkCount = 0, borderCount = 0;
        for (int p = 0; p < 784; ++p) {
            const int r = p / 28, c = p % 28;
            if (x.at(p) > 0.5f) ink += std::fabs(e.heat.at(p)), ++inkCount;
            else if (r < 3 || r > 24 || c < 3 || c > 24) border += std::fabs(e.heat.at(p)), ++borderCount;
        }
        EXPECT_GT(ink / inkCount, 2 * border / borderCount) << debug::methodName(m);
    }
    // Grad-CAM's default layer: the last convolution's activation (8×8 maps, coarse: it may point at
    // the empty corner a 9 would close as much as at the ink, so only its form is checked here).
    debug::ExplainOptions o;
    o.method = debug::ExplainMethod::GradCam;
    const debug::Explanation cam = debug::explain(*lenet.block, x, o);
    EXPECT_EQ(cam.layer, "hybridsequential0_conv1_tanh_fwd");
    EXPECT_EQ(cam.raw.shape(), Shape({ 8, 8 }));
    float top = 0;
    for (float v : cam.heat.values()) {
        EXPECT_GE(v, 0.0f);
        top = std::max(top, v);
    }
    EXPECT_GT(top, 0.0f);
}
