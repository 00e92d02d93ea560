#pragma once

// The window's explanations (engine/debug/explain.h) of the loaded model's prediction, computed on a
// worker thread with a model instance of the runner's own (loaded once per model, away from the
// debug session's block), cancellable, with progress.

#include "debug/explain.h"
#include "tensor/tensor.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "gui/session/parameter_snapshot.h"

#include <QFuture>
#include <QThreadPool>
#include <QObject>
#include <QString>

namespace opscope::debug {
class Engine;
}

namespace opscope::gui {

struct ExplainRequest {
    QString model; ///< sample:NAME, a -symbol.json or a .onnx
    QString params; ///< its parameter file (empty: its own)
    Tensor input; ///< (1, C, H, W) or (1, D)
    debug::ExplainOptions options; ///< its progress callback is the runner's
    ParameterSnapshot weights; ///< the window's weights (empty: the model's own)
    /// Where the engine runs elsewhere (a server's): it explains the input of its runs with its own
    /// model and weights (Engine::explain); model, params, input and weights are then not used.
    std::shared_ptr<debug::Engine> engine;
};

struct ExplainResult {
    ExplainRequest request;
    debug::Explanation explanation;
    qint64 elapsedMs = 0;
};
using ExplainResultPtr = std::shared_ptr<const ExplainResult>;

/// One explanation at a time: a newer start cancels the one still going (its result is dropped).
/// Signals arrive on the runner's (GUI) thread. The destructor cancels and waits.
class ExplainRunner : public QObject {
    Q_OBJECT
public:
    explicit ExplainRunner(QObject* parent = nullptr);
    ~ExplainRunner() override;

    void start(ExplainRequest request);
    /// Cancels the running explanation (no result is delivered).
    void cancel();
    bool isRunning() const { return m_running > 0; }
    /// Waits for the running job (tests). False on time-out.
    bool waitForIdle(int timeoutMs = 60000);

Q_SIGNALS:
    void started();
    void progress(int done, int total);
    void finished(opscope::gui::ExplainResultPtr result);
    void failed(const QString& error);
    void cancelled();

private:
    struct Worker; // the loaded model, used by one job at a time
    std::shared_ptr<Worker> m_worker;
    std::shared_ptr<std::atomic<quint64>> m_current; // the generation a job must match to go on
    quint64 m_generation = 0;
    int m_running = 0;
    QFuture<void> m_job;
    QThreadPool m_pool;
};

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::ExplainResultPtr)
