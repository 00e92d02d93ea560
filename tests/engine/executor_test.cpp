#include "common/tensor_match.h"
#include "core/error.h"
#include "common/exec_graphs.h"
#include "common/executor_modes.h"
#include "exec/executor.h"
#include "exec/invoke.h"
#include "tensor/allocator.h"
#include "tensor/memory_limit.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <memory>

using namespace opscope;

namespace {
// x -> (relu, *2) repeated `n` times.
std::shared_ptr<Graph> chain(int n)
{
    auto g = std::make_shared<Graph>();
    uint32_t prev = g->addVariable("x");
    for (int i = 0; i < n; ++i) {
        const uint32_t a
            = g->addOp("Activation", "act" + std::to_string(i), { { "act_type", "relu" } }, { { prev, 0, 0 } });
        prev = g->addOp("_mul_scalar", "scale" + std::to_string(i), { { "scalar", "2" } }, { { a, 0, 0 } });
    }
    g->setHeads({ { prev, 0, 0 } });
    g->finalize();
    return g;
}
}

TEST_P(ExecutorModes, MatchesEagerCallsOnEveryRun)
{
    Executor exec(test::mlpGraph(), flags());
    for (int run = 0; run < 3; ++run) {
        const auto inputs = test::mlpInputs(3);
        RunResult r = exec.run(inputs);
        ASSERT_EQ(r.status, RunStatus::Completed);
        ASSERT_EQ(r.outputs.size(), 1u);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(inputs)));
    }
}

TEST_P(ExecutorModes, ObserverSeesEveryOpInOrderWithValues)
{
    Executor exec(test::mlpGraph(), flags());
    test::Recorder rec;
    exec.attach(&rec);
    const auto inputs = test::mlpInputs(2);
    RunResult r = exec.run(inputs);
    ASSERT_EQ(r.status, RunStatus::Completed);
    EXPECT_EQ(rec.events, (std::vector<std::string> { "fc1:before:3:0", "fc1:after:3:1", "relu1:before:1:0",
                              "relu1:after:1:1", "fc2:before:3:0", "fc2:after:3:1" }));
    ASSERT_EQ(rec.copies.size(), 3u);
    EXPECT_TRUE(test::tensorsNear(rec.copies[2], r.outputs[0]));
    Tensor fc1 = invokeOp("FullyConnected", { { "num_hidden", "8" } }, { inputs[0], inputs[1], inputs[2] })[0];
    EXPECT_TRUE(test::tensorsNear(rec.copies[0], fc1));
}

TEST_P(ExecutorModes, ObserverStopEndsTheRunWithAStatus)
{
    Executor exec(test::mlpGraph(), flags());
    test::Recorder rec;
    rec.stopAt = "relu1";
    rec.mask = PhaseMask::After;
    exec.attach(&rec);
    RunResult r = exec.run(test::mlpInputs(2));
    EXPECT_EQ(r.status, RunStatus::Stopped);
    EXPECT_EQ(exec.graph().node(r.stoppedAt).name, "relu1");
    EXPECT_EQ(r.stoppedPhase, OpPhase::After);
    EXPECT_TRUE(r.outputs.empty());
    EXPECT_EQ(rec.events, (std::vector<std::string> { "fc1:after:3:1", "relu1:after:1:1" }));
    // The executor is usable again after a stop.
    rec.stopAt.clear();
    EXPECT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
}

TEST_P(ExecutorModes, ObserverWantingNothingIsNeverCalled)
{
    Executor exec(test::mlpGraph(), flags());
    test::Recorder rec;
    rec.mask = PhaseMask::None;
    exec.attach(&rec);
    exec.run(test::mlpInputs(2));
    EXPECT_TRUE(rec.events.empty());
    rec.mask = PhaseMask::Before;
    exec.refreshWants();
    exec.run(test::mlpInputs(2));
    EXPECT_EQ(rec.events.size(), 3u);
    exec.detach(&rec);
    exec.run(test::mlpInputs(2));
    EXPECT_EQ(rec.events.size(), 3u);
}

// A run that nobody watches (under static_alloc, the kernels alone, without the step loop's checks)
// still counts as each kernel's call: an observer attached afterwards sees no first call until the
// executor plans again. Unfused, so that watching every node keeps the plan.
TEST_P(ExecutorModes, AKernelThatRanUnwatchedIsNoLongerOnItsFirstCall)
{
    struct FirstCalls : ExecutionObserver {
        std::vector<std::string> first, later;
        PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::Both; }
        ObserverAction onOp(const OpEvent& ev) override
        {
            (ev.firstCall ? first : later).push_back(ev.node.name + (ev.phase == OpPhase::Before ? ":before" : ":after"));
            return ObserverAction::Continue;
        }
    };
    ExecFlags unfused = flags();
    unfused.fuse = false;
    Executor exec(test::mlpGraph(), unfused);
    const auto inputs = test::mlpInputs(2);
    const RunResult unwatched = exec.run(inputs);
    ASSERT_EQ(unwatched.status, RunStatus::Completed);
    EXPECT_TRUE(test::tensorsNear(unwatched.outputs[0], test::mlpEager(inputs)));
    FirstCalls rec;
    exec.attach(&rec);
    ASSERT_EQ(exec.run(inputs).status, RunStatus::Completed);
    EXPECT_TRUE(rec.first.empty()) << rec.first.front();
    EXPECT_EQ(rec.later.size(), 6u);
    if (GetParam() == 2) return; // static_shape: no other batch
    // Another batch plans again: every kernel is new, watched or not.
    exec.detach(&rec);
    exec.run(test::mlpInputs(3));
    exec.attach(&rec);
    rec.later.clear();
    ASSERT_EQ(exec.run(test::mlpInputs(3)).status, RunStatus::Completed);
    EXPECT_TRUE(rec.first.empty());
    EXPECT_EQ(rec.later.size(), 6u);
    // Watched from the plan on, each kernel's first call is seen as one.
    ASSERT_EQ(exec.run(test::mlpInputs(4)).status, RunStatus::Completed);
    EXPECT_EQ(rec.first, (std::vector<std::string> { "fc1:before", "fc1:after", "relu1:before", "relu1:after",
                             "fc2:before", "fc2:after" }));
}

// Watches nothing; once armed, its next wants() throws (the executor asks while it plans).
struct ThrowingOnce : ExecutionObserver {
    bool armed = false;
    PhaseMask wants(const Graph&, uint32_t) override
    {
        if (armed) {
            armed = false;
            throw UsageError("wants() failed");
        }
        return PhaseMask::None;
    }
    ObserverAction onOp(const OpEvent&) override { return ObserverAction::Continue; }
};

// A plan that throws on the way (here an observer's wants(), while the executor lists who watches
// what) is made again at the next run, even with the same variables: nothing of the plan it
// replaced, nor of the half-made one, runs.
TEST_P(ExecutorModes, APlanThatThrewOnTheWayIsMadeAgainAtTheNextRun)
{
    if (GetParam() == 2) GTEST_SKIP() << "static_shape: no other batch to plan for";
    Executor exec(test::mlpGraph(), flags());
    ThrowingOnce obs;
    exec.attach(&obs);
    const auto two = test::mlpInputs(2), three = test::mlpInputs(3);
    EXPECT_TRUE(test::tensorsNear(exec.run(two).outputs[0], test::mlpEager(two)));
    obs.armed = true;
    EXPECT_THROW(exec.run(three), UsageError);
    for (int run = 0; run < 2; ++run) {
        const RunResult r = exec.run(three);
        ASSERT_EQ(r.status, RunStatus::Completed);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(three))) << "run " << run;
    }
    EXPECT_TRUE(test::tensorsNear(exec.run(two).outputs[0], test::mlpEager(two)));
}

// A static_shape executor stays prepared for the shapes of its first run, even after a plan for
// them threw on the way (here an observer's wants(), when a precision change plans again; the
// executor had taken the shapes by then): another batch is still refused, not planned for, and
// the first one runs.
TEST_P(ExecutorModes, AStaticShapeExecutorKeepsItsShapesAfterAPlanThatThrew)
{
    if (GetParam() != 2) GTEST_SKIP() << "static_shape only";
    Executor exec(test::mlpGraph(), flags());
    ThrowingOnce obs;
    exec.attach(&obs);
    const auto two = test::mlpInputs(2), three = test::mlpInputs(3);
    ASSERT_EQ(exec.run(two).status, RunStatus::Completed);
    exec.setPrecision({});
    obs.armed = true;
    EXPECT_THROW(exec.run(two), UsageError);
    try {
        exec.run(three);
        ADD_FAILURE() << "another batch ran";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("static_shape executor was prepared for (2, 5)"), std::string::npos) << e.what();
    }
    const RunResult r = exec.run(two);
    ASSERT_EQ(r.status, RunStatus::Completed);
    EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(two)));
}

// Under static_alloc the executor holds the last run's variables and skips those given again: a
// variable written in place, another tensor, and another start in the same storage must each be
// read at the run that gives them, by the kernels and by an observer.
TEST_P(ExecutorModes, VariablesGivenAgainWrittenOrMovedAreReadAtEachRun)
{
    Executor exec(test::mlpGraph(), flags());
    struct FirstInput : ExecutionObserver {
        std::vector<Tensor> seen; // fc1's data input, before it runs
        PhaseMask wants(const Graph& g, uint32_t id) override
        {
            return g.node(id).name == "fc1" ? PhaseMask::Before : PhaseMask::None;
        }
        ObserverAction onOp(const OpEvent& ev) override
        {
            seen.push_back(Tensor::copyOf(ev.inputs[0]));
            return ObserverAction::Continue;
        }
    } observer;
    exec.attach(&observer);
    std::vector<Tensor> inputs = test::mlpInputs(2);
    const auto check = [&](const char* what) {
        SCOPED_TRACE(what);
        const RunResult r = exec.run(inputs);
        ASSERT_EQ(r.status, RunStatus::Completed);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(inputs)));
        ASSERT_FALSE(observer.seen.empty());
        EXPECT_TRUE(test::tensorsNear(observer.seen.back(), inputs[0]));
    };
    check("first run");
    check("the same tensors again");
    inputs[0].data()[3] += 1.5f;
    inputs[1].data()[0] -= 2.0f;
    check("data and a weight written in place");
    inputs[1] = inputs[1].copy();
    inputs[1].data()[1] = 4.0f;
    check("another weight tensor");
    Tensor rows = Tensor::uniform(Shape({ 4, 5 }), -1, 1);
    inputs[0] = rows.slice(0, 2);
    check("the first rows of a larger tensor");
    inputs[0] = rows.slice(2, 4);
    check("its last rows: the same storage, another start");
    inputs[0] = rows.slice(0, 2);
    check("the first rows again");
    EXPECT_EQ(observer.seen.size(), 7u);
}

// Instantiates the ExecutorModes tests of every file (executor_observers_test.cpp too).
INSTANTIATE_TEST_SUITE_P(Modes, ExecutorModes, ::testing::Values(0, 1, 2),
    [](const auto& info) { return std::string(info.param == 0 ? "dynamic" : info.param == 1 ? "static_alloc" : "static_shape"); });

TEST(Executor, DynamicModeFreesIntermediatesAfterLastUse)
{
    const int n = 100;
    Executor exec(chain(n));
    Tensor x = Tensor::full(Shape({ 4096 }), 0.5f);
    const size_t buffer = 4096 * sizeof(float);
    std::vector<Tensor> vars { x };
    exec.run(vars); // plan once
    resetPeakBytes();
    const uint64_t base = allocatorStats().liveBytes;
    RunResult r = exec.run(vars);
    const uint64_t peak = allocatorStats().peakBytes - base;
    // Producer and consumer alive at once, never the 200 buffers of the chain.
    EXPECT_LE(peak, 3 * buffer);
    EXPECT_GE(peak, buffer);
    EXPECT_FLOAT_EQ(r.outputs[0].at(0), 0.5f * std::pow(2.0f, n));
}

TEST(Executor, StaticAllocDoesNotAllocateAfterTheFirstCall)
{
    ExecFlags f;
    f.static_alloc = true;
    Executor exec(chain(20), f);
    std::vector<Tensor> vars { Tensor::full(Shape({ 64 }), 1.0f) };
    exec.run(vars);
    const uint64_t before = allocatorStats().allocations;
    for (int i = 0; i < 5; ++i)
        exec.run(vars);
    EXPECT_EQ(allocatorStats().allocations, before);

    // The dynamic executor, by contrast, allocates every intermediate on every call.
    Executor dyn(chain(20));
    dyn.run(vars);
    const uint64_t d0 = allocatorStats().allocations;
    dyn.run(vars);
    EXPECT_EQ(allocatorStats().allocations - d0, 40u);
}

TEST(Executor, StaticShapeRequiresStaticAllocAndFixedShapes)
{
    ExecFlags bad;
    bad.static_shape = true;
    EXPECT_THROW(Executor(test::mlpGraph(), bad), UsageError);

    ExecFlags f;
    f.static_alloc = true;
    f.static_shape = true;
    Executor exec(test::mlpGraph(), f);
    exec.run(test::mlpInputs(2));
    try {
        exec.run(test::mlpInputs(3));
        ADD_FAILURE() << "a new shape was accepted under static_shape";
    } catch (const ShapeError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("(2, 5)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("(3, 5)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
    }
    // Without static_shape a new shape re-plans.
    Executor dyn(test::mlpGraph());
    dyn.run(test::mlpInputs(2));
    EXPECT_EQ(dyn.run(test::mlpInputs(3)).outputs[0].shape(), Shape({ 3, 4 }));
}

TEST(Executor, StaticShapeKeepsPreparedKernels)
{
    ExecFlags f;
    f.static_alloc = true;
    f.static_shape = true;
    Executor exec(test::mlpGraph(), f);
    exec.run(test::mlpInputs(2));
    const auto backends = exec.kernelBackends();
    exec.run(test::mlpInputs(2));
    EXPECT_EQ(exec.kernelBackends(), backends);
    EXPECT_EQ(backends[exec.graph().findNode("fc1").value()], "reference"); // tiny: Eigen, not oneDNN
}

TEST(Executor, WrongVariableCountOrShapeIsAClearError)
{
    Executor exec(test::mlpGraph());
    auto inputs = test::mlpInputs(2);
    inputs.pop_back();
    EXPECT_THROW(exec.run(inputs), UsageError);
    inputs = test::mlpInputs(2);
    inputs[1] = Tensor::zeros(Shape({ 8, 6 }));
    try {
        exec.run(inputs);
        ADD_FAILURE();
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("'fc1'"), std::string::npos) << e.what();
    }
}

// A plan refused for its memory leaves nothing of itself behind: the next run with the earlier
// shapes plans again and computes what it computed before.
TEST(Executor, APlanRefusedForItsMemoryIsMadeAgainAtTheNextRun)
{
    const auto g = test::mlpGraph();
    ExecFlags flags;
    flags.static_alloc = true;
    Executor exec(g, flags);
    const std::vector<Tensor> small = test::mlpInputs(4);
    const Tensor expected = exec.run(small).outputs.at(0).copy();
    std::vector<Tensor> large = test::mlpInputs(10000); // each tensor at most 320 KB, all of them 800 KB
    setMemoryLimit(500 * 1000);
    EXPECT_THROW(exec.run(large), ResourceError);
    setMemoryLimit(0);
    EXPECT_TRUE(test::tensorsNear(exec.run(small).outputs.at(0), expected, 0.0f, 0.0f));
    EXPECT_EQ(exec.run(large).outputs.at(0).shape(), Shape({ 10000, 4 }));
}
