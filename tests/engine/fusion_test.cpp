// The executor's fusion (ExecFlags::fuse): a relu nobody watches runs inside the convolution that
// alone feeds it, with the same values; a node an observer wants is never fused away, and the plan
// follows observers that come and go (made again once, not per run).

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <map>

using namespace opscope;

namespace {
// data -> conv1 -> relu1 -> conv2 -> relu2 (head); conv2's output is also a head when `branch`.
std::shared_ptr<Graph> convNet(bool branch = false)
{
    test::GraphBuilder b;
    const uint32_t c1 = b.conv("conv1", b.data);
    const uint32_t r1 = b.op("Activation", "relu1", c1, { { "act_type", "relu" } });
    const uint32_t c2 = b.conv("conv2", r1);
    const uint32_t r2 = b.op("relu", "relu2", c2);
    if (branch)
        b.g->setHeads({ { r2, 0, 0 }, { c2, 0, 0 } });
    else
        b.g->setHeads({ { r2, 0, 0 } });
    b.g->finalize();
    return b.g;
}

// A residual block: data -> conv1 -> relu1 -> conv2 -> add(conv2, relu1) -> relu3, and beside it
// add(convA(data), convB(data)) -> relu4 (both operands convolutions: the later takes the sum).
std::shared_ptr<Graph> residualNet()
{
    test::GraphBuilder b;
    const uint32_t r1 = b.op("Activation", "relu1", b.conv("conv1", b.data), { { "act_type", "relu" } });
    const uint32_t a = b.g->addOp("elemwise_add", "add", {}, { { b.conv("conv2", r1), 0, 0 }, { r1, 0, 0 } });
    const uint32_t r3 = b.op("relu", "relu3", a);
    const uint32_t ca = b.conv("convA", b.data);
    const uint32_t cb = b.conv("convB", b.data);
    const uint32_t a2 = b.g->addOp("broadcast_add", "add2", {}, { { ca, 0, 0 }, { cb, 0, 0 } });
    b.g->setHeads({ { r3, 0, 0 }, { a2, 0, 0 } });
    b.g->finalize();
    return b.g;
}

std::vector<Tensor> inputsFor(const Graph& g)
{
    Generator gen(7);
    std::vector<Tensor> v;
    for (uint32_t id : g.variables()) {
        const std::string& n = g.node(id).name;
        const Shape s = n == "data"   ? Shape({ 2, 16, 12, 12 })
            : n.ends_with("_weight") ? Shape({ 16, 16, 3, 3 })
                                     : Shape({ 16 });
        v.push_back(Tensor::uniform(s, -1, 1, &gen));
    }
    return v;
}

using test::idOf;
using test::staticFlags;
using Watcher = test::OutputWatcher;

bool onednnConvolution(const Executor& e)
{
    return e.kernelBackends()[idOf(e.graph(), "conv1")] == "dnnl";
}
}

TEST(Fusion, AReluNobodyWatchesRunsInsideItsConvolutionWithTheSameValues)
{
    const auto g = convNet();
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (!onednnConvolution(fused)) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), idOf(*g, "conv1"));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu2")), idOf(*g, "conv2"));
    EXPECT_EQ(fused.fusedWith(idOf(*g, "conv1")), std::vector<uint32_t> { idOf(*g, "relu1") });
    EXPECT_EQ(plain.fusedInto(idOf(*g, "relu1")), -1) << "fuse=false";
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    // Without static_alloc nothing is fused (outputs are allocated per run).
    ExecFlags dynamic;
    Executor eager(g, dynamic);
    EXPECT_TRUE(test::tensorsNear(eager.run(in).outputs.at(0), expected, 1e-6f, 1e-5f));
    EXPECT_EQ(eager.fusedInto(idOf(*g, "relu1")), -1);
    // The profile shows the fused group as one step.
    RunProfile p;
    fused.setProfile(&p);
    fused.run(in);
    std::vector<std::string> steps;
    for (const StepTiming& s : p.steps)
        steps.push_back(g->node(s.node).name);
    EXPECT_EQ(steps, (std::vector<std::string> { "conv1", "conv2" }));
}

TEST(Fusion, AWatchedNodeIsNeverFusedAwayAndSeesExactlyTheUnfusedValues)
{
    const auto g = convNet();
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Watcher all;
    all.nodes = { "conv1", "relu1", "conv2", "relu2" };
    plain.attach(&all);
    plain.run(in);

    Executor fused(g, staticFlags(true));
    fused.run(in);
    if (!onednnConvolution(fused)) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    const uint64_t plans = fused.planGeneration();
    // Watching conv1's output: conv1 and relu1 run apart, conv2+relu2 stay fused.
    Watcher some;
    some.nodes = { "conv1" };
    fused.attach(&some);
    fused.run(in);
    EXPECT_EQ(fused.planGeneration(), plans + 1) << "the plan is made again once";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), -1);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu2")), idOf(*g, "conv2"));
    ASSERT_TRUE(some.seen.count("conv1"));
    EXPECT_TRUE(test::tensorsNear(some.seen["conv1"], all.seen["conv1"], 1e-6f, 1e-5f));
    fused.run(in);
    EXPECT_EQ(fused.planGeneration(), plans + 1) << "not again while the watch stays";

    // Watching relu2 too (the fused node's consumer side).
    some.nodes = { "conv1", "relu2" };
    fused.refreshWants();
    const Tensor out = fused.run(in).outputs.at(0).copy();
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu2")), -1);
    EXPECT_TRUE(test::tensorsNear(some.seen["relu2"], all.seen["relu2"], 1e-6f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(out, all.seen["relu2"], 1e-6f, 1e-5f));

    // The watcher leaves: everything fused again, once.
    fused.detach(&some);
    const uint64_t before = fused.planGeneration();
    fused.run(in);
    EXPECT_EQ(fused.planGeneration(), before + 1);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), idOf(*g, "conv1"));
    fused.run(in);
    EXPECT_EQ(fused.planGeneration(), before + 1);
}

TEST(Fusion, AConvolutionWhoseOutputIsReadElsewhereIsNotFused)
{
    const auto g = convNet(true);
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const RunResult a = plain.run(in);
    const RunResult b = fused.run(in);
    if (!onednnConvolution(fused)) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), idOf(*g, "conv1"));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu2")), -1) << "conv2's output is also a head";
    ASSERT_EQ(b.outputs.size(), 2u);
    EXPECT_TRUE(test::tensorsNear(b.outputs[0], a.outputs[0], 1e-6f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(b.outputs[1], a.outputs[1], 1e-6f, 1e-5f));
}

TEST(Fusion, ReferenceKernelsTakeNoPostOpAndRunUnfused)
{
    const auto g = convNet();
    Executor ref(g, staticFlags(true), KernelKind::Reference);
    Executor plain(g, staticFlags(false), KernelKind::Reference);
    const auto in = inputsFor(*g);
    EXPECT_TRUE(test::tensorsNear(ref.run(in).outputs.at(0), plain.run(in).outputs.at(0), 0, 0));
    EXPECT_EQ(ref.fusedInto(idOf(*g, "relu1")), -1);
    const uint64_t plans = ref.planGeneration();
    ref.run(in);
    ref.refreshWants();
    ref.run(in);
    EXPECT_EQ(ref.planGeneration(), plans) << "a refused fusion is not retried run after run";
}

TEST(Fusion, AResidualAddAndItsReluRunInsideTheLaterConvolution)
{
    const auto g = residualNet();
    const auto in = inputsFor(*g);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const RunResult a = plain.run(in);
    const RunResult b = fused.run(in);
    if (!onednnConvolution(fused)) GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), idOf(*g, "conv1"));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "add")), idOf(*g, "conv2"));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu3")), idOf(*g, "conv2"));
    EXPECT_EQ(fused.fusedWith(idOf(*g, "conv2")), (std::vector<uint32_t> { idOf(*g, "add"), idOf(*g, "relu3") }));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "add2")), idOf(*g, "convB")) << "convA's output is ready when convB runs";
    ASSERT_EQ(b.outputs.size(), 2u);
    EXPECT_TRUE(test::tensorsNear(b.outputs[0], a.outputs[0], 1e-6f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(b.outputs[1], a.outputs[1], 1e-6f, 1e-5f));
    // Run again (buffers reused: the residual is put in place each run).
    const RunResult c = fused.run(in);
    EXPECT_TRUE(test::tensorsNear(c.outputs[0], a.outputs[0], 1e-6f, 1e-5f));

    // Watching the add keeps conv2, add and relu3 apart; conv1+relu1 and convB+add2 stay fused.
    Watcher w;
    w.nodes = { "add" };
    fused.attach(&w);
    const RunResult d = fused.run(in);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "add")), -1);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu3")), -1);
    EXPECT_EQ(fused.fusedInto(idOf(*g, "relu1")), idOf(*g, "conv1"));
    EXPECT_EQ(fused.fusedInto(idOf(*g, "add2")), idOf(*g, "convB"));
    EXPECT_TRUE(test::tensorsNear(d.outputs[0], a.outputs[0], 1e-6f, 1e-5f));
}
