#include "debug/query_queue.h"

namespace opscope::debug {

QueryQueue::~QueryQueue()
{
    {
        std::lock_guard lock(m_mutex);
        m_shutdown = true;
        m_dropped += m_waiting.size();
        m_waiting.clear();
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void QueryQueue::post(int kind, std::function<void()> job)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_shutdown) return;
        ++m_posted;
        auto it = m_waiting.find(kind);
        if (it != m_waiting.end()) {
            ++m_dropped;
            it->second = { m_order++, std::move(job) };
        } else {
            m_waiting.emplace(kind, std::make_pair(m_order++, std::move(job)));
        }
        if (!m_thread.joinable()) m_thread = std::thread([this] { loop(); });
    }
    m_cv.notify_one();
}

void QueryQueue::clear()
{
    std::lock_guard lock(m_mutex);
    m_dropped += m_waiting.size();
    m_waiting.clear();
    if (!m_busy) m_idleCv.notify_all();
}

void QueryQueue::drain() const
{
    std::unique_lock lock(m_mutex);
    m_idleCv.wait(lock, [this] { return m_waiting.empty() && !m_busy; });
}

uint64_t QueryQueue::posted() const
{
    std::lock_guard lock(m_mutex);
    return m_posted;
}

uint64_t QueryQueue::completed() const
{
    std::lock_guard lock(m_mutex);
    return m_completed;
}

uint64_t QueryQueue::dropped() const
{
    std::lock_guard lock(m_mutex);
    return m_dropped;
}

void QueryQueue::loop()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_cv.wait(lock, [this] { return m_shutdown || !m_waiting.empty(); });
        if (m_shutdown) break;
        // Oldest first across kinds, so no kind starves another.
        auto next = m_waiting.begin();
        for (auto it = m_waiting.begin(); it != m_waiting.end(); ++it)
            if (it->second.first < next->second.first) next = it;
        std::function<void()> job = std::move(next->second.second);
        m_waiting.erase(next);
        m_busy = true;
        lock.unlock();
        try {
            job();
        } catch (...) {
            // A job reports its own errors through its callback; nothing may escape the thread.
        }
        lock.lock();
        m_busy = false;
        ++m_completed;
        if (m_waiting.empty()) m_idleCv.notify_all();
    }
    m_busy = false;
    m_idleCv.notify_all();
}

} // namespace opscope::debug
