// Buffers shared under static_alloc with fuse (exec/executor_storage.cpp): a tensor whose last
// reader has run lends its buffer to one made later. The values are those of a run where every
// tensor has its own buffer; no kernel reads and writes one buffer; a tensor an observer sees, a
// graph output and a variable never share, also when the observer comes after the first run.

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <set>

using namespace opscope;

namespace {
using test::idOf;
using test::staticFlags;

uint32_t outputOf(const Graph& g, const std::string& node, uint32_t slot = 0) { return g.entryId(idOf(g, node), slot); }

// data -> exp -> negative -> abs -> square -> exp2 -> negative2 (head), plus a split whose second
// half nobody reads: element-wise kernels that fuse into nothing, so every step runs on its own.
struct Chain {
    std::shared_ptr<Graph> g = std::make_shared<Graph>();
    Chain()
    {
        uint32_t x = g->addVariable("data");
        for (const char* op : { "exp", "negative", "abs", "square" })
            x = g->addOp(op, op, {}, { { x, 0, 0 } });
        const uint32_t split = g->addOp("SliceChannel", "split", { { "num_outputs", "2" }, { "axis", "1" } }, { { x, 0, 0 } });
        x = g->addOp("exp", "exp2", {}, { { split, 0, 0 } });
        x = g->addOp("negative", "negative2", {}, { { x, 0, 0 } });
        g->setHeads({ { x, 0, 0 } });
        g->finalize();
    }
    static std::vector<Tensor> inputs(float lo = -1.0f, float hi = 1.0f)
    {
        Generator gen(5);
        return { Tensor::uniform(Shape({ 3, 8, 5 }), lo, hi, &gen) };
    }
};

// Data (2, 16, 12, 12), then the weights and bias of four 3×3 convolutions of 16 channels.
std::vector<Tensor> fourConvolutionInputs(uint64_t seed)
{
    Generator gen(seed);
    std::vector<Tensor> in { Tensor::uniform(Shape({ 2, 16, 12, 12 }), -1, 1, &gen) };
    for (int k = 0; k < 4; ++k) {
        in.push_back(Tensor::uniform(Shape({ 16, 16, 3, 3 }), -0.2f, 0.2f, &gen));
        in.push_back(Tensor::uniform(Shape({ 16 }), -0.1f, 0.1f, &gen));
    }
    return in;
}

// What a kernel reads and what it writes never share a buffer, in any step of the plan.
void expectNoStepReadsItsOwnBuffer(const Executor& e)
{
    const Graph& g = e.graph();
    for (uint32_t id = 0; id < g.size(); ++id) {
        const Node& n = g.node(id);
        if (n.isVariable() || e.fusedInto(id) >= 0) continue;
        std::set<int64_t> written;
        for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k)
            if (e.sharedBuffer(g.entryId(id, k)) >= 0) written.insert(e.sharedBuffer(g.entryId(id, k)));
        for (const NodeEntry& in : n.inputs)
            EXPECT_EQ(written.count(e.sharedBuffer(g.entryId(in))), 0u) << n.name << " reads a buffer it writes";
        std::set<int64_t> distinct;
        for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k) {
            const int64_t b = e.sharedBuffer(g.entryId(id, k));
            if (b >= 0) {
                EXPECT_TRUE(distinct.insert(b).second) << n.name << " writes two outputs into one buffer";
            }
        }
    }
}

// Keeps the view an observer is given (not a copy) and reads it after the run.
struct ViewKeeper : ExecutionObserver {
    std::string node;
    TensorView kept;
    PhaseMask wants(const Graph& g, uint32_t id) override { return g.node(id).name == node ? PhaseMask::After : PhaseMask::None; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        kept = ev.outputs[0];
        return ObserverAction::Continue;
    }
};
}

TEST(SharedBuffers, DeadTensorsLendTheirBuffersWithTheSameValues)
{
    const Chain c;
    const Graph& g = *c.g;
    Executor own(c.g, staticFlags(false));
    Executor shared(c.g, staticFlags(true));
    const auto in = Chain::inputs();
    const Tensor expected = own.run(in).outputs.at(0).copy();
    const Tensor got = shared.run(in).outputs.at(0).copy();
    EXPECT_TRUE(test::tensorsNear(got, expected, 0.0f, 0.0f)) << "the same kernels in the same order: bit-identical";

    // exp's output dies when negative has read it, so abs (made after) may take its buffer;
    // negative's output lives while abs runs, so abs's own output takes another.
    const int64_t expBuf = shared.sharedBuffer(outputOf(g, "exp"));
    ASSERT_GE(expBuf, 0);
    EXPECT_NE(shared.sharedBuffer(outputOf(g, "negative")), expBuf);
    EXPECT_EQ(shared.sharedBuffer(outputOf(g, "abs")), expBuf);
    EXPECT_NE(shared.sharedBuffer(outputOf(g, "square")), shared.sharedBuffer(outputOf(g, "abs")));
    // The split's unread half is written with its other half: never in one buffer.
    EXPECT_NE(shared.sharedBuffer(outputOf(g, "split", 1)), shared.sharedBuffer(outputOf(g, "split", 0)));
    EXPECT_EQ(shared.sharedBuffer(outputOf(g, "negative2")), -1) << "a graph output is the caller's";
    EXPECT_EQ(shared.sharedBuffer(outputOf(g, "data")), -1) << "a variable is the caller's";
    for (const char* node : { "exp", "abs", "exp2" })
        EXPECT_EQ(own.sharedBuffer(outputOf(g, node)), -1) << "without fuse every tensor has its own buffer";
    int64_t separate = 0;
    for (const char* node : { "exp", "negative", "abs", "square", "exp2" })
        separate += static_cast<int64_t>(shared.entryShapes()[outputOf(g, node)].size() * sizeof(float));
    separate += 2 * static_cast<int64_t>(shared.entryShapes()[outputOf(g, "split")].size() * sizeof(float));
    EXPECT_GT(shared.sharedBufferBytes(), 0);
    EXPECT_LT(shared.sharedBufferBytes(), separate);
    EXPECT_EQ(own.sharedBufferBytes(), 0);
    expectNoStepReadsItsOwnBuffer(shared);

    // Again, other values, the same plan and buffers.
    const auto other = Chain::inputs(-3.0f, 0.5f);
    const uint64_t plans = shared.planGeneration();
    EXPECT_TRUE(test::tensorsNear(shared.run(other).outputs.at(0), own.run(other).outputs.at(0), 0.0f, 0.0f));
    EXPECT_EQ(shared.planGeneration(), plans);
}

TEST(SharedBuffers, ATensorAnObserverSeesKeepsItsBufferEvenWhenWatchedAfterTheFirstRun)
{
    const Chain c;
    const Graph& g = *c.g;
    const auto in = Chain::inputs();
    Executor own(c.g, staticFlags(false));
    test::OutputWatcher reference;
    reference.nodes = { "abs" };
    own.attach(&reference);
    own.run(in);
    const Tensor absValues = reference.seen.at("abs");

    Executor shared(c.g, staticFlags(true));
    shared.run(in);
    ASSERT_GE(shared.sharedBuffer(outputOf(g, "abs")), 0);
    // An observer that keeps the view it was given reads it after the run: abs's output and its input
    // (negative's) now have buffers of their own, which nothing later overwrites.
    ViewKeeper keeper;
    keeper.node = "abs";
    shared.attach(&keeper);
    const uint64_t plans = shared.planGeneration();
    shared.run(in);
    EXPECT_EQ(shared.sharedBuffer(outputOf(g, "abs")), -1);
    EXPECT_EQ(shared.sharedBuffer(outputOf(g, "negative")), -1) << "a watched node's input is seen too";
    EXPECT_GE(shared.sharedBuffer(outputOf(g, "square")), 0) << "the others still share";
    ASSERT_EQ(keeper.kept.shape(), absValues.shape());
    EXPECT_TRUE(test::tensorsNear(Tensor::copyOf(keeper.kept), absValues, 0.0f, 0.0f)) << "read after the run";
    EXPECT_EQ(shared.planGeneration(), plans) << "only the buffers are made again, not the kernels";
    expectNoStepReadsItsOwnBuffer(shared);

    // Unwatched again: the buffers stay as they are until the next plan, and the values hold.
    shared.detach(&keeper);
    EXPECT_TRUE(test::tensorsNear(shared.run(in).outputs.at(0), own.run(in).outputs.at(0), 0.0f, 0.0f));
}

TEST(SharedBuffers, ConvolutionsWithFusedResidualsShareWithTheSameValues)
{
    // conv1 -> relu1 -> conv2 -> add(conv2, relu1) -> relu2 -> conv3 -> relu3 -> conv4 (head): the residual
    // (relu1) is read by the fused add at conv2's step, so it lives until then.
    test::GraphBuilder b;
    const uint32_t r1 = b.op("relu", "relu1", b.conv("conv1", b.data));
    const uint32_t add = b.g->addOp("elemwise_add", "add", {}, { { b.conv("conv2", r1), 0, 0 }, { r1, 0, 0 } });
    const uint32_t r3 = b.op("relu", "relu3", b.conv("conv3", b.op("relu", "relu2", add)));
    b.g->setHeads({ { b.conv("conv4", r3), 0, 0 } });
    b.g->finalize();
    const Graph& g = *b.g;
    std::vector<Tensor> in = fourConvolutionInputs(9);
    Executor own(b.g, staticFlags(false));
    Executor shared(b.g, staticFlags(true));
    const Tensor expected = own.run(in).outputs.at(0).copy();
    EXPECT_TRUE(test::tensorsNear(shared.run(in).outputs.at(0), expected, 1e-6f, 1e-5f));
    expectNoStepReadsItsOwnBuffer(shared);
    // Whatever ran fused, the residual relu1 is read at conv2's step (fused add or not), so the
    // tensor conv2's step writes never takes its buffer.
    const uint32_t conv2Writes = shared.fusedWith(idOf(g, "conv2")).empty() ? outputOf(g, "conv2")
                                                                              : g.entryId(shared.fusedWith(idOf(g, "conv2")).back(), 0);
    if (shared.sharedBuffer(outputOf(g, "relu1")) >= 0) {
        EXPECT_NE(shared.sharedBuffer(conv2Writes), shared.sharedBuffer(outputOf(g, "relu1")));
    }
    EXPECT_GT(shared.sharedBufferBytes(), 0);
}

TEST(SharedBuffers, AResidualReadLastByItsConvolutionHandsItsBufferToTheOutput)
{
    // conv1 -> relu1 -> conv2 -> relu2 -> conv3 -> add(conv3, relu1) -> relu3 -> conv4 (head): the
    // residual relu1 is read by conv2 (its input) and last by conv3's fused add, only as the
    // residual. Kept in the convolutions' layout, it is copied whole into conv3's output before
    // conv3 writes it, so the output takes its buffer and the add happens in place.
    test::GraphBuilder b;
    const uint32_t r1 = b.op("relu", "relu1", b.conv("conv1", b.data));
    const uint32_t c3 = b.conv("conv3", b.op("relu", "relu2", b.conv("conv2", r1)));
    const uint32_t add = b.g->addOp("elemwise_add", "add", {}, { { c3, 0, 0 }, { r1, 0, 0 } });
    b.g->setHeads({ { b.conv("conv4", b.op("relu", "relu3", add)), 0, 0 } });
    b.g->finalize();
    const Graph& g = *b.g;
    std::vector<Tensor> in = fourConvolutionInputs(11);
    Executor own(b.g, staticFlags(false));
    Executor shared(b.g, staticFlags(true));
    const Tensor expected = own.run(in).outputs.at(0).copy();
    EXPECT_TRUE(test::tensorsNear(shared.run(in).outputs.at(0), expected, 1e-6f, 1e-5f));
    const std::vector<uint32_t> fused = shared.fusedWith(idOf(g, "conv3"));
    const uint32_t relu1 = outputOf(g, "relu1");
    if (fused.empty() || !shared.nativeLayout(relu1)) GTEST_SKIP() << "conv3 takes no residual in oneDNN's layout here";
    const uint32_t conv3Writes = g.entryId(fused.back(), 0);
    ASSERT_TRUE(shared.nativeLayout(conv3Writes));
    EXPECT_GE(shared.sharedBuffer(relu1), 0);
    EXPECT_EQ(shared.sharedBuffer(conv3Writes), shared.sharedBuffer(relu1));
    // Again with other values and weights: the same plan and buffers, the values of the unshared run.
    Generator gen(12);
    for (Tensor& t : in)
        t = Tensor::uniform(t.shape(), -0.5f, 0.5f, &gen);
    const uint64_t plans = shared.planGeneration();
    EXPECT_TRUE(test::tensorsNear(shared.run(in).outputs.at(0), own.run(in).outputs.at(0).copy(), 1e-6f, 1e-5f));
    EXPECT_EQ(shared.planGeneration(), plans);
}
