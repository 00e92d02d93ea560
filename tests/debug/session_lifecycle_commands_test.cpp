// Lifecycle of a debug session under concurrency, part two: thousands of commands across hundreds
// of runs while other threads edit the breakpoints; breakpoints removed and disabled during runs; a
// session destroyed while its listener chains runs from runFinished (the training step:
// session_lifecycle_training_test.cpp). Every scenario repeats kReps times with the seed
// test * 1000 + repetition.

#include "debug/session_lifecycle_util.h"

#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;
using namespace opscope::debug::test::lifecycle;

TEST(SessionLifecycle, ThousandsOfCommandsAcrossRunsWhileBreakpointsChange)
{
    Watchdog dog("ThousandsOfCommands", std::chrono::seconds(600));
    constexpr size_t kRuns = 200, kCommands = 1000;
    const samples::Sample s = samples::makeSample("mlp");
    const Reference ref = referenceOf(s);
    enum Kind : uint8_t { Step, Continue, StepOver, StepOut, Pause, RunTo, RunToUnknown, Stop };
    struct Call {
        uint64_t before, after;
        Kind kind;
        bool ok;
    };
    struct Start {
        uint64_t returned;
        uint64_t id;
    };
    size_t totalRuns = 0, totalAccepted = 0, totalStops = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        Log log;
        Session session(&log);
        setUp(session, s);
        session.setOptions({ static_cast<RecordLevel>(rep % 3) });
        std::atomic<bool> done { false };
        std::atomic<size_t> accepted { 0 };
        std::vector<Call> calls;
        std::thread commander([&] {
            std::mt19937 rng = rngFor(4, rep * 10 + 1);
            while (!done.load()) {
                const Kind kind = static_cast<Kind>(rng() % 8);
                const uint64_t before = tick();
                bool ok = false;
                switch (kind) {
                case Step:
                    ok = session.step();
                    break;
                case Continue:
                    ok = session.continueRun();
                    break;
                case StepOver:
                    ok = session.stepOver();
                    break;
                case StepOut:
                    ok = session.stepOut();
                    break;
                case Pause:
                    ok = session.pause();
                    break;
                case RunTo:
                    ok = session.runTo(kMlpNodes[rng() % kMlpNodes.size()]);
                    break;
                case RunToUnknown:
                    ok = session.runTo(rng() % 2 ? std::string("no_such_node") : s.inputNames.at(0));
                    break;
                case Stop:
                    ok = session.stop();
                    break;
                }
                calls.push_back({ before, tick(), kind, ok });
                if (ok) ++accepted;
                if (std::shared_ptr<const PauseEvent> p = session.currentPause()) {
                    EXPECT_LE(p->runId, session.lastRunId());
                }
                yields(static_cast<int>(rng() % 4));
            }
        });
        // Each editor changes only its own breakpoints and knows what they must be.
        struct Own {
            bool enabled;
            bool watch;
        };
        std::map<int, Own> own[2];
        std::thread editors[2];
        for (int e = 0; e < 2; ++e)
            editors[e] = std::thread([&, e] {
                std::mt19937 rng = rngFor(4, rep * 10 + 2 + e);
                std::map<int, Own>& mine = own[e];
                while (!done.load()) {
                    const unsigned op = rng() % 6;
                    if (mine.size() < 4 || op == 0) {
                        Breakpoint b = rng() % 3 ? Breakpoint::onNode(kMlpNodes[rng() % kMlpNodes.size()],
                                           rng() % 2 ? OpPhase::Before : OpPhase::After)
                                                 : Breakpoint::watch(Condition::always());
                        b.ignoreCount = b.kind == Breakpoint::Kind::Watch ? rng() % 4 : 0;
                        const int id = session.addBreakpoint(b);
                        mine[id] = { true, b.kind == Breakpoint::Kind::Watch };
                        continue;
                    }
                    auto it = std::next(mine.begin(), static_cast<long>(rng() % mine.size()));
                    const int id = it->first;
                    if (op == 1) {
                        EXPECT_TRUE(session.removeBreakpoint(id));
                        EXPECT_FALSE(session.removeBreakpoint(id));
                        EXPECT_FALSE(session.setBreakpointEnabled(id, true));
                        mine.erase(it);
                    } else if (op <= 3) {
                        const bool on = op == 3;
                        EXPECT_TRUE(session.setBreakpointEnabled(id, on));
                        it->second.enabled = on;
                    } else if (op == 4) {
                        std::optional<Breakpoint> b = session.breakpoint(id);
                        ASSERT_TRUE(b);
                        b->ignoreCount = b->kind == Breakpoint::Kind::Watch ? rng() % 4 : 0;
                        b->enabled = rng() % 2;
                        EXPECT_TRUE(session.updateBreakpoint(id, *b));
                        it->second.enabled = b->enabled;
                    } else {
                        const std::optional<Breakpoint> b = session.breakpoint(id);
                        ASSERT_TRUE(b);
                        EXPECT_EQ(b->enabled, it->second.enabled);
                    }
                    yields(static_cast<int>(rng() % 8));
                }
            });

        std::mt19937 rng = rngFor(4, rep * 10);
        std::vector<Start> starts;
        while (starts.size() < kRuns || accepted.load() < kCommands) {
            if (!session.waitUntilIdle(std::chrono::seconds(60))) {
                ADD_FAILURE() << "run " << starts.size() << " did not end";
                break;
            }
            const uint64_t id = session.start(rng() % 2 ? StartMode::PauseAtEntry : StartMode::Run);
            starts.push_back({ tick(), id });
        }
        done = true;
        commander.join();
        for (std::thread& t : editors)
            t.join();
        session.stop();
        ASSERT_TRUE(session.waitUntilIdle(std::chrono::seconds(60)));
        ASSERT_TRUE(log.waitEnds(starts.size()));

        const std::vector<RunLog> runs = log.snapshot();
        ASSERT_EQ(runs.size(), starts.size());
        {
            std::lock_guard lock(log.m_mutex);
            EXPECT_EQ(log.strays, 0u);
            EXPECT_EQ(log.endedLocked(), starts.size());
        }
        for (size_t k = 0; k < starts.size(); ++k)
            EXPECT_EQ(starts[k].id, k + 1);
        expectConsistentRuns(runs, &ref, session.options().record != RecordLevel::None);

        // The run each command could reach is the last one whose start() had returned before it.
        size_t refusedWhileActive = 0, wentOnAfterStop = 0, unknownAccepted = 0, stops = 0;
        std::string firstProblem;
        for (const Call& c : calls) {
            auto after = std::partition_point(
                starts.begin(), starts.end(), [&](const Start& st) { return st.returned < c.before; });
            if (after == starts.begin()) continue;
            const RunLog& r = runs[static_cast<size_t>(after - starts.begin()) - 1];
            if (c.kind == RunToUnknown) {
                // Known once the first run has traced the model (it ended before the second start).
                if (c.ok && after - starts.begin() >= 2) ++unknownAccepted;
                continue;
            }
            if (!c.ok && c.after < r.lastActiveTick()) {
                ++refusedWhileActive;
                if (firstProblem.empty())
                    firstProblem = "command " + std::to_string(c.kind) + " refused during run " + std::to_string(r.id);
            }
            if (c.ok && c.kind == Stop) {
                ++stops;
                const auto late
                    = std::count_if(r.pauseTicks.begin(), r.pauseTicks.end(), [&](uint64_t t) { return t > c.after; });
                if (late > 1 || (late == 1 && r.status != RunStatus::Stopped)) {
                    ++wentOnAfterStop;
                    if (firstProblem.empty()) firstProblem = "run " + std::to_string(r.id) + " went on after a stop";
                }
            }
        }
        EXPECT_EQ(refusedWhileActive, 0u) << firstProblem;
        EXPECT_EQ(wentOnAfterStop, 0u) << firstProblem;
        EXPECT_EQ(unknownAccepted, 0u) << "runTo a node the graph does not have was accepted";
        EXPECT_GE(runs.size(), kRuns);
        EXPECT_GE(accepted.load(), kCommands);
        EXPECT_GT(stops, 0u);

        // Each editor's breakpoints as it left them; hit counts of the last run within what one run
        // can give (a node's event once, a watchpoint's once per op).
        const std::vector<Breakpoint> table = session.breakpoints();
        EXPECT_EQ(table.size(), own[0].size() + own[1].size());
        for (const Breakpoint& b : table) {
            const auto mine = own[0].count(b.id) ? own[0].find(b.id) : own[1].find(b.id);
            if (mine == own[1].end()) {
                ADD_FAILURE() << "breakpoint " << b.id << " is no editor's";
                continue;
            }
            EXPECT_EQ(b.enabled, mine->second.enabled) << b.str();
            EXPECT_EQ(b.kind == Breakpoint::Kind::Watch, mine->second.watch) << b.str();
            EXPECT_GE(b.hitCount, 0);
            EXPECT_LE(b.hitCount, b.kind == Breakpoint::Kind::Watch ? 5 : 1) << b.str();
        }
        totalRuns += runs.size();
        totalAccepted += accepted.load();
        totalStops += stops;
    }
    std::printf("commands across runs: %zu runs, %zu commands accepted, %zu stops accepted\n", totalRuns, totalAccepted,
        totalStops);
}

// Breakpoints removed, disabled, re-enabled, added and changed while a run is paused take effect
// at the run's next event: the pauses, their breakpoint ids, and every hit count and enabled state
// are those a simulation of the table gives, and hit counts restart with each run.
TEST(SessionLifecycle, BreakpointsRemovedAndDisabledDuringRuns)
{
    Watchdog dog("BreakpointsDuringRuns", std::chrono::seconds(300));
    const samples::Sample s = samples::makeSample("mlp");
    struct Event {
        std::string node;
        OpPhase phase;
    };
    std::vector<Event> events;
    for (const std::string& n : kMlpNodes)
        for (const OpPhase p : { OpPhase::Before, OpPhase::After })
            events.push_back({ n, p });
    struct Expected {
        Breakpoint::Kind kind;
        std::string node; // Node only
        OpPhase phase;
        bool never; // a watchpoint whose condition no value meets
        bool enabled;
        int64_t ignore;
        int64_t hits;
        bool matches(const Event& e) const
        {
            return !never && phase == e.phase && (kind == Breakpoint::Kind::Watch || node == e.node);
        }
    };
    size_t pausesSeen = 0, edits = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        std::mt19937 rng = rngFor(5, rep);
        Log log;
        Session session(&log);
        setUp(session, s);
        std::map<int, Expected> model;
        auto add = [&] {
            const unsigned kind = rng() % 4;
            const OpPhase phase = rng() % 2 ? OpPhase::Before : OpPhase::After;
            Breakpoint b = kind < 2
                ? Breakpoint::onNode(kMlpNodes[rng() % kMlpNodes.size()], phase)
                : Breakpoint::watch(kind == 2 ? Condition::always() : Condition::parse("max>1e9"), phase);
            b.ignoreCount = rng() % 4;
            const int id = session.addBreakpoint(b);
            model[id] = { b.kind, b.location, phase, kind == 3, true, b.ignoreCount, 0 };
        };
        auto edit = [&] {
            ++edits;
            const unsigned op = rng() % 5;
            if (model.empty() || op == 0) return add();
            auto it = std::next(model.begin(), static_cast<long>(rng() % model.size()));
            const int id = it->first;
            switch (op) {
            case 1:
                EXPECT_TRUE(session.removeBreakpoint(id));
                EXPECT_FALSE(session.removeBreakpoint(id));
                EXPECT_FALSE(session.setBreakpointEnabled(id, true));
                EXPECT_FALSE(session.updateBreakpoint(id, Breakpoint::onNode(kD0)));
                EXPECT_FALSE(session.breakpoint(id));
                model.erase(it);
                break;
            case 2:
            case 3:
                EXPECT_TRUE(session.setBreakpointEnabled(id, op == 3));
                it->second.enabled = op == 3;
                break;
            default: {
                std::optional<Breakpoint> b = session.breakpoint(id);
                ASSERT_TRUE(b);
                b->ignoreCount = rng() % 4;
                b->enabled = rng() % 2;
                b->hitCount = 99; // not taken: the count stays the session's
                EXPECT_TRUE(session.updateBreakpoint(id, *b));
                it->second.ignore = b->ignoreCount;
                it->second.enabled = b->enabled;
            }
            }
        };
        auto expectTable = [&](const char* when) {
            SCOPED_TRACE(when);
            const std::vector<Breakpoint> table = session.breakpoints();
            EXPECT_EQ(table.size(), model.size());
            for (const Breakpoint& b : table) {
                auto it = model.find(b.id);
                if (it == model.end()) {
                    ADD_FAILURE() << "breakpoint " << b.id << " was removed";
                    continue;
                }
                EXPECT_EQ(b.enabled, it->second.enabled) << b.str();
                EXPECT_EQ(b.ignoreCount, it->second.ignore) << b.str();
                EXPECT_EQ(b.hitCount, it->second.hits) << b.str();
            }
        };
        for (int k = 0; k < 3 + static_cast<int>(rng() % 4); ++k)
            add();
        size_t pauses = 0;
        for (size_t run = 0; run < 3; ++run) {
            SCOPED_TRACE("run " + std::to_string(run + 1));
            for (int k = static_cast<int>(rng() % 3); k > 0; --k)
                edit(); // while idle
            for (auto& [id, m] : model)
                m.hits = 0;
            log.runsExpected = run + 1;
            const uint64_t runId = session.start();
            bool stepping = false;
            for (size_t at = 0;;) {
                // The next pause, as the table says.
                std::optional<size_t> next;
                std::vector<int> ids;
                bool nodeHit = false;
                for (size_t ev = at; ev < events.size() && !next; ++ev) {
                    for (auto& [id, m] : model)
                        if (m.enabled && m.matches(events[ev]) && ++m.hits > m.ignore) {
                            ids.push_back(id);
                            nodeHit = nodeHit || m.kind == Breakpoint::Kind::Node;
                        }
                    if (!ids.empty() || stepping) next = ev;
                }
                if (!next) break;
                at = *next + 1;
                PauseEvent e = log.waitPause(++pauses);
                ASSERT_EQ(e.runId, runId);
                EXPECT_EQ(e.node, events[*next].node);
                EXPECT_EQ(e.phase, events[*next].phase);
                std::sort(e.breakpointIds.begin(), e.breakpointIds.end());
                EXPECT_EQ(e.breakpointIds, ids);
                EXPECT_EQ(e.reason,
                    ids.empty()   ? PauseReason::Step
                        : nodeHit ? PauseReason::Breakpoint
                                  : PauseReason::Watchpoint);
                expectTable("paused");
                for (int k = static_cast<int>(rng() % 4); k > 0; --k)
                    edit();
                expectTable("edited while paused");
                stepping = rng() % 4 == 0;
                EXPECT_TRUE(stepping ? session.step() : session.continueRun());
            }
            ASSERT_TRUE(log.waitEnds(run + 1));
            ASSERT_TRUE(session.waitUntilIdle(std::chrono::seconds(30)));
            EXPECT_EQ(log.pauseCount(), pauses) << "a pause the table does not call for";
            expectTable("after the run");
        }
        const std::vector<RunLog> runs = log.snapshot();
        expectConsistentRuns(runs, nullptr);
        for (const RunLog& r : runs)
            EXPECT_EQ(r.status, RunStatus::Completed);
        pausesSeen += pauses;
    }
    std::printf("breakpoints during runs: %zu pauses, %zu edits\n", pausesSeen, edits);
}

// A listener that starts the next run from runFinished cannot keep a session alive: the destructor
// returns, start() once it has begun returns 0 and starts nothing (a run accepted just before is
// dropped, never announced), and every announced run ended once, all but the last completed. A run
// left paused ends in the destructor, so the start() its runFinished makes is refused for certain.
TEST(SessionLifecycle, RunsChainedFromRunFinishedThenDestroyed)
{
    Watchdog dog("RunsChainedThenDestroyed", std::chrono::seconds(300));
    const samples::Sample s = samples::makeSample("mlp");
    const Reference ref = referenceOf(s);
    Clock::duration runTime {};
    {
        Log log;
        Session session(&log);
        setUp(session, s);
        const Clock::time_point t0 = Clock::now();
        session.start();
        ASSERT_TRUE(log.waitEnds(1));
        runTime = Clock::now() - t0;
    }
    Clock::duration longest {};
    size_t chainedRuns = 0, zeros = 0, dropped = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        std::mt19937 rng = rngFor(6, rep);
        // Destroyed while run `target` waits at its entry, at once, or after `target` runs and a random
        // part of the next.
        const bool endPaused = rep % 2 == 0;
        const size_t target = rep % 4 == 1 ? 0 : 1 + rng() % 8;
        Log log;
        auto session = std::make_unique<Session>(&log);
        setUp(*session, s);
        // 0: run; 1: paused at entry, continued by the listener; 2: a breakpoint continued by the listener.
        const int mode = static_cast<int>(rng() % 3);
        if (mode == 2) session->addBreakpoint(Breakpoint::onNode(kMlpNodes[rng() % kMlpNodes.size()]));
        auto modeOf = [&](uint64_t id) {
            return (endPaused && id == target) || mode == 1 ? StartMode::PauseAtEntry : StartMode::Run;
        };
        Session* sp = session.get();
        log.onPaused = [sp, endPaused, target](const PauseEvent& e) {
            if (!endPaused || e.runId != target) {
                EXPECT_TRUE(sp->continueRun());
            }
        };
        // The listener is in place before the first run starts (a run may end before start() returns),
        // and names the run it chains by the id of the run that ended; `chained` is the worker's alone
        // until the session is destroyed.
        std::vector<uint64_t> chained;
        int refused = 0;
        log.setOnFinished([&, sp](uint64_t ended) {
            try {
                chained.push_back(sp->start(modeOf(ended + 1)));
            } catch (const UsageError&) {
                ++refused;
            }
        });
        const uint64_t first = session->start(modeOf(1));
        if (endPaused) {
            ASSERT_TRUE(log.waitFor(
                [&] { return !log.runs.empty() && log.runs.back().id == target && !log.runs.back().pauses.empty(); }));
        } else if (target > 0) {
            ASSERT_TRUE(log.waitEnds(target));
            spinFor(upTo(rng, runTime));
        }
        const Clock::duration took = destroy(session, "destroying a session whose listener chains runs");
        longest = std::max(longest, took);
        EXPECT_LT(took, kDestroyBound);

        std::vector<uint64_t> ids { first }; // then what start() returned in runFinished
        ids.insert(ids.end(), chained.begin(), chained.end());
        const std::vector<RunLog> runs = log.snapshot();
        EXPECT_EQ(refused, 0);
        EXPECT_GE(runs.size(), target);
        expectConsistentRuns(runs, &ref);
        for (size_t k = 0; k + 1 < runs.size(); ++k)
            EXPECT_EQ(runs[k].status, RunStatus::Completed) << "run " << runs[k].id << " ended before the destructor";
        const size_t n = runs.size();
        ASSERT_EQ(ids.size(), n + 1);
        if (endPaused) {
            ASSERT_EQ(n, target);
            EXPECT_EQ(runs.back().status, RunStatus::Stopped);
            EXPECT_EQ(ids.back(), 0u) << "start() accepted a run while the session was being destroyed";
        }
        if (ids.back() == 0) {
            // The last run ended in the destructor, its listener's start() was refused.
            ++zeros;
            for (size_t k = 0; k < n; ++k)
                EXPECT_EQ(ids[k], k + 1);
        } else {
            // The run accepted last was dropped by the destructor before it began.
            ++dropped;
            for (size_t k = 0; k <= n; ++k)
                EXPECT_EQ(ids[k], k + 1);
        }
        chainedRuns += n;
    }
    std::printf("chained runs: %zu runs; the last start() refused %zu times, its run dropped %zu times; longest "
                "destructor %.3f ms\n",
        chainedRuns, zeros, dropped, ms(longest));
}
