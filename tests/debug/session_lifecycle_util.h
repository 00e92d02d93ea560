#pragma once

// What the session lifecycle scenarios share (tests/debug/session_lifecycle*_test.cpp): repetitions
// and seeds, one clock for every thread, a recorder that checks the listener's protocol as it
// records, the samples' reference runs, a destruction timed against its bound. One clock for every
// test file of the binary.

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

namespace opscope::debug::test::lifecycle {

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
inline std::atomic<uint64_t> gClock { 0 };
inline uint64_t tick()
{
    return gClock.fetch_add(1) + 1;
}

inline std::mt19937 rngFor(int test, int rep)
{
    return std::mt19937(static_cast<uint32_t>(test * 1000 + rep));
}

// A random duration in [0, hi].
inline Clock::duration upTo(std::mt19937& rng, Clock::duration hi)
{
    std::uniform_int_distribution<int64_t> d(0, std::chrono::duration_cast<std::chrono::nanoseconds>(hi).count());
    return std::chrono::nanoseconds(d(rng));
}

// Varies when the next action happens; not a synchronisation.
inline void spinFor(Clock::duration d)
{
    const Clock::time_point until = Clock::now() + d;
    while (Clock::now() < until)
        std::this_thread::yield();
}

inline void yields(int n)
{
    for (int i = 0; i < n; ++i)
        std::this_thread::yield();
}

inline bool sameBits(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

inline double ms(Clock::duration d)
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

inline void setUp(Session& session, const samples::Sample& s)
{
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
}

// The outputs and the op order of one complete run of `s` in a session of its own.
struct Reference {
    std::vector<Tensor> outputs;
    std::vector<std::string> ops;
};
inline Reference referenceOf(const samples::Sample& s)
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
inline Clock::duration destroy(std::unique_ptr<Session>& session, const char* what)
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
inline void expectConsistentRuns(
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

} // namespace opscope::debug::test::lifecycle
