// Tensors kept in oneDNN's blocked layout between convolutions and poolings nobody watches
// (Executor::keepNativeLayouts): the same values as with every tensor plain, a watched node's
// tensors plain again from the next run, and a tensor that anything else reads (another kind of
// kernel, the caller as a graph output) never kept.

#include "common/exec_graphs.h"
#include "common/op_test_util.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

using namespace opscope;

namespace {
using test::idOf;
using test::staticFlags;
using Watcher = test::OutputWatcher;

struct Net {
    std::shared_ptr<Graph> g = std::make_shared<Graph>();
    uint32_t data = g->addVariable("data");
    std::vector<Shape> shapes { Shape({ 2, 16, 14, 14 }) };

    uint32_t conv(const std::string& name, uint32_t in, int filters, int kernel, int stride, int inChannels)
    {
        const uint32_t w = g->addVariable(name + "_weight");
        const uint32_t b = g->addVariable(name + "_bias");
        shapes.push_back(Shape({ filters, inChannels, kernel, kernel }));
        shapes.push_back(Shape({ filters }));
        const std::string k = std::to_string(kernel), s = std::to_string(stride), p = std::to_string(kernel / 2);
        return g->addOp("Convolution", name,
            { { "kernel", "(" + k + ", " + k + ")" }, { "stride", "(" + s + ", " + s + ")" }, { "pad", "(" + p + ", " + p + ")" },
                { "num_filter", std::to_string(filters) } },
            { { in, 0, 0 }, { w, 0, 0 }, { b, 0, 0 } });
    }
    uint32_t op(const std::string& type, const std::string& name, std::vector<uint32_t> in, AttrMap attrs = {})
    {
        std::vector<NodeEntry> entries;
        for (uint32_t i : in)
            entries.push_back({ i, 0, 0 });
        return g->addOp(type, name, std::move(attrs), entries);
    }
    std::vector<Tensor> inputs() const
    {
        Generator gen(11);
        std::vector<Tensor> v;
        for (const Shape& s : shapes)
            v.push_back(Tensor::uniform(s, -0.5f, 0.5f, &gen));
        return v;
    }
};

// A residual stage as ResNet has them:
// conv1 -> relu1 -> conv2 -> add(conv2, relu1) -> relu2 -> conv3 (1x1, stride 2, 32) -> conv4 -> conv5 (head)
Net residualNet(int64_t batch = 2)
{
    Net n;
    n.shapes[0] = Shape({ batch, 16, 14, 14 });
    const uint32_t r1 = n.op("relu", "relu1", { n.conv("conv1", n.data, 16, 3, 1, 16) });
    const uint32_t add = n.op("elemwise_add", "add", { n.conv("conv2", r1, 16, 3, 1, 16), r1 });
    const uint32_t r2 = n.op("relu", "relu2", { add });
    const uint32_t c3 = n.conv("conv3", r2, 32, 1, 2, 16);
    const uint32_t c4 = n.conv("conv4", c3, 32, 3, 1, 32);
    const uint32_t c5 = n.conv("conv5", c4, 32, 3, 1, 32);
    n.g->setHeads({ { c5, 0, 0 } });
    n.g->finalize();
    return n;
}

uint32_t outputOf(const Graph& g, const std::string& node) { return g.entryId(idOf(g, node), 0); }

// Within 1e-5 of each value, or 1e-6 of the tensor's largest ones. A residual added inside a
// convolution (oneDNN's sum post-op) is, in the channel-blocked kernel, added to the products
// (those of the first block of input channels, when there are several) before the bias, where the
// unfused add comes after the bias and every product: the same sums in another order, whose
// rounding on a value near zero is more than the value's own 1e-5.
::testing::AssertionResult sameSums(const Tensor& got, const Tensor& expected)
{
    return test::tensorsNear(got, expected, 1e-6f * std::max(1.0f, test::largestMagnitude(expected)), 1e-5f);
}

bool onednn(const Executor& e, const std::string& conv) { return e.kernelBackends()[idOf(e.graph(), conv)] == "dnnl"; }
}

namespace {
void handsTheLayoutOn(const Net& n, bool blocked)
{
    const Graph& g = *n.g;
    const auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Executor fused(n.g, staticFlags(true));
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    EXPECT_TRUE(sameSums(got, expected));
    // relu1 (conv1's fused output) is read by conv2 and, as its residual, by conv2's fused add;
    // relu2 by conv3; conv3 by conv4; conv4 by conv5. All in nChw16c; each in the layout oneDNN
    // picks, a tensor stays native where writer and readers agree on one (relu1 and conv4 here).
    for (const char* node : { "relu1", "relu2", "conv3", "conv4" })
        if (blocked || node == std::string("relu1") || node == std::string("conv4"))
            EXPECT_TRUE(fused.nativeLayout(outputOf(g, node))) << node;
    EXPECT_FALSE(fused.nativeLayout(outputOf(g, "conv5"))) << "a graph output is the caller's: plain";
    EXPECT_FALSE(fused.nativeLayout(outputOf(g, "data")));
    for (const char* node : { "relu1", "conv4" })
        EXPECT_FALSE(plain.nativeLayout(outputOf(g, node))) << "without fuse every tensor is plain";
    // Again with other inputs, and the same plan.
    auto changed = in;
    changed[0] = Tensor::uniform(in[0].shape(), -2, 2);
    const uint64_t plans = fused.planGeneration();
    EXPECT_TRUE(sameSums(fused.run(changed).outputs.at(0), plain.run(changed).outputs.at(0)));
    EXPECT_EQ(fused.planGeneration(), plans);
}
}

// One image (each convolution in the layout oneDNN picks for it) and two (nChw16c throughout).
TEST(NativeLayout, ConvolutionsHandTheirBlockedLayoutOnWithTheSameValues)
{
    for (const int64_t batch : { 1, 2 }) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        handsTheLayoutOn(residualNet(batch), batch > 1);
    }
}

TEST(NativeLayout, AWatchedNodeSeesPlainValuesFromTheNextRun)
{
    const Net n = residualNet();
    const Graph& g = *n.g;
    const auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Watcher all;
    all.nodes = { "relu1", "conv3", "conv4" };
    plain.attach(&all);
    plain.run(in);
    Executor fused(n.g, staticFlags(true));
    fused.run(in);
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    ASSERT_TRUE(fused.nativeLayout(outputOf(g, "conv3")));
    // conv3 -> conv4 fuse nothing: only the layout pass knows them, and a watcher must still see plain values.
    for (const char* node : { "conv3", "relu1", "conv4" }) {
        Watcher one;
        one.nodes = { node };
        fused.attach(&one);
        const Tensor out = fused.run(in).outputs.at(0).copy();
        fused.detach(&one);
        ASSERT_TRUE(one.seen.count(node)) << node;
        EXPECT_TRUE(sameSums(one.seen[node], all.seen[node])) << node;
        EXPECT_TRUE(sameSums(out, plain.run(in).outputs.at(0))) << node;
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, node))) << node;
        fused.run(in); // unwatched again: kept again
    }
    EXPECT_TRUE(fused.nativeLayout(outputOf(g, "conv3")));
}

TEST(NativeLayout, ATensorAnythingElseReadsStaysPlain)
{
    // conv1 -> conv2 -> exp (reads conv2) -> conv3; conv1 is also a graph output.
    Net n;
    const uint32_t c1 = n.conv("conv1", n.data, 16, 3, 1, 16);
    const uint32_t c2 = n.conv("conv2", c1, 16, 3, 1, 16);
    const uint32_t e = n.op("exp", "exp", { c2 });
    const uint32_t c3 = n.conv("conv3", e, 16, 3, 1, 16);
    n.g->setHeads({ { c3, 0, 0 }, { c1, 0, 0 } });
    n.g->finalize();
    const Graph& g = *n.g;
    const auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Executor fused(n.g, staticFlags(true));
    const auto expected = plain.run(in).outputs;
    const auto got = fused.run(in).outputs;
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    EXPECT_FALSE(fused.nativeLayout(outputOf(g, "conv1"))) << "a graph output, though conv2 reads it";
    EXPECT_FALSE(fused.nativeLayout(outputOf(g, "conv2"))) << "exp reads it plain";
    for (size_t k = 0; k < 2; ++k)
        EXPECT_TRUE(test::tensorsNear(got.at(k), expected.at(k), 1e-6f, 1e-5f)) << k;
}

// A ResNet stem and head: conv1 -> max pool (3x3, stride 2) -> conv2 and conv3 (as a stage's first
// block and its shortcut both read the pool) -> add -> pool (avg, sum or a global average) -> flatten.
// Each pooling reads and writes the convolutions' blocked layout where only they are on both sides.
TEST(NativeLayout, PoolingsBetweenConvolutionsKeepTheBlockedLayoutWithTheSameValues)
{
    for (const char* type : { "avg", "sum", "global" }) {
        Net n;
        n.shapes[0] = Shape({ 2, 16, 64, 64 }); // large enough for oneDNN's poolings (dnnlPays)
        const uint32_t c1 = n.conv("conv1", n.data, 16, 3, 1, 16);
        const uint32_t pool1 = n.op("Pooling", "pool1", { c1 },
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "max" } });
        const uint32_t add = n.op("elemwise_add", "add", { n.conv("conv2", pool1, 32, 3, 1, 16), n.conv("conv3", pool1, 32, 1, 1, 16) });
        AttrMap last { { "kernel", "(4, 4)" }, { "stride", "(2, 2)" }, { "pool_type", type } };
        if (std::string(type) == "global") last = { { "kernel", "(1, 1)" }, { "global_pool", "True" }, { "pool_type", "avg" } };
        const uint32_t pool2 = n.op("Pooling", "pool2", { add }, last);
        n.g->setHeads({ { n.op("Flatten", "flatten", { pool2 }), 0, 0 } });
        n.g->finalize();
        const Graph& g = *n.g;
        auto in = n.inputs();
        Executor plain(n.g, staticFlags(false));
        Executor fused(n.g, staticFlags(true));
        const Tensor expected = plain.run(in).outputs.at(0).copy();
        const Tensor got = fused.run(in).outputs.at(0).copy();
        if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
        ASSERT_TRUE(onednn(fused, "pool1") && onednn(fused, "pool2")) << type;
        EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f)) << type;
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, "conv1"))) << type << ": only the pooling reads it";
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, "pool1"))) << type << ": only convolutions read it";
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, "add"))) << type << ": conv2 computes it, pool2 reads it";
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, "pool2"))) << type << ": Flatten reads it plain";
        // A NaN in the input: the max pooling's fallback kernel runs on plain copies of its blocked
        // input and output, and NaN propagates as unfused.
        in[0].at(5 * 64 * 64 + 3 * 64 + 7) = std::numeric_limits<float>::quiet_NaN();
        const Tensor withNan = plain.run(in).outputs.at(0).copy();
        int nans = 0;
        for (float v : withNan.view().values())
            nans += std::isnan(v) ? 1 : 0;
        EXPECT_GT(nans, 0) << type;
        EXPECT_TRUE(test::tensorsNear(fused.run(in).outputs.at(0), withNan, 1e-6f, 1e-5f)) << type;
        // A watched pooling sees plain values, and its neighbours convert around it.
        Watcher w;
        w.nodes = { "pool1" };
        fused.attach(&w);
        const Tensor watched = fused.run(in).outputs.at(0).copy();
        fused.detach(&w);
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, "pool1"))) << type;
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, "conv1"))) << type;
        EXPECT_TRUE(test::tensorsNear(watched, withNan, 1e-6f, 1e-5f)) << type;
        Watcher p;
        p.nodes = { "pool1" };
        plain.attach(&p);
        plain.run(in);
        EXPECT_TRUE(test::tensorsNear(w.seen.at("pool1"), p.seen.at("pool1"), 0, 0)) << type;
    }
}

// A convolution keeps its weights reordered into oneDNN's layout from run to run: a run does not
// count as a write of them (Tensor::version), so nothing is reordered again; weights written
// between runs, through any writable access, are reordered and used.
TEST(NativeLayout, WeightsAreReorderedAgainOnlyWhenWritten)
{
    const Net n = residualNet();
    const Graph& g = *n.g;
    auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Executor fused(n.g, staticFlags(true));
    fused.run(in);
    if (!onednn(fused, "conv1")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    std::vector<uint64_t> versions;
    for (const Tensor& t : in)
        versions.push_back(t.version());
    fused.run(in);
    plain.run(in);
    for (size_t i = 1; i < in.size(); ++i) // the weights and biases
        EXPECT_EQ(in[i].version(), versions[i]) << g.node(g.variables().at(i)).name << " counted as written by a run";
    // conv4's weights (input 7: the data, then weight and bias of each convolution) written three ways.
    const size_t w4 = 7;
    ASSERT_EQ(in[w4].shape(), Shape({ 32, 32, 3, 3 }));
    const std::vector<std::pair<const char*, std::function<void()>>> writes = {
        { "at", [&] { in[w4].at(17) += 0.75f; } },
        { "a pointer taken after the last run", [&] {
             float* p = in[w4].data();
             for (int64_t i = 0; i < in[w4].size(); i += 7)
                 p[i] = -p[i];
         } },
        { "copyFrom a reshaped view", [&] { in[w4].reshape(Shape({ 32 * 32 * 9 })).copyFrom(Tensor::uniform(Shape({ 32 * 32 * 9 }), -0.5f, 0.5f).view()); } },
    };
    for (const auto& [what, write] : writes) {
        write();
        EXPECT_TRUE(sameSums(fused.run(in).outputs.at(0), plain.run(in).outputs.at(0))) << what;
    }
}

// A grouped convolution (oneDNN 2.6 computes it in nChw16c on AVX-512) -> a 3x3 convolution and
// a 1x1 one (nhwc). The grouped one converts its output straight into the next convolution's
// layout (Kernel::outputIn) instead of into plain and out of it again. (One image and no depthwise
// convolution: with either, every convolution computes in nChw16c, Kernel::favoursBlocked.)
TEST(NativeLayout, AConvolutionWritesItsReadersLayoutWhenItComputesInAnother)
{
    const AttrMap groupedAttrs { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "32" }, { "num_group", "2" } };
    const AttrMap nextAttrs { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "32" } };
    const Shape data({ 1, 32, 28, 28 });
    const NativeLayout computed = test::opKernel("Convolution", groupedAttrs, { data, Shape({ 32, 16, 3, 3 }), Shape({ 32 }) }, KernelKind::Auto)->nativeOutput();
    const NativeLayout read = test::opKernel("Convolution", nextAttrs, { data, Shape({ 32, 32, 3, 3 }), Shape({ 32 }) }, KernelKind::Auto)->nativeInput(0);
    if (computed.plain() || read.plain() || computed.key == read.key)
        GTEST_SKIP() << "oneDNN computes the grouped convolution in the layout the next one reads, or in plain, here";
    Net n;
    n.shapes[0] = data;
    const uint32_t grouped = n.g->addOp("Convolution", "grouped", groupedAttrs,
        { { n.data, 0, 0 }, { n.g->addVariable("grouped_weight"), 0, 0 }, { n.g->addVariable("grouped_bias"), 0, 0 } });
    n.shapes.push_back(Shape({ 32, 16, 3, 3 }));
    n.shapes.push_back(Shape({ 32 }));
    const uint32_t next = n.conv("next", grouped, 32, 3, 1, 32);
    n.g->setHeads({ { n.conv("project", next, 16, 1, 1, 32), 0, 0 } });
    n.g->finalize();
    const Graph& g = *n.g;
    auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Executor fused(n.g, staticFlags(true));
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (!onednn(fused, "grouped") || !onednn(fused, "next")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    EXPECT_TRUE(fused.nativeLayout(outputOf(g, "grouped"))) << "kept in the next convolution's layout";
    EXPECT_TRUE(fused.nativeLayout(outputOf(g, "next")));
    // Other values, the same plan; then the next convolution watched: it sees the grouped
    // convolution's output plain, with the unfused values.
    in[0] = Tensor::uniform(in[0].shape(), -1, 1);
    EXPECT_TRUE(test::tensorsNear(fused.run(in).outputs.at(0), plain.run(in).outputs.at(0), 1e-6f, 1e-5f));
    Watcher all;
    all.nodes = { "grouped", "next" };
    plain.attach(&all);
    plain.run(in);
    Watcher one;
    one.nodes = { "next" };
    fused.attach(&one);
    fused.run(in);
    EXPECT_FALSE(fused.nativeLayout(outputOf(g, "grouped")));
    ASSERT_TRUE(one.seen.count("next"));
    EXPECT_TRUE(test::tensorsNear(one.seen["next"], all.seen["next"], 1e-6f, 1e-5f));
    fused.detach(&one);
    fused.run(in);
    EXPECT_TRUE(fused.nativeLayout(outputOf(g, "grouped"))) << "unwatched: kept again";
}

// ResNet's stem: a convolution of an image's 3 channels -> MaxPool -> a 1x1 convolution. Unwatched,
// the stem's output stays in the layout oneDNN prefers; watched, it is plain (and the kernel runs
// another primitive, oneDNN's direct kernel on plain NCHW, for speed only: this checks values and
// layouts). Either way, and back again, the values are the unfused ones. 32 channels: the direct
// kernel's nChw16c is not the nhwc named, so running it while the output stays native shows.
TEST(NativeLayout, AnImagesConvolutionWatchedOrNotGivesTheSameValues)
{
    Net n;
    // One image (a batch computes in nChw16c throughout, the stem too); the pooling large enough
    // for oneDNN (dnnlPays).
    n.shapes[0] = Shape({ 1, 3, 128, 128 });
    const uint32_t stem = n.conv("stem", n.data, 32, 7, 2, 3);
    const uint32_t pool = n.op("Pooling", "pool", { stem },
        { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "max" } });
    n.g->setHeads({ { n.conv("next", pool, 16, 1, 1, 32), 0, 0 } });
    n.g->finalize();
    const Graph& g = *n.g;
    auto in = n.inputs();
    in[0] = Tensor::uniform(in[0].shape(), -3, 3);
    Executor plain(n.g, staticFlags(false));
    Watcher all;
    all.nodes = { "stem" };
    plain.attach(&all);
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    Executor fused(n.g, staticFlags(true));
    const Tensor unwatched = fused.run(in).outputs.at(0).copy();
    if (!onednn(fused, "stem") || !onednn(fused, "pool") || !onednn(fused, "next"))
        GTEST_SKIP() << "oneDNN runs no convolution or pooling on this machine";
    EXPECT_TRUE(test::tensorsNear(unwatched, expected, 1e-6f, 1e-5f));
    EXPECT_TRUE(fused.nativeLayout(outputOf(g, "stem")));
    for (int round = 0; round < 2; ++round) {
        Watcher one;
        one.nodes = { "stem" };
        fused.attach(&one);
        EXPECT_TRUE(test::tensorsNear(fused.run(in).outputs.at(0), expected, 1e-6f, 1e-5f)) << round;
        fused.detach(&one);
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, "stem"))) << round;
        ASSERT_TRUE(one.seen.count("stem")) << round;
        EXPECT_TRUE(test::tensorsNear(one.seen["stem"], all.seen["stem"], 1e-6f, 1e-5f)) << round;
        EXPECT_TRUE(test::tensorsNear(fused.run(in).outputs.at(0), expected, 1e-6f, 1e-5f)) << round;
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, "stem"))) << round << ": unwatched, kept again";
    }
}

// A MobileNet-style block: stem (24 channels) -> expanding 1x1 (72) -> depthwise 3x3 -> projecting
// 1x1 (24) + the stem's output -> a 1x1 head, each convolution with a clip(0, 6); a last 1x1
// convolution reads the stem's output too, so the projecting one copies its residual (padding
// included) instead of taking its buffer. The depthwise convolution makes every convolution
// compute in nChw16c (Kernel::favoursBlocked), fused or not, which pads 24 channels to 32 and 72
// to 80: the tensors between them stay in that layout, in buffers that large, with the unfused
// values exactly (the same primitives); watched, plain again; and with a NaN in the input (the
// clips then left to run over the stored output, padding included) the same NaNs as unfused.
TEST(NativeLayout, ANetworkWithADepthwiseConvolutionKeepsPaddedBlockedLayouts)
{
    const AttrMap dwAttrs { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "72" }, { "num_group", "72" } };
    const Shape expanded({ 2, 72, 20, 20 });
    const std::unique_ptr<Kernel> alone = test::opKernel("Convolution", dwAttrs, { expanded, Shape({ 72, 1, 3, 3 }), Shape({ 72 }) }, KernelKind::Auto);
    if (!alone->favoursBlocked()) GTEST_SKIP() << "no oneDNN depthwise convolution on this machine";
    alone->computeBlocked(true);
    if (alone->nativeOutput().bytes != 2 * 80 * 20 * 20 * static_cast<int64_t>(sizeof(float)))
        GTEST_SKIP() << "oneDNN computes no depthwise convolution in nChw16c on this machine";
    Net n;
    n.shapes[0] = Shape({ 2, 24, 20, 20 });
    const auto clip = [&n](const std::string& name, uint32_t in) {
        return n.op("clip", name, { in }, { { "a_min", "0" }, { "a_max", "6" } });
    };
    const uint32_t stem = clip("stem_clip", n.conv("stem", n.data, 24, 3, 1, 24));
    const uint32_t expand = clip("expand_clip", n.conv("expand", stem, 72, 1, 1, 24));
    const uint32_t dw = n.g->addOp("Convolution", "dw", dwAttrs,
        { { expand, 0, 0 }, { n.g->addVariable("dw_weight"), 0, 0 }, { n.g->addVariable("dw_bias"), 0, 0 } });
    n.shapes.push_back(Shape({ 72, 1, 3, 3 }));
    n.shapes.push_back(Shape({ 72 }));
    const uint32_t dwClip = clip("dw_clip", dw);
    const uint32_t add = n.op("elemwise_add", "add", { n.conv("project", dwClip, 24, 1, 1, 72), stem });
    const uint32_t head = n.conv("head", add, 16, 1, 1, 24);
    n.g->setHeads({ { head, 0, 0 }, { n.conv("again", stem, 16, 1, 1, 24), 0, 0 } });
    n.g->finalize();
    const Graph& g = *n.g;
    auto in = n.inputs();
    Executor plain(n.g, staticFlags(false));
    Executor fused(n.g, staticFlags(true));
    const auto outputs = [](Executor& e, const std::vector<Tensor>& v) {
        const auto out = e.run(v).outputs;
        return std::pair { out.at(0).copy(), out.at(1).copy() };
    };
    const auto exact = [&](Executor& e, const std::vector<Tensor>& v, const std::string& what) {
        const auto [want0, want1] = outputs(plain, v);
        const auto [got0, got1] = outputs(e, v);
        EXPECT_TRUE(test::tensorsNear(got0, want0, 0.0f, 0.0f)) << what;
        EXPECT_TRUE(test::tensorsNear(got1, want1, 0.0f, 0.0f)) << what;
    };
    exact(fused, in, "first run");
    for (const char* conv : { "stem", "expand", "dw", "project", "head", "again" })
        if (!onednn(fused, conv)) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    // Each clip and the add are fused into the convolution before them.
    const std::pair<const char*, int64_t> padded[] = { { "stem_clip", 32 }, { "expand_clip", 80 }, { "dw_clip", 80 }, { "add", 32 } };
    for (const auto& [node, channels] : padded) {
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, node))) << node;
        EXPECT_EQ(fused.nativeElements(outputOf(g, node)), 2 * channels * 20 * 20) << node;
    }
    EXPECT_EQ(fused.nativeElements(outputOf(g, "head")), 0) << "a graph output is plain";

    Watcher all;
    all.nodes = { "stem_clip", "expand_clip", "dw_clip", "add" };
    plain.attach(&all);
    plain.run(in);
    plain.detach(&all);
    for (const auto& [node, channels] : padded) {
        Watcher one;
        one.nodes = { node };
        fused.attach(&one);
        exact(fused, in, std::string(node) + " watched");
        fused.detach(&one);
        EXPECT_FALSE(fused.nativeLayout(outputOf(g, node))) << node;
        ASSERT_TRUE(one.seen.count(node)) << node;
        EXPECT_TRUE(test::tensorsNear(one.seen[node], all.seen[node], 0.0f, 0.0f)) << node;
        exact(fused, in, std::string(node) + " unwatched again");
        EXPECT_TRUE(fused.nativeLayout(outputOf(g, node))) << node << ": kept again";
    }

    in[0].data()[5 * 400 + 7 * 20 + 9] = std::numeric_limits<float>::quiet_NaN(); // channel 5, (7, 9) of the first image
    ASSERT_TRUE(std::isnan(plain.run(in).outputs.at(0).view().data()[7 * 20 + 9]));
    exact(fused, in, "a NaN in");
    in[0].data()[5 * 400 + 7 * 20 + 9] = 0.25f; // finite again: the clips run inside the convolutions
    exact(fused, in, "finite again");
}

// More than one image: every convolution computes in nChw16c (Kernel::favoursBlocked), where a
// single image's choose their own layout (nhwc for most on AVX-512). A residual stage of 24
// channels shows it in the buffers: padded to 32 channels in the blocked layout, not otherwise.
TEST(NativeLayout, ConvolutionsOfSeveralImagesComputeChannelBlocked)
{
    const AttrMap attrs { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "24" } };
    const auto convAlone = [&](int64_t batch) {
        return test::opKernel("Convolution", attrs, { Shape({ batch, 24, 14, 14 }), Shape({ 24, 24, 3, 3 }), Shape({ 24 }) }, KernelKind::Auto);
    };
    EXPECT_FALSE(convAlone(1)->favoursBlocked());
    const std::unique_ptr<Kernel> two = convAlone(2);
    two->computeBlocked(true);
    if (two->nativeOutput().bytes != 2 * 32 * 14 * 14 * static_cast<int64_t>(sizeof(float)))
        GTEST_SKIP() << "oneDNN computes no convolution in nChw16c on this machine";
    EXPECT_TRUE(two->favoursBlocked());
    const bool oneImageBlocked = convAlone(1)->nativeOutput().bytes == 32 * 14 * 14 * static_cast<int64_t>(sizeof(float));
    for (const int64_t batch : { 1, 2, 3 }) {
        Net n;
        n.shapes[0] = Shape({ batch, 24, 14, 14 });
        const uint32_t r1 = n.op("relu", "relu1", { n.conv("conv1", n.data, 24, 3, 1, 24) });
        const uint32_t add = n.op("elemwise_add", "add", { n.conv("conv2", r1, 24, 3, 1, 24), r1 });
        n.g->setHeads({ { n.conv("head", n.op("relu", "relu2", { add }), 16, 1, 1, 24), 0, 0 } });
        n.g->finalize();
        const auto in = n.inputs();
        Executor plain(n.g, staticFlags(false));
        Executor fused(n.g, staticFlags(true));
        const Tensor expected = plain.run(in).outputs.at(0).copy();
        EXPECT_TRUE(sameSums(fused.run(in).outputs.at(0), expected)) << batch;
        for (const char* node : { "relu1", "relu2" }) {
            ASSERT_TRUE(fused.nativeLayout(outputOf(*n.g, node))) << node << " at batch " << batch;
            const int64_t channels = fused.nativeElements(outputOf(*n.g, node)) / (batch * 14 * 14);
            if (batch == 1 && !oneImageBlocked)
                EXPECT_NE(channels, 32) << node << ": one image, its convolutions' own layout";
            else
                EXPECT_EQ(channels, 32) << node << " at batch " << batch << ": nChw16c, 24 channels padded";
        }
    }
}
