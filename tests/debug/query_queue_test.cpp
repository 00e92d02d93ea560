// The query thread of a session: newer requests of a kind replace waiting older ones; replies to
// paused-state requests come without resuming the run.

#include "debug/query_queue.h"
#include "debug/session_test_util.h"
#include "models/registry.h"

#include <atomic>
#include <future>
#include <gtest/gtest.h>
#include <numeric>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;

TEST(QueryQueue, NewerRequestsOfAKindReplaceWaitingOnes)
{
    Watchdog dog("QueryQueue.Replace");
    QueryQueue q;
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::vector<int> ran;
    std::mutex m;
    q.post(0, [gate] { gate.wait(); }); // occupies the thread
    for (int i = 1; i <= 100; ++i)
        q.post(1, [&, i] {
            std::lock_guard lock(m);
            ran.push_back(i);
        });
    q.post(2, [&] {
        std::lock_guard lock(m);
        ran.push_back(-1);
    });
    release.set_value();
    q.drain();
    // Only the newest of kind 1 ran, then kind 2 (posted later), each once.
    EXPECT_EQ(ran, (std::vector<int> { 100, -1 }));
    EXPECT_EQ(q.posted(), 102u);
    EXPECT_EQ(q.completed(), 3u);
    EXPECT_EQ(q.dropped(), 99u);
}

TEST(QueryQueue, ClearDropsWaitingJobsAndAThrowingJobDoesNotStopTheThread)
{
    Watchdog dog("QueryQueue.Clear");
    QueryQueue q;
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<int> ran = 0;
    q.post(0, [gate] { gate.wait(); });
    q.post(1, [&] { ++ran; });
    q.clear();
    release.set_value();
    q.drain();
    EXPECT_EQ(ran, 0);
    q.post(1, [] { throw std::runtime_error("x"); });
    q.post(2, [&] { ++ran; });
    q.drain();
    EXPECT_EQ(ran, 1);
}

TEST(Session, AsynchronousRequestsAnswerWhilePausedAndTheNewestWins)
{
    Watchdog dog("Session.AsyncRequests");
    Recorder listener;
    Session session(&listener);
    samples::Sample s = samples::makeSample("lenet");
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    session.start(StartMode::PauseAtEntry);
    const PauseEvent e = listener.waitPause(1);
    ASSERT_FALSE(e.tensors.empty());
    const std::string name = e.tensors[0].name; // the data input, 1x1x28x28

    std::mutex m;
    std::condition_variable cv;
    std::vector<int> binsSeen;
    std::string lastError;
    int replies = 0;
    for (int bins = 1; bins <= 50; ++bins)
        session.requestSummary(
            name,
            [&](const std::string& n, std::optional<Session::TensorSummary> r, const std::string& err) {
                std::lock_guard lock(m);
                ++replies;
                if (r) {
                    EXPECT_EQ(n, name);
                    EXPECT_EQ(r->shape, e.tensors[0].values.shape());
                    EXPECT_EQ(std::accumulate(r->histogram.bins.begin(), r->histogram.bins.end(), uint64_t(0))
                            + r->histogram.nan + r->histogram.inf,
                        static_cast<uint64_t>(r->stats.count));
                    binsSeen.push_back(static_cast<int>(r->histogram.bins.size()));
                }
                cv.notify_all();
            },
            bins);
    session.requestSlice(name, SliceRequest { { 0, 0 }, 2, 3, 4, 5 },
        [&](const std::string&, std::optional<TensorSlice> r, const std::string& err) {
            std::lock_guard lock(m);
            ++replies;
            EXPECT_TRUE(r) << err;
            if (r) {
                EXPECT_EQ(r->rows, 3);
                EXPECT_EQ(r->cols, 5);
                EXPECT_FLOAT_EQ(r->at(1, 2), e.tensors[0].values.at(3 * 28 + 6));
            }
            cv.notify_all();
        });
    session.requestSlice(
        "no_such_tensor", {}, [&](const std::string&, std::optional<TensorSlice> r, const std::string& err) {
            std::lock_guard lock(m);
            ++replies;
            EXPECT_FALSE(r);
            lastError = err;
            cv.notify_all();
        });
    {
        std::unique_lock lock(m);
        ASSERT_TRUE(cv.wait_for(lock, Recorder::kTimeout,
            [&] { return !binsSeen.empty() && binsSeen.back() == 50 && !lastError.empty(); }));
    }
    session.queries().drain();
    // Every summary reply came in request order and the last one asked for 50 bins; the replaced
    // slice request (superseded by the bad one) may not have answered.
    EXPECT_TRUE(std::is_sorted(binsSeen.begin(), binsSeen.end()));
    EXPECT_EQ(binsSeen.back(), 50);
    EXPECT_EQ(static_cast<uint64_t>(replies), session.queries().completed());
    EXPECT_EQ(session.queries().posted(), session.queries().completed() + session.queries().dropped());
    EXPECT_NE(lastError.find("no_such_tensor"), std::string::npos);
    EXPECT_TRUE(session.isPaused()); // nothing resumed the run
    session.stop();
    EXPECT_TRUE(listener.waitEnded());
}
