// Lifecycle of a debug session under concurrency: a stop racing the report of a pause; a session
// destroyed mid-run, with queries pending, while its listener chains runs from runFinished, or in a
// training step's backward pass; thousands of commands across hundreds of runs while other threads
// edit the breakpoints; breakpoints removed and disabled during runs. Every scenario repeats kReps
// times with the seed test * 1000 + repetition, so a failure names the repetition that reproduces it.

#include "core/error.h"
#include "debug/session_test_util.h"
#include "exec/gradient.h"
#include "gluon/loss.h"
#include "gluon/trainer.h"
#include "models/datasets.h"
#include "models/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kReps = 20;
// A destructor ends the run at its next op event: taking longer means it waited for something else.
constexpr std::chrono::seconds kDestroyBound { 10 };

// mlp: Dense(relu) → Dense(relu) → Dense.
const std::string kD0 = "hybridsequential0_dense0_fwd";
const std::string kR0 = "hybridsequential0_dense0_relu_fwd";
const std::string kD1 = "hybridsequential0_dense1_fwd";
const std::string kR1 = "hybridsequential0_dense1_relu_fwd";
const std::string kD2 = "hybridsequential0_dense2_fwd";
const std::vector<std::string> kMlpNodes { kD0, kR0, kD1, kR1, kD2 };

// One clock for every thread of a test (sequentially consistent): what a thread did before taking a
// tick happened before what another thread does after taking a larger one.
std::atomic<uint64_t> gClock { 0 };
uint64_t tick()
{
    return gClock.fetch_add(1) + 1;
}

std::mt19937 rngFor(int test, int rep)
{
    return std::mt19937(static_cast<uint32_t>(test * 1000 + rep));
}

// A random duration in [0, hi].
Clock::duration upTo(std::mt19937& rng, Clock::duration hi)
{
    std::uniform_int_distribution<int64_t> d(0, std::chrono::duration_cast<std::chrono::nanoseconds>(hi).count());
    return std::chrono::nanoseconds(d(rng));
}

// Varies when the next action happens; not a synchronisation.
void spinFor(Clock::duration d)
{
    const Clock::time_point until = Clock::now() + d;
    while (Clock::now() < until)
        std::this_thread::yield();
}

void yields(int n)
{
    for (int i = 0; i < n; ++i)
        std::this_thread::yield();
}

bool sameBits(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

double ms(Clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

// What a Log keeps of one run.
struct RunLog {
    uint64_t id = 0;
    uint64_t startedTick = 0;
    std::vector<uint64_t> pauseTicks; // taken as each pause's report began
    std::vector<PauseEvent> pauses;
    int ends = 0; // runFinished and runFailed calls
    bool failed = false;
    RunStatus status = RunStatus::Completed;
    std::vector<Tensor> outputs; // copies
    RunRecord record;

    // When the gate was surely open: from start() returning up to the last report made during the run.
    uint64_t lastActiveTick() const
    {
        return pauseTicks.empty() ? startedTick : std::max(startedTick, pauseTicks.back());
    }
};

// A Recorder that also keeps each run apart with the tick of every report, wakes its waiters when a
// pause's report begins (before the hook runs), and calls onFinished after recording an end.
class Log : public Recorder {
public:
    void runStarted(uint64_t runId) override
    {
        const uint64_t t = tick();
        {
            std::lock_guard lock(m_mutex);
            RunLog r;
            r.id = runId;
            r.startedTick = t;
            runs.push_back(std::move(r));
        }
        Recorder::runStarted(runId);
    }
    void paused(const PauseEvent& e) override
    {
        const uint64_t t = tick();
        {
            std::lock_guard lock(m_mutex);
            if (runs.empty() || runs.back().id != e.runId) {
                ++strays;
            } else {
                runs.back().pauseTicks.push_back(t);
                runs.back().pauses.push_back(e);
            }
            ++pausesBegun;
        }
        m_cv.notify_all();
        Recorder::paused(e);
    }
    void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record) override
    {
        {
            std::lock_guard lock(m_mutex);
            if (RunLog* r = find(runId)) {
                ++r->ends;
                r->status = record.status;
                r->outputs.clear();
                for (const Tensor& t : outputs)
                    r->outputs.push_back(t.copy());
                r->record = record;
            } else {
                ++strays;
            }
        }
        Recorder::runFinished(runId, outputs, record);
        callFinished(runId);
    }
    void runFailed(uint64_t runId, const std::string& error) override
    {
        {
            std::lock_guard lock(m_mutex);
            if (RunLog* r = find(runId)) {
                ++r->ends;
                r->failed = true;
            } else {
                ++strays;
            }
        }
        Recorder::runFailed(runId, error);
        callFinished(runId);
    }

    void setOnFinished(std::function<void(uint64_t)> f)
    {
        std::lock_guard lock(m_mutex);
        onFinished = std::move(f);
    }
    template <class Pred> bool waitFor(Pred pred)
    {
        std::unique_lock lock(m_mutex);
        return m_cv.wait_for(lock, kTimeout, pred);
    }
    // Under m_mutex.
    size_t endedLocked() const { return m_finished.size() + m_failed.size(); }
    bool waitEnds(size_t n)
    {
        return waitFor([&] { return endedLocked() >= n; });
    }
    std::vector<RunLog> snapshot()
    {
        std::lock_guard lock(m_mutex);
        return runs;
    }

    std::vector<RunLog> runs;
    size_t pausesBegun = 0;
    size_t strays = 0; // reports of a run runStarted did not announce

private:
    RunLog* find(uint64_t runId)
    {
        for (RunLog& r : runs)
            if (r.id == runId) return &r;
        return nullptr;
    }
    void callFinished(uint64_t runId)
    {
        std::function<void(uint64_t)> hook;
        {
            std::lock_guard lock(m_mutex);
            hook = onFinished;
        }
        if (hook) hook(runId);
    }
    std::function<void(uint64_t)> onFinished;
};

void setUp(Session& session, const samples::Sample& s)
{
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
}

// The outputs and the op order of one complete run of `s` in a session of its own.
struct Reference {
    std::vector<Tensor> outputs;
    std::vector<std::string> ops;
};
Reference referenceOf(const samples::Sample& s)
{
    Log log;
    Session session(&log);
    setUp(session, s);
    session.setOptions({ RecordLevel::Ops });
    session.start();
    EXPECT_TRUE(log.waitEnds(1));
    const std::vector<RunLog> runs = log.snapshot();
    Reference ref;
    if (runs.size() != 1 || runs[0].status != RunStatus::Completed || runs[0].failed) {
        ADD_FAILURE() << "the reference run of " << s.name << " did not complete";
        return ref;
    }
    ref.outputs = runs[0].outputs;
    for (const OpRecord& r : runs[0].record.ops)
        ref.ops.push_back(r.node);
    return ref;
}

// Destroys the session under a watchdog; returns how long the destructor took.
Clock::duration destroy(std::unique_ptr<Session>& session, const char* what)
{
    Watchdog dog(what, std::chrono::seconds(60));
    const Clock::time_point t0 = Clock::now();
    session.reset();
    return Clock::now() - t0;
}

// Every run the session announced ended exactly once and did not fail, ids count up from `firstId`,
// pauses belong to their run and are numbered 1, 2, …, a stopped run has no outputs, a completed one
// the reference's outputs bit for bit, and its record is its own (all ops, in the reference's order,
// when `fullRecord`; a prefix of them when stopped).
void expectConsistentRuns(
    const std::vector<RunLog>& runs, const Reference* ref, bool fullRecord = false, uint64_t firstId = 1)
{
    for (size_t k = 0; k < runs.size(); ++k) {
        const RunLog& r = runs[k];
        SCOPED_TRACE("run " + std::to_string(r.id));
        EXPECT_EQ(r.id, firstId + k);
        EXPECT_EQ(r.ends, 1);
        EXPECT_FALSE(r.failed);
        for (size_t p = 0; p < r.pauses.size(); ++p) {
            EXPECT_EQ(r.pauses[p].runId, r.id);
            EXPECT_EQ(r.pauses[p].sequence, p + 1);
        }
        if (r.ends != 1 || r.failed) continue;
        EXPECT_EQ(r.record.runId, r.id);
        EXPECT_EQ(r.record.status, r.status);
        if (r.status == RunStatus::Stopped) {
            EXPECT_TRUE(r.outputs.empty());
        } else if (ref) {
            EXPECT_EQ(r.outputs.size(), ref->outputs.size());
            for (size_t o = 0; o < r.outputs.size() && o < ref->outputs.size(); ++o)
                EXPECT_TRUE(sameBits(r.outputs[o], ref->outputs[o])) << "output " << o;
        }
        if (fullRecord && ref) {
            std::vector<std::string> ops;
            for (const OpRecord& op : r.record.ops)
                ops.push_back(op.node);
            if (r.status == RunStatus::Completed)
                EXPECT_EQ(ops, ref->ops);
            else
                EXPECT_TRUE(ops.size() <= ref->ops.size() && std::equal(ops.begin(), ops.end(), ref->ops.begin()))
                    << ops.size() << " ops recorded, not a prefix of the complete run's";
        }
    }
}

} // namespace

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

namespace {

// A sample, its mini-batch, a loss and a trainer of its own.
struct TrainSetup {
    samples::Sample sample;
    Tensor x, y;
    std::shared_ptr<gluon::SoftmaxCrossEntropyLoss> loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>();
    std::shared_ptr<gluon::Trainer> trainer;

    // With the weights of `from` when given, else the sample's own.
    explicit TrainSetup(const std::string& name, const TrainSetup* from = nullptr)
        : sample(samples::makeSample(name, 0))
    {
        if (from) {
            x = from->x;
            y = from->y;
        } else if (name == "mini-resnet") {
            Generator gen(11);
            x = Tensor::uniform({ 4, 3, 32, 32 }, -1, 1, &gen);
            y = Tensor(Shape { 4 });
            for (int64_t i = 0; i < 4; ++i)
                y.at(i) = static_cast<float>((i * 7) % 10);
        } else {
            const samples::Dataset d = name == "lenet" ? samples::digits(8, 5) : samples::spirals(16, 3, 0.15, 5);
            x = d.data;
            y = d.label;
        }
        sample.block->call(x); // parameters of deferred shape initialised
        if (from) {
            const gluon::ParameterDict params = from->sample.block->collect_params();
            for (const gluon::ParamPtr& p : sample.block->collect_params().values())
                p->set_data(params.at(p->name())->data().copy());
        }
        trainer = std::make_shared<gluon::Trainer>(sample.block->collect_params(), "sgd",
            std::map<std::string, double> { { "learning_rate", 0.1 }, { "momentum", 0.9 } });
    }
    void attach(Session& session)
    {
        session.load(sample.block, sample.inputNames);
        session.setInputs({ x });
        session.setLabel(y);
        session.setTraining(loss, trainer);
    }
    // Every parameter's values and gradient, copied.
    std::map<std::string, Tensor> values() const
    {
        std::map<std::string, Tensor> out;
        for (const gluon::ParamPtr& p : sample.block->collect_params().values()) {
            out[p->name()] = p->data().copy();
            if (p->grad_req() != "null") out[p->name() + " grad"] = p->grad().copy();
        }
        return out;
    }
    // One complete step in a session of its own.
    void fullStep()
    {
        Log log;
        Session session(&log);
        attach(session);
        session.startTrainStep();
        ASSERT_TRUE(log.waitEnds(1));
        const auto result = session.lastTrainStep();
        ASSERT_TRUE(result);
        EXPECT_TRUE(result->updated) << result->error;
    }
};

// The names of the values that differ between two snapshots.
std::vector<std::string> differing(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b)
{
    std::vector<std::string> out;
    for (const auto& [name, t] : a)
        if (!b.count(name) || !sameBits(t, b.at(name))) out.push_back(name);
    return out;
}

} // namespace

// A training step whose session is destroyed in its backward pass (paused there, or running on
// from there) applies no update: every parameter, running statistic and gradient keeps its bits,
// and the trainer's state too (a later step gives the same weights as a copy that never took the
// destroyed step). A step the destructor came too late for is complete: it updated.
TEST(SessionLifecycle, TrainingStepDestroyedInItsBackwardPass)
{
    Watchdog dog("TrainingStepDestroyedInBackward", std::chrono::seconds(600));
    // From the first backward pause to the end of a step continued by its listener, per model.
    std::map<std::string, Clock::duration> backwardTime;
    auto modelOf = [](int rep) { return rep % 5 == 3 ? "mini-resnet" : rep % 5 == 1 ? "lenet" : "mlp"; };
    for (const char* name : { "mlp", "lenet", "mini-resnet" }) {
        TrainSetup t(name);
        Log log;
        Session session(&log);
        t.attach(session);
        session.addBreakpoint(Breakpoint::watch(Condition::parse("grad")));
        Clock::time_point first;
        log.onPaused = [&](const PauseEvent& e) {
            if (e.sequence == 1) first = Clock::now();
            session.continueRun();
        };
        session.startTrainStep();
        ASSERT_TRUE(log.waitEnds(1));
        backwardTime[name] = Clock::now() - first;
        ASSERT_TRUE(session.lastTrainStep() && session.lastTrainStep()->updated);
    }

    int stoppedPaused = 0, stoppedRunning = 0, completed = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        const std::string name = modelOf(rep);
        SCOPED_TRACE("repetition " + std::to_string(rep) + ", " + name);
        std::mt19937 rng = rngFor(7, rep);
        TrainSetup a(name);
        TrainSetup b(name, &a); // the same weights, never in a destroyed step
        const std::map<std::string, Tensor> before = a.values();
        ASSERT_TRUE(differing(before, b.values()).empty());

        Log log;
        auto session = std::make_unique<Session>(&log);
        a.attach(*session);
        session->setOptions({ RecordLevel::Ops });
        Breakpoint bp = Breakpoint::watch(Condition::parse("grad"));
        bp.ignoreCount = rng() % 3;
        session->addBreakpoint(bp);
        const bool staysPaused = rep % 2 == 0;
        Session* sp = session.get();
        if (!staysPaused) log.onPaused = [sp](const PauseEvent&) { sp->continueRun(); };
        session->startTrainStep();
        const PauseEvent e = log.waitPause(1);
        const std::shared_ptr<const Graph> graph = session->graph();
        ASSERT_TRUE(graph);
        ASSERT_LT(e.nodeId, graph->size());
        EXPECT_TRUE(isGradientNode(graph->node(e.nodeId))) << e.node << " is not in the backward pass";
        if (staysPaused)
            yields(static_cast<int>(rng() % 100));
        else
            spinFor(upTo(rng, backwardTime.at(name) * 6 / 10));
        EXPECT_LT(destroy(session, "destroying a session in a training step's backward pass"), kDestroyBound);

        const std::vector<RunLog> runs = log.snapshot();
        ASSERT_EQ(runs.size(), 1u);
        expectConsistentRuns(runs, nullptr);
        const RunLog& r = runs[0];
        const std::map<std::string, Tensor> after = a.values();
        if (r.status == RunStatus::Stopped) {
            (staysPaused ? stoppedPaused : stoppedRunning)++;
            EXPECT_EQ(differing(before, after), std::vector<std::string> {}) << "changed by a destroyed step";
            size_t backward = 0;
            for (const OpRecord& op : r.record.ops)
                backward += isGradientNode(graph->node(op.nodeId)) ? 1 : 0;
            EXPECT_GT(backward, static_cast<size_t>(bp.ignoreCount)) << "destroyed before its backward pass";
        } else {
            ++completed;
            EXPECT_FALSE(staysPaused) << "a paused step completed";
            EXPECT_FALSE(differing(before, after).empty()) << "a completed step changed nothing";
            EXPECT_GT(r.outputs.size(), 1u); // the loss and the gradients
            b.fullStep(); // the step `a` took
        }
        // The trainer took no step either: one more step gives `a` the weights `b` gets.
        a.fullStep();
        b.fullStep();
        EXPECT_EQ(differing(a.values(), b.values()), std::vector<std::string> {});
    }
    std::printf("training steps destroyed in the backward pass: %d while paused, %d while running, %d completed "
                "first\n",
        stoppedPaused, stoppedRunning, completed);
}
