// Scripted debug sessions on the built-in samples: exact pause sequences for step, step over,
// step out, run to and continue; breakpoints, watchpoints, pause events and paused-state queries.

#include "core/error.h"
#include "debug/session_test_util.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/symbol_block.h"
#include "models/registry.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <numeric>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;

namespace {

// mlp: Dense(relu) → Dense(relu) → Dense.
const std::string kD0 = "hybridsequential0_dense0_fwd";
const std::string kR0 = "hybridsequential0_dense0_relu_fwd";
const std::string kD1 = "hybridsequential0_dense1_fwd";
const std::string kR1 = "hybridsequential0_dense1_relu_fwd";
const std::string kD2 = "hybridsequential0_dense2_fwd";

struct Fixture {
    Recorder listener;
    Session session { &listener };
    samples::Sample sample;

    explicit Fixture(const std::string& name = "mlp")
        : sample(samples::makeSample(name))
    {
        session.load(sample.block, sample.inputNames);
        session.setInputs(sample.defaultInputs);
    }
};

// Issues `command` after each pause until the run ends; returns every pause as "node:phase".
std::vector<std::string> drive(Fixture& f, const std::function<bool()>& command, size_t maxPauses = 100)
{
    for (size_t n = 1; n <= maxPauses; ++n) {
        {
            std::unique_lock lock(f.listener.m_mutex);
            f.listener.m_cv.wait_for(lock, Recorder::kTimeout, [&] {
                return f.listener.m_pauses.size() >= n || !f.listener.m_finished.empty()
                    || !f.listener.m_failed.empty();
            });
            if (f.listener.m_pauses.size() < n) break;
        }
        EXPECT_TRUE(command());
    }
    EXPECT_TRUE(f.listener.waitEnded());
    return f.listener.pauseKeys();
}

std::vector<std::string> keys(std::initializer_list<std::pair<std::string, const char*>> l)
{
    std::vector<std::string> out;
    for (const auto& [node, phase] : l)
        out.push_back(node + ":" + phase);
    return out;
}

} // namespace

TEST(Session, StepVisitsEveryTensorEvent)
{
    Watchdog dog("StepVisitsEveryTensorEvent");
    Fixture f;
    f.session.start(StartMode::PauseAtEntry);
    const auto seen = drive(f, [&] { return f.session.step(); });
    EXPECT_EQ(seen,
        keys({ { kD0, "before" }, { kD0, "after" }, { kR0, "before" }, { kR0, "after" }, { kD1, "before" },
            { kD1, "after" }, { kR1, "before" }, { kR1, "after" }, { kD2, "before" }, { kD2, "after" } }));
    EXPECT_EQ(f.listener.m_pauses[0].reason, PauseReason::Entry);
    EXPECT_EQ(f.listener.m_pauses[1].reason, PauseReason::Step);
    ASSERT_EQ(f.listener.m_finished.size(), 1u);
    EXPECT_EQ(f.listener.m_record.status, RunStatus::Completed);

    // The outputs equal a plain hybridized call of an identical model.
    samples::Sample ref = samples::makeSample("mlp");
    ref.block->hybridize();
    const Tensor expected = ref.block->call(ref.defaultInputs).at(0);
    ASSERT_EQ(f.listener.m_outputs.size(), 1u);
    ASSERT_EQ(f.listener.m_outputs[0].shape(), expected.shape());
    for (int64_t i = 0; i < expected.size(); ++i)
        EXPECT_FLOAT_EQ(f.listener.m_outputs[0].at(i), expected.at(i));
}

TEST(Session, StepOverPausesAfterEachNode)
{
    Watchdog dog("StepOverPausesAfterEachNode");
    Fixture f;
    f.session.start(StartMode::PauseAtEntry);
    const auto seen = drive(f, [&] { return f.session.stepOver(); });
    EXPECT_EQ(seen,
        keys({ { kD0, "before" }, { kD0, "after" }, { kR0, "after" }, { kD1, "after" }, { kR1, "after" },
            { kD2, "after" } }));
    EXPECT_EQ(f.listener.m_pauses[1].reason, PauseReason::StepOver);
}

TEST(Session, StepOutLeavesTheCurrentBlock)
{
    Watchdog dog("StepOutLeavesTheCurrentBlock");
    Fixture f;
    f.session.start(StartMode::PauseAtEntry);
    // dense0 (and its relu, nested in it) → dense1 → dense2 → end.
    const auto seen = drive(f, [&] { return f.session.stepOut(); });
    EXPECT_EQ(seen, keys({ { kD0, "before" }, { kD1, "before" }, { kD2, "before" } }));
    EXPECT_EQ(f.listener.m_pauses[1].reason, PauseReason::StepOut);
    EXPECT_EQ(f.listener.m_pauses[1].blockPath, "hybridsequential0/hybridsequential0_dense1");
}

TEST(Session, StepOutOfAOneOpBlockLeavesTheFrameAroundIt)
{
    Watchdog dog("StepOutOfAOneOpBlock");
    Fixture f("nan-demo");
    f.session.start(StartMode::PauseAtEntry);
    f.listener.waitPause(1);
    ASSERT_TRUE(f.session.runTo("nandemo0_dense1_fwd"));
    EXPECT_EQ(key(f.listener.waitPause(2)), "nandemo0_dense1_fwd:before");
    // nandemo0_dense1 holds one op, so no frame is drawn for it: the frame around it is nandemo0's,
    // the whole model, and leaving it runs to the end.
    ASSERT_TRUE(f.session.stepOut());
    EXPECT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.pauseCount(), 2u);
}

// Step Out leaves the frame the graph view draws around the node: the deepest block holding more
// than one op (a Conv2D block of one op is no frame of its own).
TEST(Session, StepOutLeavesTheInnermostDrawnFrame)
{
    Watchdog dog("StepOutLeavesTheInnermostDrawnFrame");
    Fixture f("mini-resnet");
    f.session.start(StartMode::PauseAtEntry);
    f.listener.waitPause(1);
    const std::string conv1 = "hybridsequential0_residualunit0_conv1_fwd";
    ASSERT_TRUE(f.session.runTo(conv1));
    EXPECT_EQ(key(f.listener.waitPause(2)), conv1 + ":before");
    ASSERT_TRUE(f.session.stepOut());
    const PauseEvent e = f.listener.waitPause(3);
    EXPECT_EQ(e.blockPath.find("residualunit0"), std::string::npos) << e.node << " in " << e.blockPath;
    EXPECT_NE(e.node.find("residualunit1"), std::string::npos) << e.node;
    f.session.stop();
    EXPECT_TRUE(f.listener.waitEnded());
}

// A graph from a file has no block paths: the frames come from its names (as the view draws
// them), so Step Out from a stage's last unit stops in the next stage, not at the end.
TEST(Session, StepOutFollowsFramesDerivedFromNames)
{
    Watchdog dog("StepOutFollowsFramesDerivedFromNames");
    Graph g;
    NodeEntry x { g.addVariable("data"), 0, 0 };
    for (int stage = 1; stage <= 4; ++stage)
        for (int unit = 0; unit < 20; ++unit)
            for (int k = 0; k < 2; ++k) {
                const std::string name = "net_stage" + std::to_string(stage) + "_unit" + std::to_string(unit) + "_relu"
                    + std::to_string(k);
                x = { g.addOp("Activation", name, { { "act_type", "relu" } }, { x }), 0, 0 };
            }
    g.setHeads({ x });
    g.finalize();
    ASSERT_GT(g.size(), 150u);
    Recorder listener;
    Session session(&listener);
    session.load(std::make_shared<gluon::SymbolBlock>(std::move(g), std::vector<std::string> { "data" }),
        { "data" });
    session.setInputs({ Tensor::ones(Shape({ 2, 3 })) });
    session.start(StartMode::PauseAtEntry);
    listener.waitPause(1);
    ASSERT_TRUE(session.runTo("net_stage3_unit19_relu0"));
    listener.waitPause(2);
    ASSERT_TRUE(session.stepOut());
    EXPECT_EQ(key(listener.waitPause(3)), "net_stage4_unit0_relu0:before");
    ASSERT_TRUE(session.stepOut()); // out of stage4_unit0: the next unit
    EXPECT_EQ(key(listener.waitPause(4)), "net_stage4_unit1_relu0:before");
    session.stop();
    EXPECT_TRUE(listener.waitEnded());
}

// The record tells a kernel's first call (one-time setup included) from its warm calls, shows
// the preparation before the run apart, and keeps the warm time for the next run to show.
TEST(Session, RecordShowsWarmTimesAndSetupApart)
{
    Watchdog dog("RecordShowsWarmTimesAndSetupApart");
    Fixture f("lenet");
    SessionOptions o;
    o.record = RecordLevel::Ops;
    f.session.setOptions(o);
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded());
    const RunRecord first = f.session.record();
    ASSERT_FALSE(first.ops.empty());
    for (const OpRecord& r : first.ops) {
        EXPECT_TRUE(r.firstCall) << r.node;
        EXPECT_EQ(r.warmNs, 0) << r.node << ": no warm call yet";
        EXPECT_GT(r.prepareNs, 0) << r.node;
    }
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded(2));
    const RunRecord second = f.session.record();
    ASSERT_EQ(second.ops.size(), first.ops.size());
    for (const OpRecord& r : second.ops) {
        EXPECT_FALSE(r.firstCall) << r.node;
        EXPECT_EQ(r.warmNs, r.timeNs) << r.node;
        EXPECT_EQ(r.prepareNs, 0) << r.node << ": prepared by the first run";
    }
}

TEST(Session, RunToAndContinue)
{
    Watchdog dog("RunToAndContinue");
    Fixture f;
    f.session.start(StartMode::PauseAtEntry);
    EXPECT_EQ(key(f.listener.waitPause(1)), kD0 + ":before");
    EXPECT_FALSE(f.session.runTo("no_such_node"));
    EXPECT_FALSE(f.session.runTo("data")); // a variable, not an op
    ASSERT_TRUE(f.session.runTo(kR1));
    const PauseEvent e = f.listener.waitPause(2);
    EXPECT_EQ(key(e), kR1 + ":before");
    EXPECT_EQ(e.reason, PauseReason::RunTo);
    ASSERT_TRUE(f.session.continueRun());
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.pauseCount(), 2u);
    EXPECT_FALSE(f.session.continueRun()); // no run: dropped
}

TEST(Session, ContinueStopsAtEachBreakpointInOrder)
{
    Watchdog dog("ContinueStopsAtEachBreakpoint");
    Fixture f;
    const int a = f.session.addBreakpoint(Breakpoint::onNode(kD2, OpPhase::Before));
    const int b = f.session.addBreakpoint(Breakpoint::onNode(kR0, OpPhase::After));
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 2);
    f.session.start();
    const auto seen = drive(f, [&] { return f.session.continueRun(); });
    EXPECT_EQ(seen, keys({ { kR0, "after" }, { kD2, "before" } }));
    EXPECT_EQ(f.listener.m_pauses[0].reason, PauseReason::Breakpoint);
    EXPECT_EQ(f.listener.m_pauses[0].breakpointIds, std::vector<int> { b });
    EXPECT_EQ(f.listener.m_pauses[1].breakpointIds, std::vector<int> { a });
    EXPECT_EQ(f.session.breakpoint(a)->hitCount, 1);
}

TEST(Session, PauseEventCarriesTensorsAndFocusSummary)
{
    Watchdog dog("PauseEventCarriesTensors");
    Fixture f;
    SessionOptions o;
    o.histogramBins = 16;
    f.session.setOptions(o);
    f.session.addBreakpoint(Breakpoint::onNode(kD1, OpPhase::After));
    f.session.start();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(e.runId, 1u);
    EXPECT_EQ(e.sequence, 1u);
    EXPECT_EQ(e.node, kD1);
    EXPECT_EQ(e.op, "FullyConnected");
    EXPECT_EQ(e.phase, OpPhase::After);
    EXPECT_EQ(e.blockPath, "hybridsequential0/hybridsequential0_dense1");
    ASSERT_EQ(e.tensors.size(), 4u);
    const std::vector<std::string> names { kD1 + "_data", kD1 + "_weight", kD1 + "_bias", kD1 + "_output" };
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(e.tensors[i].name, names[i]);
        EXPECT_EQ(e.tensors[i].isInput, i < 3);
    }
    EXPECT_EQ(e.focus, 3); // the first output
    const Tensor& out = e.tensors[3].values;
    const TensorStats direct = computeStats(out.view());
    EXPECT_EQ(e.focusStats.count, out.size());
    EXPECT_DOUBLE_EQ(e.focusStats.mean, direct.mean);
    EXPECT_EQ(e.focusHistogram.bins.size(), 16u);
    EXPECT_EQ(std::accumulate(e.focusHistogram.bins.begin(), e.focusHistogram.bins.end(), uint64_t(0)),
        static_cast<uint64_t>(out.size()));

    // Paused-state requests, served without resuming.
    EXPECT_TRUE(f.session.isPaused());
    const auto ws = f.session.statsOf(kD1 + "_weight");
    ASSERT_TRUE(ws);
    EXPECT_EQ(ws->count, e.tensors[1].values.size());
    const auto h = f.session.histogramOf(kD1 + "_output", 8, HistogramScale::Linear, -1, 1);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->bins.size(), 8u);
    EXPECT_DOUBLE_EQ(h->lo, -1);
    EXPECT_DOUBLE_EQ(h->hi, 1);
    const auto log = f.session.histogramOf(kD1 + "_output", 8, HistogramScale::LogMagnitude);
    ASSERT_TRUE(log);
    EXPECT_EQ(log->scale, HistogramScale::LogMagnitude);
    const Tensor& w = e.tensors[1].values; // (units, in)
    SliceRequest r;
    r.rowBegin = 1;
    r.rowCount = 2;
    r.colBegin = 3;
    r.colCount = 4;
    const auto s = f.session.slice(kD1 + "_weight", r);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->rows, 2);
    EXPECT_EQ(s->cols, 4);
    const int64_t cols = w.shape()[1];
    EXPECT_FLOAT_EQ(s->at(1, 2), w.at((1 + 1) * cols + 3 + 2));
    EXPECT_FALSE(f.session.statsOf("nope"));
    EXPECT_TRUE(f.session.isPaused());

    f.session.continueRun();
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_FALSE(f.session.isPaused());
    EXPECT_FALSE(f.session.statsOf(kD1 + "_weight")); // the pause is over, and nothing was recorded
}

TEST(Session, NanWatchpointStopsAtTheFirstNanProducer)
{
    Watchdog dog("NanWatchpoint");
    Fixture f("nan-demo");
    const int id = f.session.addBreakpoint(Breakpoint::watch(Condition::of(Condition::Kind::NanOrInf)));
    f.session.start();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(e.node, "nandemo0_log0");
    EXPECT_EQ(e.phase, OpPhase::After);
    EXPECT_EQ(e.op, "log");
    EXPECT_EQ(e.reason, PauseReason::Watchpoint);
    EXPECT_EQ(e.breakpointIds, std::vector<int> { id });
    ASSERT_NE(e.focusTensor(), nullptr);
    EXPECT_EQ(e.focusTensor()->name, "nandemo0_log0_0");
    EXPECT_GT(e.focusStats.nan, 0);
    EXPECT_EQ(computeStats(e.tensors[0].values.view()).nan, 0); // its input is clean
    f.session.stop();
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.m_record.status, RunStatus::Stopped);
    EXPECT_TRUE(f.listener.m_outputs.empty());
}

TEST(Session, TensorBreakpointsAndIgnoreCounts)
{
    Watchdog dog("TensorBreakpoints");
    Fixture f;
    const int w = f.session.addBreakpoint(Breakpoint::onTensor(kD1 + "_weight"));
    const int o = f.session.addBreakpoint(Breakpoint::onTensor(kR0 + "_output"));
    Breakpoint every = Breakpoint::watch(Condition::always());
    every.ignoreCount = 3; // skips d0, r0, d1 (after events): pauses at r1 after
    const int e = f.session.addBreakpoint(every);
    f.session.start();
    const auto seen = drive(f, [&] { return f.session.continueRun(); });
    EXPECT_EQ(seen, keys({ { kR0, "after" }, { kD1, "before" }, { kR1, "after" }, { kD2, "after" } }));
    EXPECT_EQ(f.listener.m_pauses[0].breakpointIds, std::vector<int> { o });
    EXPECT_EQ(f.listener.m_pauses[0].focusTensor()->name, kR0 + "_output");
    EXPECT_EQ(f.listener.m_pauses[1].breakpointIds, std::vector<int> { w });
    EXPECT_EQ(f.listener.m_pauses[1].focusTensor()->name, kD1 + "_weight");
    EXPECT_EQ(f.listener.m_pauses[2].reason, PauseReason::Watchpoint);
    EXPECT_EQ(f.session.breakpoint(e)->hitCount, 5);

    // Hit counts restart with the next run; a disabled breakpoint does not stop.
    f.session.setBreakpointEnabled(e, false);
    f.session.removeBreakpoint(w);
    f.listener.runsExpected = 2;
    f.session.start();
    const PauseEvent again = f.listener.waitPause(5);
    EXPECT_EQ(again.runId, 2u);
    EXPECT_EQ(key(again), kR0 + ":after");
    EXPECT_EQ(f.session.breakpoint(o)->hitCount, 1);
    f.session.continueRun();
    ASSERT_TRUE(f.listener.waitEnded(2));
    EXPECT_EQ(f.listener.pauseCount(), 5u);
}

TEST(Session, BreakpointEditsDuringAPausedRun)
{
    Watchdog dog("BreakpointEditsDuringARun");
    Fixture f;
    f.session.addBreakpoint(Breakpoint::onNode(kD0));
    const int removed = f.session.addBreakpoint(Breakpoint::onNode(kD1));
    f.session.start();
    EXPECT_EQ(key(f.listener.waitPause(1)), kD0 + ":before");
    EXPECT_TRUE(f.session.removeBreakpoint(removed));
    const int disabled = f.session.addBreakpoint(Breakpoint::onNode(kR0, OpPhase::After));
    EXPECT_TRUE(f.session.setBreakpointEnabled(disabled, false));
    const int changed = f.session.addBreakpoint(Breakpoint::onNode(kR1));
    EXPECT_TRUE(f.session.updateBreakpoint(changed, Breakpoint::onNode(kD2, OpPhase::After)));
    // drive() continues from the first pause too (a continue of our own here would race its first).
    const auto seen = drive(f, [&] { return f.session.continueRun(); });
    EXPECT_EQ(seen, keys({ { kD0, "before" }, { kD2, "after" } }));
    EXPECT_EQ(f.session.breakpoint(changed)->location, kD2);
}

TEST(Session, PauseCommandStopsAtTheNextOp)
{
    Watchdog dog("PauseCommand");
    Fixture f;
    SessionOptions o;
    o.record = RecordLevel::Ops; // the run is observed, so a pause can take effect
    f.session.setOptions(o);
    f.listener.onStarted = [&] { EXPECT_TRUE(f.session.pause()); };
    f.session.start();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(key(e), kD0 + ":before");
    EXPECT_EQ(e.reason, PauseReason::Pause);
    EXPECT_TRUE(f.session.pause()); // already paused: stays paused
    EXPECT_TRUE(f.session.continueRun());
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.pauseCount(), 1u);
}

TEST(Session, PauseWithoutBreakpointsStopsAtTheNextOp)
{
    // No breakpoint, no recording: pause() during the run still stops at the next op.
    Watchdog dog("PauseWithoutBreakpoints");
    Fixture f;
    f.listener.onStarted = [&] { f.session.pause(); };
    f.session.start();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(e.reason, PauseReason::Pause);
    EXPECT_EQ(key(e), kD0 + ":before");
    EXPECT_TRUE(f.session.continueRun());
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.pauseCount(), 1u);
    EXPECT_EQ(f.listener.m_finished.size(), 1u);
    EXPECT_TRUE(f.listener.m_record.ops.empty());
}

TEST(Session, RecordsEveryOpWithStatistics)
{
    Watchdog dog("RecordsEveryOp");
    Fixture f;
    SessionOptions o;
    o.record = RecordLevel::Stats;
    f.session.setOptions(o);
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded());
    const RunRecord& r = f.listener.m_record;
    ASSERT_EQ(r.ops.size(), 5u);
    const std::vector<std::string> order { kD0, kR0, kD1, kR1, kD2 };
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(r.ops[i].node, order[i]);
        EXPECT_GE(r.ops[i].timeNs, 0);
        ASSERT_EQ(r.ops[i].outputShapes.size(), 1u);
        ASSERT_EQ(r.ops[i].outputStats.size(), 1u);
        EXPECT_EQ(r.ops[i].outputHistograms.at(0).bins.size(), 64u);
        EXPECT_EQ(r.ops[i].outputStats[0].count, r.ops[i].outputShapes[0].size());
    }
    EXPECT_EQ(r.ops[0].op, "FullyConnected");
    EXPECT_EQ(r.ops[1].op, "Activation");
    EXPECT_EQ(r.ops[1].outputNames.at(0), kR0 + "_output");
    EXPECT_GE(r.ops[1].outputStats[0].min, 0.0); // relu
    EXPECT_EQ(r.ops[4].outputShapes[0], f.listener.m_outputs.at(0).shape());
    EXPECT_EQ(r.keptCount(), 0u);
}

TEST(Session, RecordedTensorsStayWithinTheBudget)
{
    Watchdog dog("RecordedTensorsBudget");
    Fixture f;
    SessionOptions o;
    o.record = RecordLevel::Tensors;
    f.session.setOptions(o);
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(f.listener.m_record.keptCount(), 5u);
    EXPECT_FALSE(f.listener.m_record.tensorsDropped());
    // Served after the run from the record.
    const auto s = f.session.statsOf(kD2 + "_output");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->count, f.listener.m_outputs.at(0).size());

    // A budget that holds only the last output: the older ones are dropped, and the record says so.
    const size_t lastBytes = static_cast<size_t>(f.listener.m_outputs.at(0).size()) * sizeof(float);
    o.tensorBudgetBytes = lastBytes;
    f.session.setOptions(o);
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded(2));
    const RunRecord r = f.session.record();
    EXPECT_EQ(r.runId, 2u);
    EXPECT_TRUE(r.tensorsDropped());
    EXPECT_GE(r.droppedTensors(), 1u);
    EXPECT_LE(r.keptBytes(), lastBytes);
    EXPECT_NE(r.tensor(kD2 + "_output"), nullptr);
    EXPECT_EQ(r.tensor(kD0 + "_output"), nullptr);
}

TEST(Session, EngineErrorsAreReportedAsFailedRuns)
{
    Watchdog dog("EngineErrors");
    Recorder listener;
    Session session(&listener);
    auto add = std::make_shared<gluon::nn::HybridLambda>(
        [](const gluon::F& F, const std::vector<gluon::Value>& x) {
            return std::vector<gluon::Value> { F.elemwise_add(x[0], x[1], "add") };
        },
        "bad_");
    session.load(add, { "data0", "data1" });
    session.setInputs({ Tensor::ones(Shape({ 2, 3 })), Tensor::ones(Shape({ 3, 2 })) });
    session.addBreakpoint(Breakpoint::watch(Condition::always()));
    session.start();
    ASSERT_TRUE(listener.waitEnded());
    ASSERT_EQ(listener.m_failed.size(), 1u);
    EXPECT_NE(listener.m_error.find("add"), std::string::npos) << listener.m_error;
    EXPECT_NE(listener.m_error.find("elemwise_add"), std::string::npos) << listener.m_error;
    EXPECT_NE(listener.m_error.find("(3, 2)"), std::string::npos) << listener.m_error;
    // The session stays usable.
    session.setInputs({ Tensor::ones(Shape({ 2, 3 })), Tensor::ones(Shape({ 2, 3 })) });
    session.clearBreakpoints();
    session.start();
    ASSERT_TRUE(listener.waitEnded(2));
    ASSERT_EQ(listener.m_finished.size(), 1u);
    EXPECT_FLOAT_EQ(listener.m_outputs.at(0).at(5), 2.0f);
}

TEST(Session, UsageErrors)
{
    Recorder listener;
    Session s(&listener);
    EXPECT_THROW(s.start(), UsageError); // no model
    samples::Sample sample = samples::makeSample("mlp");
    s.load(sample.block, sample.inputNames);
    EXPECT_THROW(s.start(), UsageError); // no inputs
    EXPECT_FALSE(s.step());
    EXPECT_FALSE(s.stop());
    EXPECT_FALSE(s.isRunning());
}

TEST(Session, KeepsTheUsersFlagsAndStaticAllocOutputsSurviveTheNextRun)
{
    Watchdog dog("StaticAlloc");
    Fixture f;
    f.sample.block->hybridize(true, true, true); // static_alloc + static_shape
    f.session.addBreakpoint(Breakpoint::onNode(kD1));
    f.session.start();
    EXPECT_EQ(f.listener.waitPause(1).node, kD1);
    f.session.continueRun();
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_TRUE(f.sample.block->flags().static_alloc);
    EXPECT_TRUE(f.sample.block->flags().static_shape);
    const Tensor first = f.listener.m_outputs.at(0);
    const std::vector<float> before = first.toVector();

    // A second run on other inputs must not change the outputs handed out by the first.
    f.session.clearBreakpoints();
    f.session.setInputs({ Tensor::full(f.sample.defaultInputs[0].shape(), 3.0f) });
    f.listener.runsExpected = 2;
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded(2));
    EXPECT_EQ(first.toVector(), before);
    EXPECT_NE(f.listener.m_outputs.at(0).toVector(), before);
}

TEST(Session, AParameterIsReadByItsNameWhileIdleOrPaused)
{
    Watchdog dog("ParameterByName");
    Fixture f;
    const std::string w1 = "hybridsequential0_dense1_weight";
    const gluon::ParamPtr p = f.sample.block->collect_params().at(w1);
    // Idle: a copy of the values.
    std::optional<Tensor> idle = f.session.tensor(w1);
    ASSERT_TRUE(idle.has_value());
    ASSERT_EQ(idle->shape(), p->data().shape());
    EXPECT_EQ(std::memcmp(idle->raw(), p->data().raw(), idle->bytes()), 0);
    EXPECT_NE(idle->raw(), p->data().raw()) << "a copy: the parameter changes on";
    EXPECT_FALSE(f.session.tensor("hybridsequential0_dense9_weight").has_value());
    // Paused: the same, and its summary is answered as any tensor's.
    f.session.addBreakpoint(Breakpoint::onNode(kD2, OpPhase::Before));
    f.session.start();
    (void)f.listener.waitPause(1);
    const std::optional<Tensor> paused = f.session.parameter(w1);
    ASSERT_TRUE(paused.has_value());
    EXPECT_EQ(std::memcmp(paused->raw(), p->data().raw(), paused->bytes()), 0);
    const std::optional<TensorStats> s = f.session.statsOf(w1);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->count, p->data().size());
    f.session.continueRun();
    EXPECT_TRUE(f.listener.waitEnded());
}
