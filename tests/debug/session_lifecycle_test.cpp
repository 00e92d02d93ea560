// Lifecycle of a debug session under concurrency, part one: a stop racing the report of a pause; a
// session destroyed mid-run at random moments and with queries pending (part two:
// session_lifecycle_commands_test.cpp). Every scenario repeats kReps times with the seed
// test * 1000 + repetition, so a failure names the repetition that reproduces it.

#include "debug/session_lifecycle_util.h"

#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;
using namespace opscope::debug::test::lifecycle;

// A stop given as a pause is being reported (before it, during the listener's callback, or while
// the worker waits) ends the run once: Stopped with no outputs, unless the run had already
// completed; at most the pause being reported when the stop came shows after it, and the run does
// not go on from there.
TEST(SessionLifecycle, StopRacingAPauseEndsTheRunOnce)
{
    Watchdog dog("StopRacingAPause", std::chrono::seconds(300));
    const samples::Sample s = samples::makeSample("mlp");
    const Reference ref = referenceOf(s);
    const std::vector<std::string> order { kD0 + ":before", kD1 + ":before", kD2 + ":after" };

    auto prepare = [&](Session& session) {
        setUp(session, s);
        session.addBreakpoint(Breakpoint::onNode(kD0));
        session.addBreakpoint(Breakpoint::onNode(kD1));
        session.addBreakpoint(Breakpoint::onNode(kD2, OpPhase::After));
        session.setOptions({ RecordLevel::Ops });
    };
    // The time from start() to the first pause's report, and to the end of a run continued from
    // each pause by its listener, in a fresh session: the stops below land from before the first
    // pause to after the run.
    Clock::duration toPause {}, toEnd {};
    for (int k = 0; k < 3; ++k) {
        Log log;
        Session session(&log);
        prepare(session);
        const Clock::time_point t0 = Clock::now();
        Clock::time_point paused;
        log.onPaused = [&](const PauseEvent& e) {
            if (e.sequence == 1) paused = Clock::now();
            session.continueRun();
        };
        session.start();
        ASSERT_TRUE(log.waitEnds(1));
        toEnd = std::max(toEnd, Clock::now() - t0);
        toPause = std::max(toPause, paused - t0);
    }

    int stoppedBefore = 0, stoppedAfter = 0, stoppedAtLast = 0, completed = 0, late = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        std::mt19937 rng = rngFor(1, rep);
        for (int iter = 0; iter < 10; ++iter) {
            SCOPED_TRACE("iteration " + std::to_string(iter));
            Log log;
            Session session(&log);
            prepare(session);
            // 0: the run stays at its first pause; 1: the listener continues from every pause; 2: from all
            // but the last, where the run stays (a stop there must still end it without outputs).
            const int resume = static_cast<int>(rng() % 3);
            // When to stop: 0 after a delay from start(); 1 as the first report begins; 2 from runStarted,
            // before the first op (the stop then meets no pause, only the first op event).
            const int when = static_cast<int>(rng() % 3);
            const int hookYields = static_cast<int>(rng() % 200);
            std::atomic<int> resumesRefused { 0 };
            log.onPaused = [&](const PauseEvent& e) {
                yields(hookYields);
                if (resume == 1 || (resume == 2 && e.sequence < order.size()))
                    if (!session.continueRun()) ++resumesRefused; // paused: the run is active
            };
            std::atomic<bool> stopped { false };
            std::atomic<uint64_t> stopTick { 0 };
            if (when == 2)
                log.onStarted = [&] {
                    stopped = session.stop();
                    stopTick = tick();
                };
            const uint64_t id = session.start();
            const size_t waitFor = resume == 0 ? 1 : 1 + rng() % order.size(); // the report to stop at
            if (when == 1) {
                ASSERT_TRUE(log.waitFor([&] { return log.pausesBegun >= waitFor || log.endedLocked() >= 1; }));
                yields(static_cast<int>(rng() % 200));
            } else if (when == 0) {
                spinFor(upTo(rng, (resume ? toEnd : toPause) * 3 / 2));
            }
            if (when != 2) {
                stopped = session.stop();
                stopTick = tick();
            }
            ASSERT_TRUE(log.waitEnds(1));
            ASSERT_TRUE(session.waitUntilIdle(std::chrono::seconds(30)));

            const std::vector<RunLog> runs = log.snapshot();
            ASSERT_EQ(runs.size(), 1u);
            expectConsistentRuns(runs, &ref);
            const RunLog& r = runs[0];
            EXPECT_EQ(r.id, id);
            EXPECT_EQ(resumesRefused, 0);
            std::vector<std::string> seen;
            for (const PauseEvent& e : r.pauses) {
                seen.push_back(key(e));
                EXPECT_EQ(e.reason, PauseReason::Breakpoint);
            }
            ASSERT_LE(seen.size(), order.size());
            EXPECT_TRUE(std::equal(seen.begin(), seen.end(), order.begin())) << "pauses out of order";
            const size_t after = static_cast<size_t>(
                std::count_if(r.pauseTicks.begin(), r.pauseTicks.end(), [&](uint64_t t) { return t > stopTick; }));
            EXPECT_LE(after, 1u) << "the run went on after the stop";
            if (after > 0) {
                EXPECT_EQ(r.status, RunStatus::Stopped);
            }
            if (resume != 1) {
                // Nothing resumes it from its first (or last) pause: only the stop ends the run.
                EXPECT_TRUE(stopped);
                EXPECT_EQ(r.status, RunStatus::Stopped);
                EXPECT_LE(seen.size(), resume == 0 ? 1u : order.size());
                if (when == 1) {
                    EXPECT_GE(seen.size(), waitFor);
                }
            }
            if (when == 2) {
                // Accepted before the first op: the run ends at that op's first event, having run nothing.
                EXPECT_TRUE(stopped);
                EXPECT_EQ(r.status, RunStatus::Stopped);
                EXPECT_TRUE(seen.empty());
                EXPECT_TRUE(r.record.ops.empty()) << r.record.ops.size() << " ops ran after the stop";
            }
            if (r.status == RunStatus::Completed) {
                EXPECT_EQ(resume, 1);
                EXPECT_EQ(seen.size(), order.size());
                EXPECT_EQ(after, 0u);
            } else {
                EXPECT_TRUE(stopped) << "stopped, yet stop() said no run was active";
            }
            // The run is over: nothing paused, commands are dropped.
            EXPECT_FALSE(session.isRunning());
            EXPECT_FALSE(session.isPaused());
            EXPECT_EQ(session.currentPause(), nullptr);
            EXPECT_FALSE(session.stop());
            EXPECT_FALSE(session.continueRun());
            EXPECT_FALSE(session.step());
            EXPECT_EQ(session.lastRunId(), id);
            EXPECT_EQ(session.record().runId, id);
            EXPECT_EQ(session.record().status, r.status);
            if (r.status == RunStatus::Completed)
                ++completed;
            else
                ++(seen.empty() ? stoppedBefore : seen.size() == order.size() ? stoppedAtLast : stoppedAfter);
            late += after > 0 ? 1 : 0;
        }
    }
    std::printf("stop racing a pause: %d stopped before the first pause, %d after one, %d at the last (%d reported "
                "after the stop), %d completed first (calibration: %.3f ms to the pause, %.3f ms to the end)\n",
        stoppedBefore, stoppedAfter, stoppedAtLast, late, completed, ms(toPause), ms(toEnd));
}

// A session destroyed at a random moment of a run (before the worker took it, running, paused,
// stepping) returns within the bound; the run, if it began, ends once: stopped with a record that
// is a prefix of a complete run's, or completed with the reference outputs.
TEST(SessionLifecycle, DestroyMidRunAtRandomMoments)
{
    Watchdog dog("DestroyMidRun", std::chrono::seconds(600));
    struct Model {
        samples::Sample sample;
        Reference ref;
        Clock::duration runTime[4] {};
    };
    std::vector<Model> models;
    for (const char* name : { "mlp", "lenet", "mini-resnet" }) {
        Model m;
        m.sample = samples::makeSample(name);
        m.ref = referenceOf(m.sample);
        models.push_back(std::move(m));
    }
    // Modes: 0 run; 1 a watchpoint on every op, continued by the listener; 2 paused at entry and
    // stepped by the listener; 3 paused at entry, left there.
    auto prepare = [](Session& session, const Model& m, int mode, RecordLevel level) {
        setUp(session, m.sample);
        session.setOptions({ level });
        if (mode == 1) session.addBreakpoint(Breakpoint::watch(Condition::always()));
    };
    auto drive = [](Log& log, Session* session, int mode) {
        if (mode == 1) log.onPaused = [session](const PauseEvent&) { session->continueRun(); };
        if (mode == 2) log.onPaused = [session](const PauseEvent&) { session->step(); };
    };
    for (Model& m : models)
        for (int mode = 0; mode < 3; ++mode) {
            Log log;
            auto session = std::make_unique<Session>(&log);
            prepare(*session, m, mode, RecordLevel::Ops);
            drive(log, session.get(), mode);
            const Clock::time_point t0 = Clock::now();
            session->start(mode >= 2 ? StartMode::PauseAtEntry : StartMode::Run);
            ASSERT_TRUE(log.waitEnds(1));
            m.runTime[mode] = Clock::now() - t0;
            m.runTime[3] = m.runTime[0];
        }

    Clock::duration longest {};
    int began = 0, stopped = 0, completed = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        std::mt19937 rng = rngFor(2, rep);
        for (size_t iter = 0; iter < 2 * models.size(); ++iter) {
            const Model& m = models[iter % models.size()];
            const int mode = static_cast<int>(rng() % 4);
            const RecordLevel level = static_cast<RecordLevel>(rng() % 3);
            SCOPED_TRACE(m.sample.name + ", mode " + std::to_string(mode));
            Log log;
            auto session = std::make_unique<Session>(&log);
            prepare(*session, m, mode, level);
            drive(log, session.get(), mode);
            const uint64_t id = session->start(mode >= 2 ? StartMode::PauseAtEntry : StartMode::Run);
            EXPECT_EQ(id, 1u);
            spinFor(upTo(rng, m.runTime[mode] * 6 / 5));
            const Clock::duration took = destroy(session, "destroying a session mid-run");
            longest = std::max(longest, took);
            EXPECT_LT(took, kDestroyBound);

            const std::vector<RunLog> runs = log.snapshot();
            ASSERT_LE(runs.size(), 1u);
            {
                std::lock_guard lock(log.m_mutex);
                EXPECT_EQ(log.strays, 0u);
                EXPECT_EQ(log.endedLocked(), runs.size()) << "an end without a start, or a start without an end";
            }
            expectConsistentRuns(runs, &m.ref, level != RecordLevel::None);
            if (runs.empty()) continue; // dropped before the worker took it
            ++began;
            const RunLog& r = runs[0];
            (r.status == RunStatus::Stopped ? stopped : completed)++;
            if (mode == 3) {
                EXPECT_EQ(r.status, RunStatus::Stopped);
                EXPECT_LE(r.pauses.size(), 1u);
            }
            if (mode == 2 && r.status == RunStatus::Completed) {
                EXPECT_EQ(r.pauses.size(), 2 * m.ref.ops.size()) << "a step stops at both events of every op";
            }
            if (mode == 1 && r.status == RunStatus::Completed) {
                EXPECT_EQ(r.pauses.size(), m.ref.ops.size());
            }
        }
    }
    std::printf("destroy mid-run: %d runs began (%d stopped, %d completed) of %d; longest destructor %.3f ms\n", began,
        stopped, completed, kReps * static_cast<int>(2 * models.size()), ms(longest));
}

// Destroying a session drops the queries still waiting (their replies never come) and waits for
// the one being answered, which answers right; replies to queries a listener posts while the run
// goes on are right or name the tensor, and none is under way when the destructor returns.
TEST(SessionLifecycle, DestroyWithQueriesPending)
{
    Watchdog dog("DestroyWithQueriesPending", std::chrono::seconds(300));
    const samples::Sample s = samples::makeSample("lenet");
    const Reference ref = referenceOf(s);
    // The run time of a session that keeps tensors and posts two queries per pause.
    Clock::duration runTime {};
    {
        Log log;
        Session session(&log);
        setUp(session, s);
        session.setOptions({ RecordLevel::Tensors });
        session.addBreakpoint(Breakpoint::watch(Condition::always()));
        log.onPaused = [&](const PauseEvent& e) {
            session.requestSummary(e.focusTensor()->name, [](auto&&...) {});
            session.requestSlice(e.focusTensor()->name, {}, [](auto&&...) {});
            session.continueRun();
        };
        const Clock::time_point t0 = Clock::now();
        session.start();
        ASSERT_TRUE(log.waitEnds(1));
        runTime = Clock::now() - t0;
        session.queries().drain();
    }

    int answered = 0, named = 0, posted = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        SCOPED_TRACE("repetition " + std::to_string(rep));
        std::mt19937 rng = rngFor(3, rep);

        // One query answered slowly, two waiting behind it.
        {
            // Declared before the session: its query thread uses them until the session is gone.
            std::mutex mutex;
            std::condition_variable cv;
            bool began = false, release = false, ended = false;
            std::vector<std::string> replies;
            Log log;
            auto session = std::make_unique<Session>(&log);
            setUp(*session, s);
            Breakpoint b = Breakpoint::watch(Condition::always());
            b.ignoreCount = rng() % ref.ops.size();
            session->addBreakpoint(b);
            session->start();
            const PauseEvent e = log.waitPause(1);
            const PausedTensor* focus = e.focusTensor();
            ASSERT_NE(focus, nullptr);
            const TensorStats expected = computeStats(focus->values.view());
            const int tail = 1000 + static_cast<int>(rng() % 1000); // the answer goes on after its release
            session->requestSummary(focus->name,
                [&](const std::string& name, std::optional<Session::TensorSummary> result, const std::string& error) {
                    std::unique_lock lock(mutex);
                    began = true;
                    replies.push_back("summary " + name);
                    cv.notify_all();
                    cv.wait(lock, [&] { return release; });
                    lock.unlock();
                    yields(tail);
                    lock.lock();
                    EXPECT_TRUE(error.empty()) << error;
                    if (result) {
                        EXPECT_EQ(result->shape, focus->values.shape());
                        EXPECT_EQ(result->stats.count, expected.count);
                        EXPECT_EQ(result->stats.min, expected.min);
                        EXPECT_EQ(result->stats.max, expected.max);
                        EXPECT_EQ(result->stats.mean, expected.mean);
                        uint64_t total = result->histogram.nan + result->histogram.inf;
                        for (uint64_t n : result->histogram.bins)
                            total += n;
                        EXPECT_EQ(total, static_cast<uint64_t>(expected.count));
                    } else {
                        ADD_FAILURE() << "no summary of a tensor of the paused node";
                    }
                    ended = true;
                });
            {
                std::unique_lock lock(mutex);
                ASSERT_TRUE(cv.wait_for(lock, Recorder::kTimeout, [&] { return began; }));
            }
            session->requestSummary(focus->name, [&](const std::string& name, auto&&...) {
                std::lock_guard lock(mutex);
                replies.push_back("summary " + name);
            });
            session->requestSlice(focus->name, {}, [&](const std::string& name, auto&&...) {
                std::lock_guard lock(mutex);
                replies.push_back("slice " + name);
            });
            EXPECT_EQ(session->queries().posted(), 3u);
            EXPECT_EQ(session->queries().completed(), 0u);
            EXPECT_EQ(session->queries().dropped(), 0u);
            // The destructor has dropped the waiting queries when it stops the run; then the answer
            // under way may finish.
            log.setOnFinished([&](uint64_t) {
                std::lock_guard lock(mutex);
                release = true;
                cv.notify_all();
            });
            destroy(session, "destroying a session answering a query");
            std::lock_guard lock(mutex);
            EXPECT_TRUE(ended) << "the destructor returned before the answer under way";
            EXPECT_EQ(replies, std::vector<std::string> { "summary " + focus->name });
            const std::vector<RunLog> runs = log.snapshot();
            ASSERT_EQ(runs.size(), 1u);
            EXPECT_EQ(runs[0].status, RunStatus::Stopped);
            expectConsistentRuns(runs, &ref);
        }

        // Queries posted by the listener at each pause of a stepped run, destroyed at a random moment.
        {
            struct Replies {
                std::mutex mutex;
                std::map<std::string, Tensor> tensors; // what each queried tensor held when paused
                int posted = 0, began = 0, ended = 0, answered = 0, named = 0;
            } q;
            Log log;
            auto session = std::make_unique<Session>(&log);
            setUp(*session, s);
            session->setOptions({ RecordLevel::Tensors });
            session->addBreakpoint(
                Breakpoint::watch(Condition::always(), rng() % 2 ? OpPhase::After : OpPhase::Before));
            auto check = [&q](const std::string& name, bool found, const std::string& error, auto&& compare) {
                Tensor t;
                {
                    std::lock_guard lock(q.mutex);
                    ++q.began;
                    t = q.tensors.at(name);
                }
                if (found) {
                    compare(t);
                } else {
                    // After the pause, an input (not kept in the record) is no longer found.
                    EXPECT_NE(error.find(name), std::string::npos) << error;
                }
                std::lock_guard lock(q.mutex);
                ++(found ? q.answered : q.named);
                ++q.ended;
            };
            Session* sp = session.get();
            log.onPaused = [&q, sp, check](const PauseEvent& e) {
                const PausedTensor* t = e.focusTensor();
                {
                    std::lock_guard lock(q.mutex);
                    q.tensors[t->name] = t->values;
                    q.posted += 2;
                }
                sp->requestSummary(t->name,
                    [check](
                        const std::string& name, std::optional<Session::TensorSummary> r, const std::string& error) {
                        check(name, r.has_value(), error, [&](const Tensor& want) {
                            const TensorStats stats = computeStats(want.view());
                            EXPECT_EQ(r->stats.count, stats.count);
                            EXPECT_EQ(r->stats.min, stats.min);
                            EXPECT_EQ(r->stats.max, stats.max);
                        });
                    });
                sp->requestSlice(t->name, {},
                    [check](const std::string& name, std::optional<TensorSlice> r, const std::string& error) {
                        check(name, r.has_value(), error, [&](const Tensor& want) {
                            const TensorSlice expected = sliceOf(want.view(), {});
                            EXPECT_EQ(r->values, expected.values);
                        });
                    });
                sp->step();
            };
            session->start();
            spinFor(upTo(rng, runTime * 6 / 5));
            destroy(session, "destroying a session with queries from its listener");
            std::lock_guard lock(q.mutex);
            EXPECT_EQ(q.began, q.ended) << "an answer still under way after the destructor";
            EXPECT_LE(q.ended, q.posted);
            answered += q.answered;
            named += q.named;
            posted += q.posted;
            expectConsistentRuns(log.snapshot(), &ref, true);
        }
    }
    std::printf("queries at destruction: %d posted by listeners, %d answered, %d named a tensor gone\n", posted,
        answered, named);
}

// Over at least 200 runs and 1,000 accepted commands (stop among them) per repetition, while two
// threads edit breakpoints: a command is refused only when no run is active, a run goes on after an
// accepted stop at most to the pause being reported, every run ends once with the right outputs, and
// each editor's breakpoints are exactly as it left them.
