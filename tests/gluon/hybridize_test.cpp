#include "common/tensor_match.h"
#include "core/error.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace opscope;
using namespace opscope::gluon;

namespace {
std::shared_ptr<HybridSequential> mlp()
{
    auto net = std::make_shared<HybridSequential>();
    auto scope = net->name_scope();
    net->add(std::make_shared<nn::Dense>(8, "relu"));
    net->add(std::make_shared<nn::Dense>(3));
    return net;
}

// A user-written HybridBlock: forward written once against F.
struct Residual : HybridBlock {
    Residual()
        : HybridBlock("residual", std::nullopt)
    {
        auto scope = name_scope();
        fc = std::make_shared<nn::Dense>(4);
        register_child(fc);
        scale = addParam("scale", Shape({ 1 }), std::make_shared<Constant>(0.5f));
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
    {
        Value y = F.relu((*fc)(x[0]));
        return { F.elemwise_add(F.broadcast_mul(y, F.param(scale)), x[0]) };
    }
    std::shared_ptr<nn::Dense> fc;
    ParamPtr scale;
};
}

TEST(Hybridize, DeferredInitialisationLearnsInUnits)
{
    resetNaming();
    auto net = mlp();
    net->initialize();
    const ParamPtr w = net->collect_params().at("hybridsequential0_dense0_weight");
    EXPECT_EQ(w->shape(), Shape({ 8, 0 }));
    EXPECT_TRUE(w->deferred());
    EXPECT_THROW(w->data(), UsageError);
    net->call(Tensor::ones(Shape({ 2, 5 })));
    EXPECT_EQ(w->shape(), Shape({ 8, 5 }));
    EXPECT_FALSE(w->deferred());
    EXPECT_EQ(w->data().shape(), Shape({ 8, 5 }));
    // Uniform(0.07) by default; the bias uses Dense's "zeros".
    for (float v : w->data().values())
        EXPECT_LE(std::fabs(v), 0.07f);
    for (float v : net->collect_params().at("hybridsequential0_dense0_bias")->data().values())
        EXPECT_EQ(v, 0.0f);
}

TEST(Hybridize, UninitialisedParameterIsAClearError)
{
    resetNaming();
    auto net = mlp();
    try {
        net->call(Tensor::ones(Shape({ 2, 5 })));
        ADD_FAILURE() << "ran without initialize()";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("hybridsequential0_dense0_weight"), std::string::npos) << e.what();
    }
}

TEST(Hybridize, EagerAndHybridizedGiveTheSameValues)
{
    resetNaming();
    auto net = std::make_shared<Residual>();
    globalGenerator().seed(5);
    net->initialize(std::make_shared<Xavier>());
    Generator gen(2);
    Tensor x = Tensor::uniform(Shape({ 3, 4 }), -1, 1, &gen);
    Tensor eager = net->call(x).copy();
    EXPECT_EQ(net->graph(), nullptr);
    for (bool staticAlloc : { false, true }) {
        net->hybridize(true, staticAlloc);
        Tensor hybrid = net->call(x);
        ASSERT_NE(net->graph(), nullptr);
        EXPECT_TRUE(test::tensorsNear(hybrid, eager));
    }
    net->hybridize(false);
    EXPECT_EQ(net->graph(), nullptr);
    EXPECT_TRUE(test::tensorsNear(net->call(x), eager));
}

TEST(Hybridize, NewShapesReplanButStaticShapeRejectsThem)
{
    resetNaming();
    auto net = mlp();
    net->initialize();
    net->hybridize();
    EXPECT_EQ(net->call(Tensor::ones(Shape({ 2, 5 }))).shape(), Shape({ 2, 3 }));
    EXPECT_EQ(net->call(Tensor::ones(Shape({ 7, 5 }))).shape(), Shape({ 7, 3 }));
    net->hybridize(true, true, true);
    net->call(Tensor::ones(Shape({ 2, 5 })));
    try {
        net->call(Tensor::ones(Shape({ 4, 5 })));
        ADD_FAILURE() << "static_shape accepted a new shape";
    } catch (const ShapeError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("(2, 5)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("(4, 5)"), std::string::npos) << msg;
    }
}

TEST(Hybridize, StaticShapeWithoutStaticAllocIsAnError)
{
    resetNaming();
    auto net = mlp();
    EXPECT_THROW(net->hybridize(true, false, true), UsageError);
    // A plain hybridize() is accepted silently (MXNet's flags check warned here for no reason).
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    EXPECT_NO_THROW(net->hybridize());
    net->initialize();
    net->call(Tensor::ones(Shape({ 1, 2 })));
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

TEST(Hybridize, GraphCarriesBlockPathsAndParameterVariables)
{
    resetNaming();
    auto net = std::make_shared<Residual>();
    net->initialize();
    net->hybridize();
    net->call(Tensor::ones(Shape({ 2, 4 })));
    const Graph& g = *net->graph();
    std::vector<std::string> vars;
    for (uint32_t v : g.variables())
        vars.push_back(g.node(v).name);
    EXPECT_EQ(vars, (std::vector<std::string> { "data", "residual0_dense0_weight", "residual0_dense0_bias", "residual0_scale" }));
    const Node& fc = g.node(g.findNode("residual0_dense0_fwd").value());
    EXPECT_EQ(fc.blockPath, "residual0/residual0_dense0");
    const Node& relu = g.node(g.findNode("residual0_activation0").value());
    EXPECT_EQ(relu.blockPath, "residual0");
    EXPECT_EQ(g.node(g.findNode("residual0_scale").value()).attrs.at("__init__"), "[\"constant\", {\"value\": 0.5}]");
}

TEST(Parameters, InitializersAreReproducibleFromTheSeed)
{
    auto draw = [](uint64_t seed, InitPtr init) {
        resetNaming();
        globalGenerator().seed(seed);
        auto net = mlp();
        net->initialize(init);
        net->call(Tensor::ones(Shape({ 1, 6 })));
        return net->collect_params().at("hybridsequential0_dense1_weight")->data().toVector();
    };
    EXPECT_EQ(draw(1, std::make_shared<Xavier>()), draw(1, std::make_shared<Xavier>()));
    EXPECT_NE(draw(1, std::make_shared<Xavier>()), draw(2, std::make_shared<Xavier>()));
    // Xavier uniform, avg, magnitude 3 on (3, 8): bound sqrt(3 / 5.5).
    for (float v : draw(3, std::make_shared<Xavier>()))
        EXPECT_LE(std::fabs(v), std::sqrt(3.0f / 5.5f));
    for (float v : draw(3, std::make_shared<One>()))
        EXPECT_EQ(v, 1.0f);
    const auto normal = draw(4, std::make_shared<Normal>(0.5f));
    double sq = 0;
    for (float v : normal)
        sq += v * v;
    EXPECT_GT(std::sqrt(sq / normal.size()), 0.2);
    EXPECT_LT(std::sqrt(sq / normal.size()), 0.9);
}

TEST(Parameters, ForceReinitAndMSRAPrelu)
{
    resetNaming();
    auto net = std::make_shared<nn::Dense>(4, std::nullopt, true, true, nullptr, nullptr, 100);
    net->initialize(std::make_shared<Zero>());
    EXPECT_EQ(net->weight()->data().at(0), 0.0f);
    net->initialize(std::make_shared<MSRAPrelu>()); // not forced: unchanged
    EXPECT_EQ(net->weight()->data().at(0), 0.0f);
    net->initialize(std::make_shared<MSRAPrelu>(), true);
    double sq = 0;
    for (float v : net->weight()->data().values())
        sq += v * v;
    // gaussian, magnitude 2 / (1 + 0.25²), factor avg (100 + 4) / 2
    const double expected = std::sqrt(2.0 / (1.0 + 0.0625) / 52.0);
    EXPECT_NEAR(std::sqrt(sq / 400.0), expected, expected * 0.2);
}

TEST(Layers, EveryLayerRunsEagerAndHybridizedAlike)
{
    resetNaming();
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Conv2D>(4, 3));
        net->add(std::make_shared<nn::BatchNorm>());
        net->add(std::make_shared<nn::LeakyReLU>(0.1));
        net->add(std::make_shared<nn::AvgPool2D>(2));
        net->add(std::make_shared<nn::Conv2D>(4, 1, nn::Conv::Options { {}, {}, {}, 2 }));
        net->add(std::make_shared<nn::SELU>());
        net->add(std::make_shared<nn::GELU>());
        net->add(std::make_shared<nn::GlobalAvgPool2D>());
        net->add(std::make_shared<nn::Flatten>());
        net->add(std::make_shared<nn::Dropout>(0.3));
        net->add(std::make_shared<nn::Dense>(5));
    }
    globalGenerator().seed(9);
    net->initialize(std::make_shared<Xavier>());
    Generator gen(3);
    Tensor x = Tensor::uniform(Shape({ 2, 3, 10, 10 }), 0, 1, &gen);
    Tensor eager = net->call(x).copy();
    EXPECT_EQ(eager.shape(), Shape({ 2, 5 }));
    net->hybridize();
    EXPECT_TRUE(test::tensorsNear(net->call(x), eager));

    auto seq1d = std::make_shared<HybridSequential>();
    {
        auto scope = seq1d->name_scope();
        seq1d->add(std::make_shared<nn::Conv1D>(3, 3));
        seq1d->add(std::make_shared<nn::MaxPool1D>(2));
        seq1d->add(std::make_shared<nn::AvgPool1D>(2));
        seq1d->add(std::make_shared<nn::GlobalMaxPool2D>());
    }
    seq1d->initialize();
    EXPECT_THROW(seq1d->call(Tensor::ones(Shape({ 1, 2, 11 }))), ShapeError); // 2-D global pooling on 1-D data
}

TEST(Layers, EmbeddingAndLayerNorm)
{
    resetNaming();
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Embedding>(10, 4));
        net->add(std::make_shared<nn::LayerNorm>());
    }
    net->initialize();
    Tensor idx = Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 0, 1, 2, 9, 8, 7 });
    Tensor eager = net->call(idx).copy();
    EXPECT_EQ(eager.shape(), Shape({ 2, 3, 4 }));
    for (int row = 0; row < 6; ++row) {
        double mean = 0;
        for (int k = 0; k < 4; ++k)
            mean += eager.at(row * 4 + k);
        EXPECT_NEAR(mean / 4, 0.0, 1e-5);
    }
    net->hybridize(true, true, true);
    EXPECT_TRUE(test::tensorsNear(net->call(idx), eager));
}
