// The executor's run profile: every op timed in order, observers apart from kernels, planning
// only when the run planned, a stopped run profiled up to its stop; and opFlops by hand.

#include "common/exec_graphs.h"
#include "exec/executor.h"
#include "exec/op_flops.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

using namespace opscope;

namespace {

// Wants `mask` of every node; spends a measurable while in each call; stops at `stopAt`.
struct SlowObserver : ExecutionObserver {
    PhaseMask mask = PhaseMask::Both;
    std::string stopAt;
    PhaseMask wants(const Graph&, uint32_t) override { return mask; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        return ev.node.name == stopAt && ev.phase == OpPhase::After ? ObserverAction::Stop : ObserverAction::Continue;
    }
};

AttrMap onnx(AttrMap extra, int inputs)
{
    extra["__domain__"] = "ai.onnx";
    extra["__opset__"] = "13";
    extra["__ninputs__"] = std::to_string(inputs);
    return extra;
}

std::vector<std::string> names(const Graph& g, const RunProfile& p)
{
    std::vector<std::string> out;
    for (const StepTiming& s : p.steps)
        out.push_back(g.node(s.node).name);
    return out;
}
}

TEST(RunProfile, EveryOpTimedInOrderAndPlanningOnlyWhenItPlans)
{
    for (const bool staticAlloc : { false, true }) {
        SCOPED_TRACE(staticAlloc ? "static_alloc" : "dynamic");
        ExecFlags flags;
        flags.static_alloc = staticAlloc;
        Executor exec(test::mlpGraph(), flags);
        RunProfile p;
        exec.setProfile(&p);
        ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
        EXPECT_EQ(names(exec.graph(), p), (std::vector<std::string> { "fc1", "relu1", "fc2" }));
        EXPECT_GT(p.planNs, 0);
        EXPECT_EQ(p.thread, currentThreadNumber());
        int64_t last = p.begin;
        for (const StepTiming& s : p.steps) {
            EXPECT_TRUE(s.firstCall);
            EXPECT_EQ(s.observerNs(), 0) << "no observer is attached";
            EXPECT_LE(last, s.kernelBegin); // steps follow each other inside the run
            EXPECT_LE(s.kernelBegin, s.kernelEnd);
            last = s.kernelEnd;
        }
        EXPECT_LE(last, p.end);

        ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
        EXPECT_EQ(p.planNs, 0) << "the second run reuses the plan";
        ASSERT_EQ(p.steps.size(), 3u) << "each run starts a new profile";
        for (const StepTiming& s : p.steps)
            EXPECT_FALSE(s.firstCall);
        ASSERT_EQ(exec.run(test::mlpInputs(3)).status, RunStatus::Completed);
        EXPECT_GT(p.planNs, 0) << "a new batch size plans again";

        exec.setProfile(nullptr);
        const RunProfile before = p;
        ASSERT_EQ(exec.run(test::mlpInputs(3)).status, RunStatus::Completed);
        EXPECT_EQ(p.begin, before.begin) << "no profile is written once it is removed";
    }
}

TEST(RunProfile, ObserversAreTimedApartFromKernelsAndAStopEndsTheProfile)
{
    Executor exec(test::mlpGraph(), ExecFlags { true, true });
    RunProfile p;
    exec.setProfile(&p);
    SlowObserver obs;
    obs.mask = PhaseMask::After;
    exec.attach(&obs);
    ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
    ASSERT_EQ(p.steps.size(), 3u);
    for (const StepTiming& s : p.steps) {
        EXPECT_EQ(s.beforeEnd, s.beforeBegin) << "nothing wants the Before phase";
        EXPECT_GE(s.afterEnd - s.afterBegin, 200'000) << "the observer sleeps 200 us after each op";
        EXPECT_EQ(s.afterBegin, s.kernelEnd);
    }
    obs.mask = PhaseMask::Both;
    obs.stopAt = "relu1";
    exec.refreshWants();
    ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Stopped);
    EXPECT_EQ(names(exec.graph(), p), (std::vector<std::string> { "fc1", "relu1" }));
    for (const StepTiming& s : p.steps) {
        EXPECT_GE(s.beforeEnd - s.beforeBegin, 200'000);
        EXPECT_EQ(s.kernelBegin, s.beforeEnd);
    }
    EXPECT_GE(p.end, p.steps.back().afterEnd);
}

TEST(OpFlops, CountsMultiplyAddsOfProductsFromShapes)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t w = g.addVariable("w");
    // 2x3x8x8 through 4 filters of 3x3x3: 2*4*6*6 outputs, each 27 multiply-adds.
    const uint32_t conv = g.addOp("Convolution", "conv",
        { { "kernel", "(3, 3)" }, { "num_filter", "4" }, { "no_bias", "True" } }, { { x, 0, 0 }, { w, 0, 0 } });
    // Grouped: 4 -> 6 channels in 2 groups, 1x1: each output sums 2 inputs.
    const uint32_t wg = g.addVariable("wg");
    const uint32_t grouped = g.addOp("Convolution", "grouped",
        { { "kernel", "(1, 1)" }, { "num_filter", "6" }, { "num_group", "2" }, { "no_bias", "True" } },
        { { conv, 0, 0 }, { wg, 0, 0 } });
    const uint32_t relu = g.addOp("Activation", "relu", { { "act_type", "relu" } }, { { grouped, 0, 0 } });
    const uint32_t wf = g.addVariable("wf");
    // 2 x 216 inputs to 5 units.
    const uint32_t fc
        = g.addOp("FullyConnected", "fc", { { "num_hidden", "5" }, { "no_bias", "True" } }, { { relu, 0, 0 }, { wf, 0, 0 } });
    const uint32_t wd = g.addVariable("wd");
    // ONNX ConvTranspose: 2x6x6x6 scattered through 3x3 filters to 2 channels: each input element
    // 2*9 multiply-adds.
    const uint32_t deconv = g.addOp("ConvTranspose", "deconv", onnx({}, 2), { { grouped, 0, 0 }, { wd, 0, 0 } });
    // ONNX Gemm with A transposed: A^T [3x7] x B [7x4]: 3*4 outputs, 7 multiply-adds each; MatMul
    // [2x3x7] x [7x4]: 2*3*4 outputs, 7 each.
    const uint32_t ga = g.addVariable("ga");
    const uint32_t gb = g.addVariable("gb");
    const uint32_t gemm = g.addOp("Gemm", "gemm", onnx({ { "transA", "1" } }, 2), { { ga, 0, 0 }, { gb, 0, 0 } });
    const uint32_t ma = g.addVariable("ma");
    const uint32_t matmul = g.addOp("MatMul", "matmul", onnx({}, 2), { { ma, 0, 0 }, { gb, 0, 0 } });
    const uint32_t bt = g.addVariable("bt");
    // 2 batches of (5x3)^T x (5x3): 2*3*3 outputs, 5 multiply-adds each.
    const uint32_t bdot = g.addOp("batch_dot", "bdot", { { "transpose_a", "True" } }, { { bt, 0, 0 }, { bt, 0, 0 } });
    g.setHeads({ { fc, 0, 0 }, { deconv, 0, 0 }, { bdot, 0, 0 }, { gemm, 0, 0 }, { matmul, 0, 0 } });
    g.finalize();
    auto idOf = [&](const std::string& name) {
        for (uint32_t i = 0; i < g.size(); ++i)
            if (g.node(i).name == name) return i;
        ADD_FAILURE() << name;
        return 0u;
    };
    std::vector<Shape> varShapes;
    for (uint32_t v : g.variables()) {
        const std::string& n = g.node(v).name;
        const std::map<std::string, Shape> given { { "x", Shape({ 2, 3, 8, 8 }) }, { "w", Shape({ 4, 3, 3, 3 }) },
            { "wg", Shape({ 6, 2, 1, 1 }) }, { "wf", Shape({ 5, 216 }) }, { "wd", Shape({ 6, 2, 3, 3 }) },
            { "bt", Shape({ 2, 5, 3 }) }, { "ga", Shape({ 7, 3 }) }, { "gb", Shape({ 7, 4 }) },
            { "ma", Shape({ 2, 3, 7 }) } };
        varShapes.push_back(given.at(n));
    }
    const std::vector<Shape> shapes = g.inferShapes(varShapes);
    EXPECT_EQ(opFlops(g, idOf("conv"), shapes), 2 * (2 * 4 * 6 * 6) * 27);
    EXPECT_EQ(opFlops(g, idOf("grouped"), shapes), 2 * (2 * 6 * 6 * 6) * 2);
    EXPECT_EQ(opFlops(g, idOf("fc"), shapes), 2 * (2 * 5) * 216);
    EXPECT_EQ(opFlops(g, idOf("deconv"), shapes), 2 * (2 * 6 * 6 * 6) * (2 * 9));
    EXPECT_EQ(opFlops(g, idOf("bdot"), shapes), 2 * (2 * 3 * 3) * 5);
    EXPECT_EQ(opFlops(g, idOf("gemm"), shapes), 2 * (3 * 4) * 7);
    EXPECT_EQ(opFlops(g, idOf("matmul"), shapes), 2 * (2 * 3 * 4) * 7);
    EXPECT_EQ(opFlops(g, idOf("relu"), shapes), -1) << "no products, no count";
    EXPECT_EQ(opFlops(g, idOf("x"), shapes), -1) << "a variable computes nothing";
}
