// MXNet's block and node naming, and the graph of ../shared/models/mnist-symbol.json rebuilt in C++.

#include "common/test_paths.h"
#include "core/error.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace opscope;
using namespace opscope::gluon;

namespace {
std::vector<std::string> opNodeNames(const Graph& g)
{
    std::vector<std::string> out;
    for (const Node& n : g.nodes())
        if (!n.isVariable())
            out.push_back(n.name);
    return out;
}

nn::Conv::Options tanhConv()
{
    nn::Conv::Options o;
    o.activation = "tanh";
    return o;
}

std::shared_ptr<HybridSequential> mnistNet()
{
    auto net = std::make_shared<HybridSequential>();
    auto scope = net->name_scope();
    net->add(std::make_shared<nn::Conv2D>(10, 5, tanhConv()));
    net->add(std::make_shared<nn::MaxPool2D>(2));
    net->add(std::make_shared<nn::Conv2D>(25, 5, tanhConv()));
    net->add(std::make_shared<nn::MaxPool2D>(2));
    net->add(std::make_shared<nn::Dense>(20, "tanh"));
    net->add(std::make_shared<nn::Dense>(10, "tanh"));
    return net;
}
}

TEST(GluonNaming, PrefixesCountPerTypeWithinTheParent)
{
    resetNaming();
    auto net = std::make_shared<HybridSequential>();
    std::shared_ptr<nn::Dense> d0, d1;
    std::shared_ptr<nn::Activation> r0;
    std::shared_ptr<nn::Conv2D> c0;
    {
        auto scope = net->name_scope();
        d0 = std::make_shared<nn::Dense>(4);
        d1 = std::make_shared<nn::Dense>(4);
        r0 = std::make_shared<nn::Activation>("relu");
        c0 = std::make_shared<nn::Conv2D>(2, 3, nn::Conv::Options {}, "myconv_");
    }
    EXPECT_EQ(net->prefix(), "hybridsequential0_");
    EXPECT_EQ(d0->prefix(), "hybridsequential0_dense0_");
    EXPECT_EQ(d1->prefix(), "hybridsequential0_dense1_");
    EXPECT_EQ(r0->prefix(), "hybridsequential0_relu0_");
    EXPECT_EQ(c0->prefix(), "hybridsequential0_myconv_");
    EXPECT_EQ(d0->weight()->name(), "hybridsequential0_dense0_weight");
    // Top level: a process-wide count per type; an explicit prefix is used as given.
    auto top = std::make_shared<nn::Dense>(2);
    auto top2 = std::make_shared<nn::Dense>(2);
    auto named = std::make_shared<nn::Dense>(2, std::nullopt, true, true, nullptr, nullptr, 0, "out_");
    EXPECT_EQ(top->prefix(), "dense0_");
    EXPECT_EQ(top2->prefix(), "dense1_");
    EXPECT_EQ(named->prefix(), "out_");
    EXPECT_EQ(named->name(), "out");
}

TEST(GluonNaming, NestedSequentialsAndUnnamedOps)
{
    resetNaming();
    auto outer = std::make_shared<HybridSequential>();
    {
        auto scope = outer->name_scope();
        auto inner = std::make_shared<HybridSequential>();
        {
            auto s2 = inner->name_scope();
            inner->add(std::make_shared<nn::Dense>(3, "relu"));
            inner->add(std::make_shared<nn::Flatten>());
        }
        outer->add(inner);
        outer->add(std::make_shared<nn::HybridLambda>("tanh"));
        outer->add(std::make_shared<nn::ELU>());
        outer->add(std::make_shared<nn::LayerNorm>());
        outer->add(std::make_shared<nn::Dropout>(0.5));
    }
    outer->initialize();
    outer->hybridize();
    outer->call(Tensor::ones(Shape({ 2, 5 })));
    const Graph& g = *outer->graph();
    EXPECT_EQ(opNodeNames(g),
        (std::vector<std::string> { "hybridsequential0_hybridsequential0_dense0_fwd",
            "hybridsequential0_hybridsequential0_dense0_relu_fwd",
            "hybridsequential0_hybridsequential0_flatten0_flatten0", "hybridsequential0_hybridlambda0_tanh0",
            "hybridsequential0_elu0_leakyrelu0", "hybridsequential0_layernorm0_layernorm0",
            "hybridsequential0_dropout0_fwd" }));
    // Each node records the path of the blocks that made it.
    const Node& relu = g.node(g.findNode("hybridsequential0_hybridsequential0_dense0_relu_fwd").value());
    EXPECT_EQ(relu.blockPath,
        "hybridsequential0/hybridsequential0_hybridsequential0/hybridsequential0_hybridsequential0_dense0/"
        "hybridsequential0_hybridsequential0_dense0_relu");
}

TEST(GluonNaming, ConvBatchNormPoolingConcat)
{
    resetNaming();
    struct TwoBranch : HybridBlock {
        TwoBranch()
            : HybridBlock("twobranch", std::nullopt)
        {
            auto scope = name_scope();
            conv = std::make_shared<nn::Conv2D>(4, 3, nn::Conv::Options { { 1, 1 }, { 1, 1 } });
            bn = std::make_shared<nn::BatchNorm>();
            pool = std::make_shared<nn::MaxPool2D>(std::vector<int64_t> { 3, 3 }, nn::Pooling::Options { { 1, 1 }, { 1, 1 } });
            register_child(conv);
            register_child(bn);
            register_child(pool);
        }
        std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
        {
            Value a = (*bn)((*conv)(x[0]));
            Value b = (*pool)(x[0]);
            return { F.Concat({ a, b }, 1) };
        }
        std::shared_ptr<nn::Conv2D> conv;
        std::shared_ptr<nn::BatchNorm> bn;
        std::shared_ptr<nn::MaxPool2D> pool;
    };
    auto net = std::make_shared<TwoBranch>();
    net->initialize();
    net->hybridize();
    Tensor out = net->call(Tensor::ones(Shape({ 1, 2, 6, 6 })));
    EXPECT_EQ(out.shape(), Shape({ 1, 6, 6, 6 }));
    EXPECT_EQ(opNodeNames(*net->graph()),
        (std::vector<std::string> { "twobranch0_conv0_fwd", "twobranch0_batchnorm0_fwd", "twobranch0_pool0_fwd",
            "twobranch0_concat0" }));
    std::vector<std::string> params = net->collect_params().keys();
    EXPECT_EQ(params,
        (std::vector<std::string> { "twobranch0_conv0_weight", "twobranch0_conv0_bias", "twobranch0_batchnorm0_gamma",
            "twobranch0_batchnorm0_beta", "twobranch0_batchnorm0_running_mean", "twobranch0_batchnorm0_running_var" }));
    EXPECT_TRUE(net->graph()->isAuxiliary(net->graph()->findNode("twobranch0_batchnorm0_running_var").value()));
    EXPECT_EQ(net->collect_params(".*running_.*").size(), 2u);
    EXPECT_EQ(net->collect_params("twobranch0_conv0_.*|.*gamma").size(), 3u);
}

// The network of ../shared/models/mnist-symbol.json (exported by MXNet 1.6 Gluon), rebuilt with
// the C++ API: same operators, attributes, node names (but for the sequential's counter) and
// parameter names and shapes.
TEST(GluonNaming, MnistGraphMatchesMxnetExport)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    std::ifstream in(test::shared("models/mnist-symbol.json"));
    ASSERT_TRUE(in) << "cannot read " << test::shared("models/mnist-symbol.json");
    const nlohmann::json file = nlohmann::json::parse(in);
    resetNaming();
    for (int skip = 0; skip < 9; ++skip)
        HybridSequential(); // MXNet's file came from the tenth HybridSequential of its process
    auto net = mnistNet();
    EXPECT_EQ(net->prefix(), "hybridsequential9_");
    net->initialize();
    net->hybridize();
    net->call(Tensor::ones(Shape({ 1, 1, 28, 28 })));
    const Graph& g = *net->graph();

    const auto& nodes = file["nodes"];
    ASSERT_EQ(nodes.size(), g.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = g.node(static_cast<uint32_t>(i));
        SCOPED_TRACE(n.name);
        EXPECT_EQ(nodes[i]["op"].get<std::string>(), n.op);
        EXPECT_EQ(nodes[i]["name"].get<std::string>(), n.name);
        if (n.isVariable())
            continue;
        AttrMap attrs;
        for (auto& [k, v] : nodes[i]["attrs"].items())
            attrs[k] = v.get<std::string>();
        EXPECT_EQ(attrs, n.attrs);
        ASSERT_EQ(nodes[i]["inputs"].size(), n.inputs.size());
        for (size_t k = 0; k < n.inputs.size(); ++k) {
            EXPECT_EQ(nodes[i]["inputs"][k][0].get<uint32_t>(), n.inputs[k].node);
            EXPECT_EQ(nodes[i]["inputs"][k][1].get<uint32_t>(), n.inputs[k].index);
        }
    }
    EXPECT_EQ(file["heads"][0][0].get<uint32_t>(), g.heads()[0].node);

    // Parameters: names in graph order and shapes (the file's, completed by inference from 28×28).
    std::vector<std::string> fileParams;
    for (auto idx : file["arg_nodes"])
        if (nodes[idx.get<size_t>()]["name"] != "data")
            fileParams.push_back(nodes[idx.get<size_t>()]["name"]);
    EXPECT_EQ(fileParams, net->collect_params().keys());
    const std::map<std::string, Shape> expected { { "hybridsequential9_conv0_weight", Shape({ 10, 1, 5, 5 }) },
        { "hybridsequential9_conv0_bias", Shape({ 10 }) }, { "hybridsequential9_conv1_weight", Shape({ 25, 10, 5, 5 }) },
        { "hybridsequential9_conv1_bias", Shape({ 25 }) }, { "hybridsequential9_dense0_weight", Shape({ 20, 400 }) },
        { "hybridsequential9_dense0_bias", Shape({ 20 }) }, { "hybridsequential9_dense1_weight", Shape({ 10, 20 }) },
        { "hybridsequential9_dense1_bias", Shape({ 10 }) } };
    const ParameterDict params = net->collect_params();
    for (const ParamPtr& p : params.values())
        EXPECT_EQ(p->shape(), expected.at(p->name())) << p->name();
}
