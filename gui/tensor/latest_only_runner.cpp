#include "gui/tensor/latest_only_runner.h"

#include <exception>

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope::gui {

LatestOnlyRunner::LatestOnlyRunner(QObject* parent)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
}

LatestOnlyRunner::~LatestOnlyRunner()
{
    m_pending.reset();
    ++m_generation;
    // The running job captured its inputs by value; wait so it never outlives the pool.
    m_pool.waitForDone();
}

void LatestOnlyRunner::submit(Work work)
{
    const bool wasBusy = busy();
    Job job { std::move(work), ++m_generation };
    if (m_running)
        m_pending = std::move(job);
    else
        start(std::move(job));
    setBusy(wasBusy);
}

void LatestOnlyRunner::runNow(const Work& work)
{
    const bool wasBusy = busy();
    const uint64_t generation = ++m_generation;
    m_pending.reset();
    Apply apply;
    try {
        apply = work();
    } catch (const std::exception&) {
        apply = nullptr;
    }
    setBusy(wasBusy);
    if (apply && generation == m_generation) apply();
}

void LatestOnlyRunner::cancel()
{
    const bool wasBusy = busy();
    ++m_generation;
    m_pending.reset();
    setBusy(wasBusy);
}

void LatestOnlyRunner::waitForIdle()
{
    m_pool.waitForDone();
}

void LatestOnlyRunner::start(Job job)
{
    m_running = true;
    QPointer<LatestOnlyRunner> self(this);
    const uint64_t generation = job.generation;
    (void)QtConcurrent::run(&m_pool, [self, work = std::move(job.work), generation] {
        Apply apply;
        try {
            apply = work();
        } catch (const std::exception&) {
            apply = nullptr;
        }
        // The destructor waits for this job, so `self` is alive here; the queued call is discarded
        // if the runner is deleted before the event loop delivers it.
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, apply = std::move(apply)] {
                if (self) self->finished(generation, apply);
            },
            Qt::QueuedConnection);
    });
}

void LatestOnlyRunner::finished(uint64_t generation, const Apply& apply)
{
    const bool wasBusy = busy();
    m_running = false;
    if (m_pending) {
        Job next = std::move(*m_pending);
        m_pending.reset();
        start(std::move(next));
    }
    setBusy(wasBusy);
    if (apply && generation == m_generation) apply();
}

void LatestOnlyRunner::setBusy(bool wasBusy)
{
    if (wasBusy != busy()) emit busyChanged(busy());
}

} // namespace opscope::gui
