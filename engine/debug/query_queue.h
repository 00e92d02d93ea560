#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace opscope::debug {

/// Runs requests on a thread of its own, one at a time, keeping at most one waiting request per
/// kind: a newer request of a kind replaces an older one of that kind not yet started (the older
/// one is dropped: its job never runs). This is how questions about a paused run (statistics,
/// histograms, value slices) are answered while the run's worker waits: a user dragging a bins
/// slider or paging through tensors never queues up stale work.
///
/// Threads: post() and the destructor may be called from any thread except the queue's own (a job
/// must not destroy its queue). Jobs run on the queue's thread, which starts at the first post().
class QueryQueue {
public:
    QueryQueue() = default;
    ~QueryQueue();
    QueryQueue(const QueryQueue&) = delete;
    QueryQueue& operator=(const QueryQueue&) = delete;

    /// Queues `job` under `kind`, replacing a waiting job of the same kind.
    void post(int kind, std::function<void()> job);
    /// Drops every waiting job (a running one finishes).
    void clear();
    /// Returns when no job is waiting or running.
    void drain() const;

    uint64_t posted() const;
    uint64_t completed() const;
    /// Jobs replaced by a newer one of their kind, or cleared, before they ran.
    uint64_t dropped() const;

private:
    void loop();

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    mutable std::condition_variable m_idleCv;
    std::map<int, std::pair<uint64_t, std::function<void()>>> m_waiting; // kind → (order, job)
    uint64_t m_order = 0;
    bool m_busy = false;
    bool m_shutdown = false;
    uint64_t m_posted = 0;
    uint64_t m_completed = 0;
    uint64_t m_dropped = 0;
    std::thread m_thread;
};

} // namespace opscope::debug
