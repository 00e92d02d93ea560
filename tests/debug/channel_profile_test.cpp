// What a layer's channels respond to (debug/channel_profile.h): the inputs that activate a channel
// most with their receptive fields, the mean activation per class, cancelling, the JSON cache.

#include "core/error.h"
#include "debug/channel_profile.h"
#include "gluon/name_manager.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "models/registry.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace opscope;
using namespace opscope::gluon;

namespace {

// A 1×1 convolution with two channels: +x and -x.
std::shared_ptr<HybridSequential> plusMinus()
{
    resetNaming();
    auto net = std::make_shared<HybridSequential>();
    nn::Conv::Options o;
    o.use_bias = false;
    auto conv = std::make_shared<nn::Conv2D>(2, 1, o);
    net->add(conv);
    net->initialize();
    net->initializeFor({ Shape { 1, 1, 6, 6 } });
    conv->weight()->set_data(Tensor::fromValues(Shape({ 2, 1, 1, 1 }), std::vector<float> { 1.0f, -1.0f }));
    net->hybridize();
    return net;
}

// Sample i: one pixel of value (i + 1) / 10 at (i % 6, (2 i) % 6) on zeros; label i % 3.
void pixels(Tensor& data, Tensor& labels, int64_t n)
{
    data = Tensor::zeros({ n, 1, 6, 6 });
    labels = Tensor({ n });
    for (int64_t i = 0; i < n; ++i) {
        data.data()[i * 36 + (i % 6) * 6 + (2 * i) % 6] = static_cast<float>(i + 1) / 10.0f;
        labels.data()[i] = static_cast<float>(i % 3);
    }
}

} // namespace

TEST(ChannelProfile, TheStrongestInputsTheirPlaceAndTheClassMeans)
{
    auto net = plusMinus();
    Tensor data, labels;
    pixels(data, labels, 20);
    debug::ProfileOptions o;
    o.layer = "conv0_fwd";
    o.dataSet = "pixels";
    o.batch = 7; // batches of 7, 7 and 6
    const debug::LayerProfile p = debug::profileLayer(*net, data, labels, o);
    EXPECT_EQ(p.samples, 20);
    EXPECT_EQ(p.classes, 3);
    EXPECT_EQ(p.countPerClass, (std::vector<int64_t> { 7, 7, 6 }));
    ASSERT_EQ(p.channels.size(), 2u);
    const auto& plus = p.channels[0].top;
    ASSERT_EQ(plus.size(), 9u);
    for (size_t k = 0; k < 9; ++k) {
        const int64_t i = 19 - static_cast<int64_t>(k); // brightest first
        EXPECT_EQ(plus[k].sample, i);
        EXPECT_FLOAT_EQ(plus[k].activation, static_cast<float>(i + 1) / 10.0f);
        EXPECT_EQ(plus[k].y, i % 6);
        EXPECT_EQ(plus[k].x, (2 * i) % 6);
        EXPECT_EQ(plus[k].field, (debug::PixelRect { i % 6, (2 * i) % 6, i % 6, (2 * i) % 6 })); // a 1×1 kernel
        EXPECT_EQ(plus[k].label, i % 3);
    }
    // -x is largest (0) on the zeros: the first 0 of each input, in input order.
    EXPECT_FLOAT_EQ(p.channels[1].top[0].activation, 0.0f);
    // Mean over the map per class: class 0 holds samples 0, 3, …, 18.
    double expected = 0;
    for (int64_t i = 0; i < 20; i += 3)
        expected += (static_cast<double>(i + 1) / 10.0) / 36.0;
    EXPECT_NEAR(p.channels[0].meanPerClass[0], expected / 7, 1e-7);
    EXPECT_NEAR(p.channels[1].meanPerClass[0], -expected / 7, 1e-7);
    // The JSON cache gives it back whole.
    const debug::LayerProfile back = debug::layerProfileFromJson(debug::toJson(p), "cache");
    EXPECT_EQ(back.layer, "conv0_fwd");
    EXPECT_EQ(back.dataSet, "pixels");
    ASSERT_EQ(back.channels.size(), 2u);
    EXPECT_EQ(back.channels[0].top[3].field, plus[3].field);
    EXPECT_EQ(back.channels[0].meanPerClass, p.channels[0].meanPerClass);
    EXPECT_THROW(debug::layerProfileFromJson("{\"layer\": 3}", "cache"), FileError);
}

TEST(ChannelProfile, CancelledFromItsProgressAndClearErrors)
{
    auto net = plusMinus();
    Tensor data, labels;
    pixels(data, labels, 20);
    debug::ProfileOptions o;
    o.layer = "conv0_fwd";
    o.batch = 5;
    o.progress = [](int64_t done, int64_t) { return done < 10; };
    const debug::LayerProfile p = debug::profileLayer(*net, data, labels, o);
    EXPECT_TRUE(p.cancelled);
    EXPECT_EQ(p.samples, 10);
    o.progress = {};
    o.layer = "nosuchnode";
    EXPECT_THROW(debug::profileLayer(*net, data, labels, o), UsageError);
    o.layer = "conv0_fwd";
    EXPECT_THROW(debug::profileLayer(*net, data, Tensor::zeros({ 3 }), o), UsageError);
    Tensor bad = labels.copy();
    bad.data()[4] = -1; // a negative class, and a NaN one: refused, never an index
    EXPECT_THROW(debug::profileLayer(*net, data, bad, o), UsageError);
    bad.data()[4] = NAN;
    EXPECT_THROW(debug::profileLayer(*net, data, bad, o), UsageError);
}

TEST(ChannelProfile, ReceptiveFieldsThroughLenetsConvolutionsAndPooling)
{
    samples::Sample lenet = samples::makeSample("lenet");
    lenet.block->hybridize();
    lenet.block->call(lenet.defaultInputs);
    const Graph& g = *lenet.block->graph();
    const uint32_t conv0 = *g.findNode("hybridsequential0_conv0_tanh_fwd");
    const uint32_t conv1 = *g.findNode("hybridsequential0_conv1_tanh_fwd");
    const uint32_t dense = *g.findNode("hybridsequential0_dense0_fwd");
    EXPECT_EQ(debug::receptiveField(g, conv0, 3, 4, 28, 28), (debug::PixelRect { 3, 4, 7, 8 })); // 5×5
    // conv1 (5×5) over pool0 (2×2, stride 2) over conv0 (5×5): 14×14, moving by 2.
    EXPECT_EQ(debug::receptiveField(g, conv1, 0, 0, 28, 28), (debug::PixelRect { 0, 0, 13, 13 }));
    EXPECT_EQ(debug::receptiveField(g, conv1, 7, 2, 28, 28), (debug::PixelRect { 14, 4, 27, 17 }));
    EXPECT_FALSE(debug::receptiveField(g, dense, 0, 0, 28, 28).has_value()); // a dense layer mixes positions
}
