#include "common/tensor_match.h"
#include "core/error.h"
#include "common/exec_graphs.h"
#include "exec/executor.h"
#include "exec/invoke.h"
#include "tensor/allocator.h"
#include "tensor/memory_limit.h"
#include "tensor/random.h"

#include <algorithm>
#include <deque>
#include <functional>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

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


Tensor mlpEager(const std::vector<Tensor>& v)
{
    Tensor h = invokeOp("FullyConnected", { { "num_hidden", "8" } }, { v[0], v[1], v[2] })[0];
    h = invokeOp("Activation", { { "act_type", "relu" } }, { h })[0];
    return invokeOp("FullyConnected", { { "num_hidden", "4" } }, { h, v[3], v[4] })[0];
}

struct Recorder : ExecutionObserver {
    PhaseMask mask = PhaseMask::Both;
    std::string stopAt;
    std::vector<std::string> events;
    std::vector<Tensor> copies;
    PhaseMask wants(const Graph&, uint32_t) override { return mask; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        events.push_back(ev.node.name + (ev.phase == OpPhase::Before ? ":before:" : ":after:")
            + std::to_string(ev.inputs.size()) + ":" + std::to_string(ev.outputs.size()));
        for (const TensorView& o : ev.outputs)
            copies.push_back(Tensor::copyOf(o));
        return ev.node.name == stopAt ? ObserverAction::Stop : ObserverAction::Continue;
    }
};
}

class ExecutorModes : public ::testing::TestWithParam<int> {
protected:
    ExecFlags flags() const
    {
        ExecFlags f;
        f.static_alloc = GetParam() >= 1;
        f.static_shape = GetParam() >= 2;
        return f;
    }
};

TEST_P(ExecutorModes, MatchesEagerCallsOnEveryRun)
{
    Executor exec(test::mlpGraph(), flags());
    for (int run = 0; run < 3; ++run) {
        const auto inputs = test::mlpInputs(3);
        RunResult r = exec.run(inputs);
        ASSERT_EQ(r.status, RunStatus::Completed);
        ASSERT_EQ(r.outputs.size(), 1u);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(inputs)));
    }
}

TEST_P(ExecutorModes, ObserverSeesEveryOpInOrderWithValues)
{
    Executor exec(test::mlpGraph(), flags());
    Recorder rec;
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
    Recorder rec;
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
    Recorder rec;
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

// An observer whose calls are callbacks on single tensors may hand them to the executor as a list
// (tensorCalls): a static_alloc run makes each itself, in place of onOp() and in the same order
// among the other observers; a dynamic run calls onOp(). A call on a slot the node lacks is
// dropped. What is seen is the same either way.
TEST_P(ExecutorModes, LooksAtSingleTensorsAreCalledInTheObserversOrder)
{
    struct Log : ExecutionObserver {
        std::string tag;
        std::vector<std::string>* log;
        PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::Both; }
        ObserverAction onOp(const OpEvent& ev) override
        {
            log->push_back(tag + ev.node.name + (ev.phase == OpPhase::Before ? ":before" : ":after"));
            return ObserverAction::Continue;
        }
    };
    struct Looker : ExecutionObserver {
        std::vector<std::string>* log;
        std::deque<std::string> names; // what the calls point to stays put
        std::vector<Tensor> seen;
        const Graph* graph = nullptr;
        int wholeCalls = 0;
        TensorCallback look = [this](std::string_view name, std::string_view op, const TensorView& view) {
            log->push_back("L " + std::string(name) + " " + std::string(op));
            seen.push_back(Tensor::copyOf(view));
        };
        PhaseMask wants(const Graph& g, uint32_t) override { return graph = &g, PhaseMask::Both; }
        static std::string name(const std::string& node, OpPhase p, uint32_t slot)
        {
            return node + (p == OpPhase::Before ? ":in" : ":out") + std::to_string(slot);
        }
        bool tensorCalls(uint32_t node, OpPhase phase, std::vector<TensorCall>& calls) override
        {
            for (const uint32_t slot : { 0u, 1u, 7u }) { // FullyConnected has 3 inputs, every node 1 output
                names.push_back(name(graph->node(node).name, phase, slot));
                calls.push_back(TensorCall { &look, names.back(), graph->node(node).opName(), slot });
            }
            return true;
        }
        ObserverAction onOp(const OpEvent& ev) override
        {
            ++wholeCalls;
            const auto& views = ev.phase == OpPhase::Before ? ev.inputs : ev.outputs;
            for (const uint32_t slot : { 0u, 1u, 7u })
                if (slot < views.size()) look(name(ev.node.name, ev.phase, slot), ev.node.opName(), views[slot]);
            return ObserverAction::Continue;
        }
    };
    ExecFlags unfused = flags();
    unfused.fuse = false;
    Executor exec(test::mlpGraph(), unfused);
    std::vector<std::string> log;
    Log a, c;
    Looker looker;
    a.tag = "A ", c.tag = "C ";
    a.log = c.log = looker.log = &log;
    exec.attach(&a);
    exec.attach(&looker);
    exec.attach(&c);
    const auto inputs = test::mlpInputs(2);
    for (int run = 0; run < 2; ++run) {
        log.clear();
        looker.seen.clear();
        const RunResult r = exec.run(inputs);
        ASSERT_EQ(r.status, RunStatus::Completed);
        std::vector<std::string> expected;
        for (const std::string node : { "fc1", "relu1", "fc2" }) {
            const std::string op = node == "relu1" ? " Activation" : " FullyConnected";
            expected.insert(expected.end(), { "A " + node + ":before", "L " + node + ":in0" + op });
            if (node != "relu1") expected.push_back("L " + node + ":in1" + op); // its weight
            expected.insert(expected.end(), { "C " + node + ":before", "A " + node + ":after", "L " + node + ":out0" + op, "C " + node + ":after" });
        }
        EXPECT_EQ(log, expected);
        EXPECT_EQ(looker.wholeCalls, GetParam() == 0 ? 6 * (run + 1) : 0);
        ASSERT_EQ(looker.seen.size(), 8u);
        EXPECT_TRUE(test::tensorsNear(looker.seen[0], inputs[0]));
        EXPECT_TRUE(test::tensorsNear(looker.seen[1], inputs[1])); // fc1's weight
        EXPECT_TRUE(test::tensorsNear(looker.seen[3], looker.seen[2])); // relu1 reads fc1's output
        EXPECT_TRUE(test::tensorsNear(looker.seen[7], r.outputs[0]));
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(inputs)));
    }
}

// Should an observer's wants() throw while the executor lists who watches what, the half-made
// lists call nobody, and the next run lists again.
TEST_P(ExecutorModes, ListsThatThrewHalfWayAreMadeAgainAtTheNextRun)
{
    struct Throwing : Recorder {
        bool throwNow = false;
        PhaseMask wants(const Graph& g, uint32_t node) override
        {
            if (throwNow) throw std::runtime_error("wants");
            return Recorder::wants(g, node);
        }
    };
    ExecFlags unfused = flags();
    unfused.fuse = false;
    Executor exec(test::mlpGraph(), unfused);
    Throwing rec;
    exec.attach(&rec);
    ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
    EXPECT_EQ(rec.events.size(), 6u);
    rec.mask = PhaseMask::After;
    rec.throwNow = true;
    EXPECT_THROW(exec.refreshWants(), std::runtime_error);
    rec.throwNow = false;
    rec.events.clear();
    ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
    EXPECT_EQ(rec.events, (std::vector<std::string> { "fc1:after:3:1", "relu1:after:1:1", "fc2:after:3:1" }));
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
    EXPECT_TRUE(test::tensorsNear(unwatched.outputs[0], mlpEager(inputs)));
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

// Observers may not attach or detach during a run (Executor's contract), but should one do so from
// a callback, in any mode (the static_alloc run's table of calls included): the run completes with
// its values, a detached observer is called no more, one that stays attached gets every event,
// and no observer is given an event out of the run's order (another step's or phase's); within
// the phase of the change one may be called twice or not at all. Attaching one and detaching
// another in one callback hands over from the next step. A run stopped half way leaves the steps
// after the stop on their first call.
TEST_P(ExecutorModes, ObserversChangedDuringARunGetEventsInOrderAndADetachedOneNone)
{
    struct Recorder : ExecutionObserver {
        std::vector<std::string> seen;
        std::vector<int> order; // 2 × the node's place in the run + the phase
        std::function<ObserverAction(const OpEvent&)> then;
        PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::Both; }
        ObserverAction onOp(const OpEvent& ev) override
        {
            seen.push_back(ev.node.name + (ev.phase == OpPhase::Before ? ":before" : ":after") + (ev.firstCall ? "*" : ""));
            const int place = ev.node.name == "fc1" ? 0 : ev.node.name == "relu1" ? 1 : 2;
            order.push_back(2 * place + (ev.phase == OpPhase::After ? 1 : 0));
            return then ? then(ev) : ObserverAction::Continue;
        }
        bool inOrder() const { return std::adjacent_find(order.begin(), order.end(), std::greater<>()) == order.end(); }
    };
    const auto at = [](const OpEvent& ev, const char* node, OpPhase phase) { return ev.node.name == node && ev.phase == phase; };
    ExecFlags unfused = flags();
    unfused.fuse = false;
    const auto inputs = test::mlpInputs(2);
    {
        Executor exec(test::mlpGraph(), unfused);
        Recorder a, b;
        a.then = [&](const OpEvent& ev) {
            if (at(ev, "fc1", OpPhase::After)) {
                exec.attach(&b);
                exec.detach(&a);
            }
            return ObserverAction::Continue;
        };
        exec.attach(&a);
        const RunResult r = exec.run(inputs);
        ASSERT_EQ(r.status, RunStatus::Completed);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(inputs)));
        EXPECT_EQ(a.seen, (std::vector<std::string> { "fc1:before*", "fc1:after*" }));
        EXPECT_EQ(b.seen, (std::vector<std::string> { "relu1:before*", "relu1:after*", "fc2:before*", "fc2:after*" }));
    }
    for (const OpPhase phase : { OpPhase::Before, OpPhase::After }) {
        // One attaches another in the middle of relu1 (the lists grow), or detaches the one listed
        // after it (they shrink).
        Executor grows(test::mlpGraph(), unfused), shrinks(test::mlpGraph(), unfused);
        Recorder a, b, c, d;
        a.then = [&](const OpEvent& ev) {
            if (at(ev, "relu1", phase)) grows.attach(&b);
            return ObserverAction::Continue;
        };
        c.then = [&](const OpEvent& ev) {
            if (at(ev, "relu1", phase)) shrinks.detach(&d);
            return ObserverAction::Continue;
        };
        grows.attach(&a);
        shrinks.attach(&c);
        shrinks.attach(&d);
        for (Executor* e : { &grows, &shrinks }) {
            const RunResult r = e->run(inputs);
            ASSERT_EQ(r.status, RunStatus::Completed);
            EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(inputs)));
        }
        for (const Recorder* r : { &a, &b, &c, &d })
            EXPECT_TRUE(r->inOrder()) << testing::PrintToString(r->seen);
        EXPECT_GE(a.seen.size(), 6u);
        EXPECT_GE(c.seen.size(), 6u);
        for (const std::string e : { "fc1:before*", "fc1:after*", "relu1:before*", "relu1:after*", "fc2:before*", "fc2:after*" }) {
            EXPECT_NE(std::find(a.seen.begin(), a.seen.end(), e), a.seen.end()) << e;
            EXPECT_NE(std::find(c.seen.begin(), c.seen.end(), e), c.seen.end()) << e;
        }
        EXPECT_EQ(b.seen.back(), "fc2:after*") << "attached, it takes part from then on";
        ASSERT_FALSE(d.seen.empty());
        EXPECT_LE(d.order.back(), 2 + (phase == OpPhase::After ? 1 : 0)) << "detached at relu1: called no more after it";
    }

    // A fresh plan's run stopped before relu1: relu1 and fc2 have not run, so the next run still
    // calls them first.
    Executor fresh(test::mlpGraph(), unfused);
    Recorder c;
    c.then = [](const OpEvent& ev) {
        return ev.node.name == "relu1" && ev.phase == OpPhase::Before ? ObserverAction::Stop : ObserverAction::Continue;
    };
    fresh.attach(&c);
    EXPECT_EQ(fresh.run(inputs).status, RunStatus::Stopped);
    c.then = nullptr;
    ASSERT_EQ(fresh.run(inputs).status, RunStatus::Completed);
    ASSERT_EQ(fresh.run(inputs).status, RunStatus::Completed);
    EXPECT_EQ(c.seen, (std::vector<std::string> { "fc1:before*", "fc1:after*", "relu1:before*", // stopped
                          "fc1:before", "fc1:after", "relu1:before*", "relu1:after*", "fc2:before*", "fc2:after*",
                          "fc1:before", "fc1:after", "relu1:before", "relu1:after", "fc2:before", "fc2:after" }));
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
    EXPECT_TRUE(test::tensorsNear(exec.run(two).outputs[0], mlpEager(two)));
    obs.armed = true;
    EXPECT_THROW(exec.run(three), UsageError);
    for (int run = 0; run < 2; ++run) {
        const RunResult r = exec.run(three);
        ASSERT_EQ(r.status, RunStatus::Completed);
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(three))) << "run " << run;
    }
    EXPECT_TRUE(test::tensorsNear(exec.run(two).outputs[0], mlpEager(two)));
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
    EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(two)));
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
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], mlpEager(inputs)));
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
