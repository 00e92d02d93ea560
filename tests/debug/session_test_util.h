#pragma once

// Helpers of the debug-session tests: a listener that records events and lets the test wait on
// them (condition variables with timeouts, never sleeps), and a watchdog that aborts a test that
// hangs so CI fails instead of waiting forever.

#include "debug/session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace opscope::debug::test {

/// Aborts the process (with a message) when it is not destroyed within `limit`.
class Watchdog {
public:
    explicit Watchdog(std::string what, std::chrono::seconds limit = std::chrono::seconds(60))
        : m_what(std::move(what))
    {
        m_thread = std::thread([this, limit] {
            std::unique_lock lock(m_mutex);
            if (!m_cv.wait_for(lock, limit, [&] { return m_done; })) {
                std::fprintf(stderr, "watchdog: '%s' did not finish within %lld s (deadlock?)\n", m_what.c_str(),
                    static_cast<long long>(limit.count()));
                std::fflush(stderr);
                std::abort();
            }
        });
    }
    ~Watchdog()
    {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }

private:
    std::string m_what;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_done = false;
    std::thread m_thread;
};

/// "node:before" / "node:after".
inline std::string key(const PauseEvent& e)
{
    return e.node + (e.phase == OpPhase::Before ? ":before" : ":after");
}

/// Records every listener call; tests wait on counts with a timeout.
class Recorder : public SessionListener {
public:
    static constexpr std::chrono::seconds kTimeout { 30 };

    void runStarted(uint64_t runId) override
    {
        std::function<void()> hook;
        {
            std::lock_guard lock(m_mutex);
            m_started.push_back(runId);
            hook = onStarted;
        }
        if (hook) hook();
        m_cv.notify_all();
    }
    void paused(const PauseEvent& e) override
    {
        std::function<void(const PauseEvent&)> hook;
        {
            std::lock_guard lock(m_mutex);
            m_pauses.push_back(e);
            hook = onPaused;
        }
        if (hook) hook(e);
        m_cv.notify_all();
    }
    void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record) override
    {
        {
            std::lock_guard lock(m_mutex);
            m_finished.push_back(runId);
            m_outputs = outputs;
            m_record = record;
        }
        m_cv.notify_all();
    }
    void runFailed(uint64_t runId, const std::string& error) override
    {
        {
            std::lock_guard lock(m_mutex);
            m_failed.push_back(runId);
            m_error = error;
        }
        m_cv.notify_all();
    }

    /// Waits until `n` pauses have been published; returns the n-th (1-based).
    PauseEvent waitPause(size_t n)
    {
        std::unique_lock lock(m_mutex);
        const bool ok = m_cv.wait_for(lock, kTimeout, [&] { return m_pauses.size() >= n || ended(); });
        EXPECT_TRUE(ok) << "timed out waiting for pause " << n;
        if (m_pauses.size() < n) {
            ADD_FAILURE() << "the run ended after " << m_pauses.size() << " pauses, expected pause " << n;
            return {};
        }
        return m_pauses[n - 1];
    }
    /// Waits until `n` runs have ended (finished or failed).
    bool waitEnded(size_t n = 1)
    {
        std::unique_lock lock(m_mutex);
        return m_cv.wait_for(lock, kTimeout, [&] { return m_finished.size() + m_failed.size() >= n; });
    }
    std::vector<std::string> pauseKeys()
    {
        std::lock_guard lock(m_mutex);
        std::vector<std::string> k;
        for (const PauseEvent& e : m_pauses)
            k.push_back(key(e));
        return k;
    }
    size_t pauseCount()
    {
        std::lock_guard lock(m_mutex);
        return m_pauses.size();
    }

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<uint64_t> m_started, m_finished, m_failed;
    std::vector<PauseEvent> m_pauses;
    std::vector<Tensor> m_outputs;
    RunRecord m_record;
    std::string m_error;
    size_t runsExpected = 1; // waitPause gives up once this many runs have ended
    std::function<void()> onStarted; // called on the worker in runStarted
    std::function<void(const PauseEvent&)> onPaused; // called on the worker in paused

private:
    bool ended() const
    {
        const size_t runs = std::max(m_started.size(), runsExpected);
        return runs > 0 && m_finished.size() + m_failed.size() >= runs;
    }
};

} // namespace opscope::debug::test
