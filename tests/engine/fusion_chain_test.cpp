// Chains fused into a convolution (ExecFlags::fuse): an inference BatchNorm folded as a per-channel
// scale and shift, element-wise activations (relu, sigmoid, tanh, gelu, clip) and a residual add,
// in any order the graph has them; the same values as unfused, NaN and infinities included; a
// watched node ends the fused part of a chain; a training run never folds a BatchNorm that trains.

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "ops/nn/convolution.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace opscope;

namespace {
using test::idOf;
using test::staticFlags;
using Builder = test::GraphBuilder;
using Watcher = test::OutputWatcher;

// Each variable uniform in the range `rangeOf(name)` gives, of the shape `shapeOf(name)` gives.
template <class ShapeOf, class RangeOf>
std::vector<Tensor> variablesBy(const Graph& g, uint64_t seed, ShapeOf shapeOf, RangeOf rangeOf)
{
    Generator gen(seed);
    std::vector<Tensor> v;
    for (uint32_t id : g.variables()) {
        const std::string& n = g.node(id).name;
        const auto [lo, hi] = rangeOf(n);
        v.push_back(Tensor::uniform(shapeOf(n), lo, hi, &gen));
    }
    return v;
}

// Variables by name: the data, weights, biases, and BatchNorm statistics with a positive variance.
std::vector<Tensor> inputsFor(const Graph& g, uint64_t seed = 7)
{
    return variablesBy(
        g, seed,
        [](const std::string& n) {
            return n == "data"        ? Shape({ 2, 16, 10, 10 })
                : n.ends_with("_weight") ? Shape({ 16, 16, 3, 3 })
                                         : Shape({ 16 });
        },
        [](const std::string& n) {
            return n.ends_with("_weight")   ? std::pair(-0.3f, 0.3f)
                : n.ends_with("_moving_var") ? std::pair(0.2f, 2.0f)
                                             : std::pair(-1.0f, 1.0f);
        });
}

std::vector<std::string> namesOf(const Graph& g, const std::vector<uint32_t>& ids)
{
    std::vector<std::string> out;
    for (uint32_t id : ids)
        out.push_back(g.node(id).name);
    return out;
}

bool onednn(const Executor& e, const std::string& conv)
{
    return e.kernelBackends()[idOf(e.graph(), conv)] == "dnnl";
}

// conv1 -> bn1 -> relu1 -> conv2 -> bn2 -> add(bn2, relu1) -> relu2 -> conv3 -> clip(0, 0.5)
//   -> conv4 -> sigmoid -> conv5 -> tanh -> conv6 -> gelu (head)
std::shared_ptr<Graph> chainNet()
{
    Builder b;
    const uint32_t r1 = b.op("relu", "relu1", b.batchNorm("bn1", b.conv("conv1", b.data)));
    const uint32_t bn2 = b.batchNorm("bn2", b.conv("conv2", r1));
    const uint32_t add = b.g->addOp("elemwise_add", "add", {}, { { bn2, 0, 0 }, { r1, 0, 0 } });
    const uint32_t r2 = b.op("Activation", "relu2", add, { { "act_type", "relu" } });
    const uint32_t clip = b.op("clip", "clip", b.conv("conv3", r2), { { "a_min", "0" }, { "a_max", "0.5" } });
    const uint32_t sig = b.op("sigmoid", "sigmoid", b.conv("conv4", clip));
    const uint32_t tanh = b.op("Activation", "tanh", b.conv("conv5", sig), { { "act_type", "tanh" } });
    const uint32_t gelu = b.op("LeakyReLU", "gelu", b.conv("conv6", tanh), { { "act_type", "gelu" } });
    b.g->setHeads({ { gelu, 0, 0 } });
    b.g->finalize();
    return b.g;
}
}

TEST(FusionChain, BatchNormAddAndActivationsRunInsideTheirConvolutionsWithTheSameValues)
{
    const auto g = chainNet();
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    using V = std::vector<std::string>;
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv1"))), (V { "bn1", "relu1" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv2"))), (V { "bn2", "add", "relu2" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv3"))), (V { "clip" })) << "applied after the store, NaN kept";
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv4"))), (V { "sigmoid" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv5"))), (V { "tanh" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv6"))), (V { "gelu" }));
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));

    // Changed BatchNorm statistics and weights are seen at the next run (folded per run, not once).
    auto changed = in;
    for (size_t v = 0; v < changed.size(); ++v) {
        const std::string& n = g->node(g->variables()[v]).name;
        if (n.starts_with("bn") || n == "conv2_weight") changed[v] = Tensor::uniform(in[v].shape(), 0.3f, 1.5f);
    }
    EXPECT_TRUE(test::tensorsNear(fused.run(changed).outputs.at(0), plain.run(changed).outputs.at(0), 1e-6f, 1e-5f));
}

TEST(FusionChain, NaNAndInfinitiesComeOutWhereTheyComeOutUnfused)
{
    const auto g = chainNet();
    auto in = inputsFor(*g);
    float* x = in[0].data();
    x[3] = std::numeric_limits<float>::quiet_NaN(); // spreads through every convolution's window
    x[250] = std::numeric_limits<float>::infinity();
    x[777] = -std::numeric_limits<float>::infinity();
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    // Watch each convolution's output in the unfused run and in turn end the chain there in the
    // fused one: every intermediate with its NaNs compared.
    Watcher all;
    all.nodes = { "conv1", "bn1", "relu1", "conv2", "bn2", "add", "relu2", "conv3", "clip", "conv4", "sigmoid", "conv5",
        "tanh", "conv6", "gelu" };
    plain.attach(&all);
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    int nans = 0;
    for (int64_t i = 0; i < expected.size(); ++i)
        nans += std::isnan(expected.data()[i]) ? 1 : 0;
    EXPECT_GT(nans, 0) << "the NaN reached the output unfused";
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    for (const std::string& node : all.nodes) {
        Watcher one;
        one.nodes = { node };
        Executor part(g, staticFlags(true));
        part.attach(&one);
        part.run(in);
        ASSERT_TRUE(one.seen.count(node));
        EXPECT_TRUE(test::tensorsNear(one.seen[node], all.seen[node], 1e-6f, 1e-5f)) << node;
    }
}

TEST(FusionChain, AWatchedNodeEndsTheFusedPartOfAChain)
{
    const auto g = chainNet();
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Watcher all;
    all.nodes = { "bn2", "add" };
    plain.attach(&all);
    plain.run(in);
    Executor fused(g, staticFlags(true));
    Watcher some;
    some.nodes = { "add" };
    fused.attach(&some);
    fused.run(in);
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv2"))), std::vector<std::string> { "bn2" });
    EXPECT_EQ(fused.fusedInto(idOf(*g, "add")), -1);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu2")), -1) << "after the watched add: apart";
    EXPECT_TRUE(test::tensorsNear(some.seen["add"], all.seen["add"], 1e-6f, 1e-5f));
    // Watching the convolution itself keeps the whole chain apart.
    some.nodes = { "conv2" };
    fused.refreshWants();
    fused.run(in);
    EXPECT_TRUE(fused.fusedWith(idOf(*g, "conv2")).empty());
    EXPECT_EQ(fused.fusedInto(idOf(*g, "bn2")), -1);
}

TEST(FusionChain, ATrainingRunNeverFoldsABatchNormThatTrains)
{
    Builder b;
    const uint32_t bn = b.batchNorm("bn", b.conv("conv", b.data));
    const uint32_t frozen = b.batchNorm("frozen", b.conv("conv_b", b.op("relu", "relu", bn)),
        { { "fix_gamma", "False" }, { "use_global_stats", "True" } });
    b.g->setHeads({ { frozen, 0, 0 } });
    b.g->finalize();
    const auto g = b.g;
    auto inference = inputsFor(*g);
    auto training = inputsFor(*g); // its own statistics: training updates them in place
    auto reference = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    RunContext train;
    train.training = true;
    const Tensor expected = plain.run(reference, train).outputs.at(0).copy();
    const Tensor got = fused.run(training, train).outputs.at(0).copy();
    if (!onednn(fused, "conv")) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "bn")), -1) << "batch statistics: not a fixed scale and shift";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "frozen")), idOf(*g, "conv_b")) << "use_global_stats: folds even in training";
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    for (size_t v = 0; v < reference.size(); ++v) // the moving statistics were updated alike
        EXPECT_TRUE(test::tensorsNear(training[v], reference[v], 1e-6f, 1e-5f)) << g->node(g->variables()[v]).name;
    // The next inference run folds it again, with the same values as unfused.
    RunContext infer;
    const Tensor a = plain.run(inference, infer).outputs.at(0).copy();
    const Tensor c = fused.run(inference, infer).outputs.at(0).copy();
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv"))), (std::vector<std::string> { "bn", "relu" }));
    EXPECT_TRUE(test::tensorsNear(c, a, 1e-6f, 1e-5f));
}

TEST(FusionChain, AFullyConnectedLayerTakesItsBatchNormAndActivation)
{
    // data (64, 128) -> fc1 -> bn -> relu (Activation: NaN kept) -> fc2 -> tanh -> fc3 -> add(fc3, tanh)
    //   -> gelu; fc4 on a (64, 5, 128) input without flattening -> bn4 on axis 1 (not its units: apart).
    Builder b;
    auto fc = [&](const std::string& name, uint32_t in, int units, AttrMap extra = {}) {
        AttrMap attrs { { "num_hidden", std::to_string(units) } };
        attrs.insert(extra.begin(), extra.end());
        const uint32_t w = b.g->addVariable(name + "_weight");
        const uint32_t bias = b.g->addVariable(name + "_bias");
        return b.g->addOp("FullyConnected", name, attrs, { { in, 0, 0 }, { w, 0, 0 }, { bias, 0, 0 } });
    };
    const uint32_t r = b.op("Activation", "relu", b.batchNorm("bn", fc("fc1", b.data, 64)), { { "act_type", "relu" } });
    const uint32_t t = b.op("tanh", "tanh", fc("fc2", r, 64));
    const uint32_t add = b.g->addOp("elemwise_add", "add", {}, { { fc("fc3", t, 64), 0, 0 }, { t, 0, 0 } });
    const uint32_t gelu = b.op("LeakyReLU", "gelu", add, { { "act_type", "gelu" } });
    const uint32_t seq = b.g->addVariable("seq");
    const uint32_t bn4 = b.batchNorm("bn4", fc("fc4", seq, 64, { { "flatten", "False" } }));
    b.g->setHeads({ { gelu, 0, 0 }, { bn4, 0, 0 } });
    b.g->finalize();
    const auto g = b.g;
    std::vector<Tensor> in = variablesBy(
        *g, 11,
        [](const std::string& n) {
            return n == "data"                           ? Shape({ 64, 128 })
                : n == "seq"                             ? Shape({ 64, 5, 128 })
                : n == "fc1_weight" || n == "fc4_weight" ? Shape({ 64, 128 })
                : n.ends_with("_weight")                 ? Shape({ 64, 64 })
                : n.starts_with("bn4")                   ? Shape({ 5 })
                                                         : Shape({ 64 });
        },
        [](const std::string& n) { return std::pair(n.ends_with("_var") ? 0.2f : -1.0f, 1.0f); });
    in[0].data()[7] = std::numeric_limits<float>::quiet_NaN();
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const RunResult a = plain.run(in);
    const RunResult c = fused.run(in);
    if (fused.kernelBackends()[idOf(*g, "fc1")] != "dnnl") GTEST_SKIP() << "oneDNN runs no fully connected layer here";
    using V = std::vector<std::string>;
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "fc1"))), (V { "bn", "relu" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "fc2"))), (V { "tanh" }));
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "fc3"))), (V { "add", "gelu" }));
    ASSERT_EQ(fused.kernelBackends()[idOf(*g, "fc4")], "dnnl") << "so that it could take post-ops";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "bn4")), -1) << "axis 1 of a (64, 5, 64) output is not its units";
    ASSERT_EQ(c.outputs.size(), 2u);
    EXPECT_TRUE(test::tensorsNear(c.outputs[0], a.outputs[0], 1e-6f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(c.outputs[1], a.outputs[1], 1e-6f, 1e-5f));
    int nans = 0;
    for (int64_t i = 0; i < a.outputs[0].size(); ++i)
        nans += std::isnan(a.outputs[0].data()[i]) ? 1 : 0;
    EXPECT_GT(nans, 0) << "the NaN reached the output unfused (and, compared above, fused)";
}

// MXNet's clip fuses after a convolution and after a fully connected layer (applied after the
// store, NaN kept), but not with a_min > a_max, where its order of comparisons is its own.
TEST(FusionChain, ClipFusesKeepingNaNUnlessItsBoundsAreCrossed)
{
    // data -> conv1 -> clip1 [-0.2, 0.3] -> conv2 -> clip2 [0.5, -0.5] (head); data -> fc -> clip3 [0, 0.1] (head)
    Builder b;
    const uint32_t c1 = b.op("clip", "clip1", b.conv("conv1", b.data), { { "a_min", "-0.2" }, { "a_max", "0.3" } });
    const uint32_t c2 = b.op("clip", "clip2", b.conv("conv2", c1), { { "a_min", "0.5" }, { "a_max", "-0.5" } });
    const uint32_t w = b.g->addVariable("fc_weight"), bias = b.g->addVariable("fc_bias");
    const uint32_t fc = b.g->addOp("FullyConnected", "fc", { { "num_hidden", "32" } }, { { b.data, 0, 0 }, { w, 0, 0 }, { bias, 0, 0 } });
    const uint32_t c3 = b.op("clip", "clip3", fc, { { "a_min", "0" }, { "a_max", "0.1" } });
    b.g->setHeads({ { c2, 0, 0 }, { c3, 0, 0 } });
    b.g->finalize();
    const auto g = b.g;
    std::vector<Tensor> in = variablesBy(
        *g, 5,
        [](const std::string& n) {
            return n == "data"          ? Shape({ 2, 16, 10, 10 })
                : n == "fc_weight"      ? Shape({ 32, 1600 })
                : n == "fc_bias"        ? Shape({ 32 })
                : n.ends_with("_weight") ? Shape({ 16, 16, 3, 3 })
                                         : Shape({ 16 });
        },
        [](const std::string& n) { return n == "fc_weight" ? std::pair(-0.05f, 0.05f) : std::pair(-0.3f, 0.3f); });
    in[0].at(3) = std::numeric_limits<float>::quiet_NaN();
    in[0].at(1700) = std::numeric_limits<float>::infinity();
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const RunResult a = plain.run(in);
    const RunResult c = fused.run(in);
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    using V = std::vector<std::string>;
    EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "conv1"))), (V { "clip1" }));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "clip2")), -1) << "a_min > a_max: MXNet's order, not ONNX's";
    if (fused.kernelBackends()[idOf(*g, "fc")] == "dnnl") {
        EXPECT_EQ(namesOf(*g, fused.fusedWith(idOf(*g, "fc"))), (V { "clip3" }));
    }
    ASSERT_EQ(c.outputs.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
        EXPECT_TRUE(test::tensorsNear(c.outputs[k], a.outputs[k], 1e-6f, 1e-5f)) << k;
        int nans = 0;
        for (float v : a.outputs[k].view().values())
            nans += std::isnan(v) ? 1 : 0;
        EXPECT_GT(nans, 0) << k << ": the NaN reached the output unfused (and, compared above, fused)";
    }
}

TEST(FusionChain, AConvolutionRefusesAListItCannotTakeAndRunsWithNone)
{
    ConvolutionParams p;
    p.kernel = { 3, 3 };
    p.stride = p.dilate = { 1, 1 };
    p.pad = { 1, 1 };
    p.numFilter = 16;
    const std::vector<Shape> in { Shape({ 2, 16, 10, 10 }), Shape({ 16, 16, 3, 3 }), Shape({ 16 }) };
    const std::vector<Shape> out { Shape({ 2, 16, 10, 10 }) };
    std::unique_ptr<Kernel> fused = makeConvolutionDnnl(p, in, out);
    std::unique_ptr<Kernel> plain = makeConvolutionDnnl(p, in, out);
    if (!fused) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    Generator gen(5);
    const Tensor x = Tensor::uniform(in[0], -1, 1, &gen), w = Tensor::uniform(in[1], -1, 1, &gen),
                 b = Tensor::uniform(in[2], -1, 1, &gen), r = Tensor::uniform(out[0], -1, 1, &gen);
    using K = PostOp::Kind;
    const PostOp relu { K::Relu }, nanRelu { K::Relu, 0, 0, true }, sum { K::Sum }, sigmoid { K::Sigmoid };
    ASSERT_TRUE(fused->setPostOps(std::vector<PostOp> { relu }));
    EXPECT_FALSE(fused->setPostOps(std::vector<PostOp> { sum, sum })) << "one residual at most";
    EXPECT_FALSE(fused->setPostOps(std::vector<PostOp> { nanRelu, sigmoid })) << "a NaN-keeping relu only last";
    // Refused: no post-op left from before (the relu), the plain convolution's values.
    RunContext ctx;
    Tensor y1(out[0]), y2(out[0]);
    const Tensor* args[] = { &x, &w, &b };
    Tensor* o1[] = { &y1 };
    Tensor* o2[] = { &y2 };
    fused->run(args, o1, ctx);
    plain->run(args, o2, ctx);
    EXPECT_TRUE(test::tensorsNear(y1, y2, 0, 0));
    // Taken: a residual then the NaN-keeping relu last.
    ASSERT_TRUE(fused->setPostOps(std::vector<PostOp> { sum, nanRelu }));
    const Tensor* withResidual[] = { &x, &w, &b, &r };
    fused->run(withResidual, o1, ctx);
    for (int64_t i = 0; i < y1.size(); ++i) {
        const float e = std::max(y2.data()[i] + r.data()[i], 0.0f);
        ASSERT_NEAR(y1.data()[i], e, 1e-5f * (1 + std::fabs(e))) << i;
    }
}
