// Thread safety of the session: stop and destroy while paused, commands from another thread at
// a high rate, breakpoint edits while running. Every test runs under a watchdog.

#include "debug/debug_observer.h"
#include "debug/session_test_util.h"
#include "models/registry.h"

#include <atomic>
#include <gtest/gtest.h>
#include <random>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;

TEST(SessionThreads, StopWhilePausedEndsTheRun)
{
    Watchdog dog("StopWhilePaused");
    Recorder listener;
    Session session(&listener);
    samples::Sample s = samples::makeSample("lenet");
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    session.addBreakpoint(Breakpoint::onNode("hybridsequential0_pool0_fwd"));
    session.start();
    EXPECT_EQ(listener.waitPause(1).node, "hybridsequential0_pool0_fwd");
    EXPECT_TRUE(session.isPaused());
    EXPECT_TRUE(session.stop());
    ASSERT_TRUE(listener.waitEnded());
    EXPECT_TRUE(session.waitUntilIdle(std::chrono::seconds(30)));
    EXPECT_EQ(listener.m_record.status, RunStatus::Stopped);
    EXPECT_TRUE(listener.m_outputs.empty());
    EXPECT_FALSE(session.isPaused());
    EXPECT_EQ(listener.pauseCount(), 1u);
}

TEST(SessionThreads, DestroyWhilePausedEndsTheRun)
{
    Watchdog dog("DestroyWhilePaused");
    Recorder listener;
    auto session = std::make_unique<Session>(&listener);
    samples::Sample s = samples::makeSample("mini-resnet");
    session->load(s.block, s.inputNames);
    session->setInputs(s.defaultInputs);
    session->addBreakpoint(Breakpoint::watch(Condition::always(), OpPhase::Before));
    session->start();
    listener.waitPause(1);
    session.reset(); // joins the worker
    ASSERT_EQ(listener.m_finished.size(), 1u);
    EXPECT_EQ(listener.m_record.status, RunStatus::Stopped);
    // The paused event's tensors are copies: still valid after the session is gone.
    const PauseEvent& e = listener.m_pauses.at(0);
    ASSERT_FALSE(e.tensors.empty());
    EXPECT_EQ(computeStats(e.tensors[0].values.view()).count, e.tensors[0].values.size());
}

TEST(SessionThreads, DestroyRightAfterStart)
{
    Watchdog dog("DestroyRightAfterStart");
    for (int i = 0; i < 50; ++i) {
        Recorder listener;
        samples::Sample s = samples::makeSample("mlp");
        Session session(&listener);
        session.load(s.block, s.inputNames);
        session.setInputs(s.defaultInputs);
        session.addBreakpoint(Breakpoint::watch(Condition::always()));
        session.start(i % 2 ? StartMode::PauseAtEntry : StartMode::Run);
    }
}

TEST(SessionThreads, ThousandsOfRapidCommandsFromAnotherThread)
{
    Watchdog dog("RapidCommands", std::chrono::seconds(120));
    Recorder listener;
    Session session(&listener);
    samples::Sample s = samples::makeSample("mlp");
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    SessionOptions o;
    o.record = RecordLevel::Stats;
    session.setOptions(o);
    session.addBreakpoint(Breakpoint::onNode("hybridsequential0_dense1_fwd"));

    std::atomic<bool> done { false };
    std::atomic<int> accepted { 0 };
    std::thread commander([&] {
        std::mt19937 rng(7);
        // Until a thousand commands reached a run (commands while idle are dropped).
        for (int i = 0; accepted < 1000; ++i) {
            bool ok = false;
            switch (rng() % 8) {
            case 0:
            case 1:
                ok = session.step();
                break;
            case 2:
            case 3:
                ok = session.continueRun();
                break;
            case 4:
                ok = session.stepOver();
                break;
            case 5:
                ok = session.stepOut();
                break;
            case 6:
                ok = session.pause();
                break;
            default:
                ok = session.runTo("hybridsequential0_dense2_fwd");
                break;
            }
            accepted += ok ? 1 : 0;
            if (i % 500 == 0) // edits while running or paused
                session.addBreakpoint(Breakpoint::watch(Condition::parse("max>1e9")));
            if (i % 97 == 0) (void)session.statsOf("hybridsequential0_dense1_fwd_weight");
        }
        done = true;
    });
    int runs = 0;
    while (!done) {
        if (session.waitUntilIdle(std::chrono::seconds(30))) {
            listener.runsExpected = static_cast<size_t>(++runs);
            session.start(StartMode::PauseAtEntry);
        }
        std::unique_lock lock(listener.m_mutex);
        listener.m_cv.wait_for(lock, std::chrono::milliseconds(50),
            [&] { return listener.m_finished.size() + listener.m_failed.size() >= static_cast<size_t>(runs); });
    }
    commander.join();
    session.stop();
    ASSERT_TRUE(session.waitUntilIdle(std::chrono::seconds(30)));
    ASSERT_TRUE(listener.waitEnded(static_cast<size_t>(runs)));
    EXPECT_TRUE(listener.m_failed.empty());
    EXPECT_EQ(listener.m_finished.size(), static_cast<size_t>(runs));
    EXPECT_GE(runs, 1);
}

TEST(SessionThreads, ContinueFromTheListenerCallback)
{
    // A listener may command the session from its own callback (on the worker thread).
    Watchdog dog("ContinueFromCallback");
    Recorder listener;
    Session session(&listener);
    listener.onPaused = [&](const PauseEvent&) { EXPECT_TRUE(session.step()); };
    samples::Sample s = samples::makeSample("mlp");
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    session.start(StartMode::PauseAtEntry);
    ASSERT_TRUE(listener.waitEnded());
    EXPECT_EQ(listener.pauseCount(), 10u); // every before and after event of the five ops
}

TEST(SessionThreads, BreakpointsAddedWhileRunningApply)
{
    Watchdog dog("BreakpointsAddedWhileRunning");
    Recorder listener;
    Session session(&listener);
    samples::Sample s = samples::makeSample("mlp");
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    session.addBreakpoint(Breakpoint::onNode("hybridsequential0_dense0_fwd"));
    // Added from the worker thread in the middle of the run, between two events.
    listener.onPaused = [&](const PauseEvent& e) {
        if (e.sequence == 1) {
            session.addBreakpoint(Breakpoint::onNode("hybridsequential0_dense2_fwd", OpPhase::After));
            session.continueRun();
        } else {
            session.continueRun();
        }
    };
    session.start();
    ASSERT_TRUE(listener.waitEnded());
    EXPECT_EQ(listener.pauseKeys(),
        (std::vector<std::string> { "hybridsequential0_dense0_fwd:before", "hybridsequential0_dense2_fwd:after" }));
}

TEST(DebugObserver, WantsEveryNodeOfADebuggedRun)
{
    // So that pause() and breakpoints added during a run act at the next op.
    Gate gate;
    BreakpointTable table;
    std::mutex m;
    RunRecord record;
    DebugObserver obs(gate, table, m, record);
    samples::Sample s = samples::makeSample("mlp");
    auto g = s.block->trace({ s.defaultInputs[0].shape() });
    const Executor exec(g);
    obs.beginRun(1, *g, exec, SessionOptions {}, StartMode::Run, nullptr);
    EXPECT_TRUE(obs.watchesEveryNode());
    for (uint32_t id = 0; id < g->size(); ++id)
        EXPECT_EQ(obs.wants(*g, id), PhaseMask::Both);
}
