// How one output value of a convolution or a fully connected layer is computed (debug/unit_anatomy.h):
// every element's breakdown sums to the value the engine computed, with the padding, strides,
// dilation and groups of MXNet and ONNX nodes, and the activation that follows.

#include "core/error.h"
#include "debug/unit_anatomy.h"
#include "gluon/name_manager.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "models/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace opscope;
using namespace opscope::gluon;

namespace {

// Every tensor the hybridized block's ops read and write, by hook name.
std::map<std::string, Tensor> record(HybridBlock& block, const Tensor& x)
{
    std::map<std::string, Tensor> seen;
    HookHandle h = block.register_op_hook(
        [&](std::string_view name, std::string_view, const TensorView& t) { seen[std::string(name)] = Tensor::copyOf(t); },
        true);
    block.call(x);
    h.remove();
    return seen;
}

// Checks every output element of `node` against its anatomy; returns how many were checked.
int checkEveryElement(HybridBlock& block, const Tensor& x, const std::string& node)
{
    const auto seen = record(block, x);
    const Graph& g = *block.graph();
    const std::optional<uint32_t> found = g.findNode(node);
    if (!found) {
        std::string names;
        for (uint32_t i = 0; i < g.size(); ++i)
            names += " " + g.node(i).name;
        ADD_FAILURE() << "no node " << node << "; the graph has" << names;
        return 0;
    }
    const uint32_t id = *found;
    const Node& n = g.node(id);
    std::vector<Tensor> inputs;
    for (size_t s = 0; s < n.inputs.size(); ++s)
        inputs.push_back(seen.at(g.inputName(id, s)));
    const Tensor out = seen.at(g.outputName(NodeEntry { id, 0, 0 }));
    int checked = 0;
    std::vector<int64_t> idx(static_cast<size_t>(out.ndim()), 0);
    for (int64_t flat = 0; flat < out.size(); ++flat) {
        int64_t rest = flat;
        for (int64_t d = out.ndim() - 1; d >= 0; --d) {
            idx[static_cast<size_t>(d)] = rest % out.shape()[d];
            rest /= out.shape()[d];
        }
        const debug::UnitAnatomy a = debug::unitAnatomy(g, id, inputs, out, idx);
        EXPECT_NEAR(a.total, a.tensorValue, 1e-5 * (1 + std::fabs(a.tensorValue))) << node << " element " << flat;
        ++checked;
    }
    return checked;
}

Tensor randomInput(const Shape& s, uint64_t seed)
{
    Generator gen(seed);
    return Tensor::uniform(s, -1, 1, &gen);
}

} // namespace

TEST(UnitAnatomy, EveryConvolutionValueIsItsTermsPlusBias)
{
    resetNaming(); // node names from conv0_, dense0_
    // Stride 2, padding 1, dilation 2, two groups.
    auto net = std::make_shared<HybridSequential>();
    nn::Conv::Options o;
    o.strides = { 2, 2 };
    o.padding = { 1, 1 };
    o.dilation = { 2, 1 };
    o.groups = 2;
    o.activation = "tanh";
    net->add(std::make_shared<nn::Conv2D>(4, std::vector<int64_t> { 3, 2 }, o));
    net->initialize();
    net->hybridize();
    const Tensor x = randomInput({ 2, 4, 9, 8 }, 3);
    EXPECT_EQ(checkEveryElement(*net, x, "conv0_fwd"), 2 * 4 * 4 * 5); // (9 + 2 - 5) / 2 + 1 rows, (8 + 2 - 2) / 2 + 1 columns
    const auto seen = record(*net, x);
    const Graph& g = *net->graph();
    const uint32_t id = *g.findNode("conv0_fwd");
    std::vector<Tensor> in;
    for (size_t s = 0; s < 3; ++s)
        in.push_back(seen.at(g.inputName(id, s)));
    const Tensor out = seen.at("conv0_fwd_output");
    const debug::UnitAnatomy a = debug::unitAnatomy(g, id, in, out, { 1, 3, 0, 2 });
    // Channel 3 is in the second group: input channels 2 and 3, 3×2 terms each.
    EXPECT_EQ(a.channels, (std::vector<int64_t> { 2, 3 }));
    EXPECT_EQ(a.kernelH, 3);
    EXPECT_EQ(a.kernelW, 2);
    ASSERT_EQ(a.terms.size(), 12u);
    EXPECT_TRUE(a.terms[0].padding); // row 0·2 - 1 + 0 = -1: the padding
    EXPECT_EQ(a.terms[0].input, 0.0f);
    EXPECT_EQ(a.terms[2].iy, 1); // ky 1: -1 + 1·2
    EXPECT_EQ(a.activation, "tanh");
    EXPECT_NEAR(a.activated, std::tanh(double(a.tensorValue)), 1e-12);
    const Tensor act = seen.at("conv0_tanh_fwd_output");
    EXPECT_NEAR(a.activated, act.data()[((1 * 4 + 3) * 4 + 0) * 5 + 2], 1e-6);
}

TEST(UnitAnatomy, EveryDenseValueIsItsTermsPlusBiasLargestFirst)
{
    resetNaming(); // node names from conv0_, dense0_
    auto net = std::make_shared<HybridSequential>();
    net->add(std::make_shared<nn::Dense>(5, "relu"));
    net->initialize();
    net->hybridize();
    const Tensor x = randomInput({ 3, 2, 4 }, 5);
    EXPECT_EQ(checkEveryElement(*net, x, "dense0_fwd"), 15);
    const auto seen = record(*net, x);
    const Graph& g = *net->graph();
    const uint32_t id = *g.findNode("dense0_fwd");
    const debug::UnitAnatomy a = debug::unitAnatomy(g, id,
        { seen.at(g.inputName(id, 0)), seen.at(g.inputName(id, 1)), seen.at(g.inputName(id, 2)) },
        seen.at("dense0_fwd_output"), { 2, 4 });
    ASSERT_EQ(a.terms.size(), 8u);
    for (size_t i = 1; i < a.terms.size(); ++i)
        EXPECT_GE(std::fabs(a.terms[i - 1].product), std::fabs(a.terms[i].product));
    EXPECT_EQ(a.activation, "relu");
}

TEST(UnitAnatomy, OnnxConvAndGemmNodes)
{
    samples::Sample s = samples::makeSample("onnx-cnn");
    s.block->hybridize();
    s.block->call(s.defaultInputs);
    const Graph& g = *s.block->graph();
    int convs = 0, gemms = 0;
    for (uint32_t i = 0; i < g.size(); ++i) {
        const Node& n = g.node(i);
        if (n.isVariable() || !debug::hasUnitAnatomy(n)) continue;
        (n.opName() == "Conv" ? convs : gemms) += checkEveryElement(*s.block, s.defaultInputs[0], n.name) > 0;
    }
    EXPECT_GE(convs, 2);
    EXPECT_GE(gemms, 1);
}

TEST(UnitAnatomy, OtherOperatorsAndIndicesOutsideAreUsageErrors)
{
    resetNaming(); // node names from conv0_, dense0_
    auto net = std::make_shared<HybridSequential>();
    net->add(std::make_shared<nn::Dense>(2));
    net->add(std::make_shared<nn::Activation>("relu"));
    net->initialize();
    net->hybridize();
    const Tensor x = randomInput({ 1, 3 }, 1);
    const auto seen = record(*net, x);
    const Graph& g = *net->graph();
    const uint32_t dense = *g.findNode("dense0_fwd");
    const std::vector<Tensor> in { seen.at(g.inputName(dense, 0)), seen.at(g.inputName(dense, 1)),
        seen.at(g.inputName(dense, 2)) };
    const Tensor out = seen.at("dense0_fwd_output");
    try {
        debug::unitAnatomy(g, dense, in, out, { 0, 2 });
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("(0, 2) is not an element of its output (1, 2)"), std::string::npos)
            << e.what();
    }
    const uint32_t relu = *g.findNode("relu0_fwd");
    EXPECT_FALSE(debug::hasUnitAnatomy(g.node(relu)));
    EXPECT_THROW(debug::unitAnatomy(g, relu, { out }, out, { 0, 0 }), UsageError);
    EXPECT_THROW(debug::unitAnatomy(g, dense, { in[0] }, out, { 0, 0 }), UsageError); // no weight
}
