// The executor's interface to its observers beyond onOp(): calls on single tensors listed once per
// plan (tensorCalls), lists that threw half way, and observers attached or detached during a run.

#include "common/exec_graphs.h"
#include "common/executor_modes.h"
#include "common/tensor_match.h"
#include "exec/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace opscope;

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
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(inputs)));
    }
}

// Should an observer's wants() throw while the executor lists who watches what, the half-made
// lists call nobody, and the next run lists again.
TEST_P(ExecutorModes, ListsThatThrewHalfWayAreMadeAgainAtTheNextRun)
{
    struct Throwing : test::Recorder {
        bool throwNow = false;
        PhaseMask wants(const Graph& g, uint32_t node) override
        {
            if (throwNow) throw std::runtime_error("wants");
            return test::Recorder::wants(g, node);
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
        EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(inputs)));
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
            EXPECT_TRUE(test::tensorsNear(r.outputs[0], test::mlpEager(inputs)));
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
