#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <QObject>
#include <QThreadPool>

namespace opscope::gui {

/// Runs the background work of one kind of request. At most one job runs and one waits: a newer
/// request replaces the waiting one, and the result of a job whose request was superseded is
/// dropped, so fast slider drags or tensor switches never queue up work. Results are applied on
/// the thread that owns the runner (the GUI thread).
class LatestOnlyRunner : public QObject {
    Q_OBJECT

public:
    /// What to do with a result, on the owning thread. Empty: nothing.
    using Apply = std::function<void()>;
    /// The computation; runs on a worker thread and must only read data it captured by value.
    using Work = std::function<Apply()>;

    explicit LatestOnlyRunner(QObject* parent = nullptr);
    ~LatestOnlyRunner() override;

    /// Runs `work` on the private pool; supersedes every earlier request.
    void submit(Work work);
    /// Runs `work` and applies its result at once on the calling thread; supersedes every
    /// earlier request. For inputs small enough not to stall the window.
    void runNow(const Work& work);
    /// Drops the waiting request and the result of the running one.
    void cancel();
    /// True while a job runs or waits.
    bool busy() const { return m_running || m_pending.has_value(); }
    /// Number of the newest request; a result is applied only when it carries this number.
    uint64_t generation() const { return m_generation; }
    /// Blocks until the running job (if any) has finished; its result is still delivered later.
    void waitForIdle();

signals:
    void busyChanged(bool busy);

private:
    struct Job {
        Work work;
        uint64_t generation = 0;
    };

    void start(Job job);
    void finished(uint64_t generation, const Apply& apply);
    void setBusy(bool wasBusy);

    QThreadPool m_pool;
    uint64_t m_generation = 0;
    bool m_running = false;
    std::optional<Job> m_pending;
};

} // namespace opscope::gui
