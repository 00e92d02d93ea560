#include "gui/session/explain_runner.h"

#include "compare/explain_job.h"
#include "debug/engine.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

struct ExplainRunner::Worker {
    std::mutex mutex; // one job at a time uses the model
    debug::ExplainModel model;

    // The model for this request (loaded again only when the model, its parameters or the input's
    // shape changed) with the window's weights.
    gluon::HybridBlock& modelFor(const ExplainRequest& r)
    {
        gluon::HybridBlock& block = model.blockFor(r.model.toStdString(), r.params.toStdString(), 0, r.input);
        applyParameters(block, r.weights);
        return block;
    }
};

ExplainRunner::ExplainRunner(QObject* parent)
    : QObject(parent)
    , m_worker(std::make_shared<Worker>())
    , m_current(std::make_shared<std::atomic<quint64>>(0))
{
    qRegisterMetaType<ExplainResultPtr>();
    m_pool.setMaxThreadCount(1); // one explanation at a time, off the shared pool the window loads models on
}

ExplainRunner::~ExplainRunner()
{
    m_current->store(0);
    m_pool.waitForDone();
}

void ExplainRunner::start(ExplainRequest request)
{
    const quint64 generation = ++m_generation;
    m_current->store(generation); // a job still going sees it is superseded at its next progress call
    ++m_running;
    Q_EMIT started();
    QPointer<ExplainRunner> self(this);
    if (request.input.defined()) request.input = request.input.copy(); // the window's tensor may change meanwhile
    auto worker = m_worker;
    auto current = m_current;
    auto deliver = [self, generation](auto&& fn) {
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, fn = std::forward<decltype(fn)>(fn)]() mutable {
                if (!self) return;
                --self->m_running;
                if (generation == self->m_generation) fn(*self);
            },
            Qt::QueuedConnection);
    };
    m_job = QtConcurrent::run(&m_pool, [request = std::move(request), worker, current, generation, self, deliver]() mutable {
        QElapsedTimer timer;
        timer.start();
        std::lock_guard lock(worker->mutex);
        if (current->load() != generation) {
            deliver([](ExplainRunner& r) { Q_EMIT r.cancelled(); });
            return;
        }
        request.options.progress = [current, generation, self](int64_t done, int64_t total) {
            if (current->load() != generation) return false;
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [self, generation, done, total] {
                    if (self && generation == self->m_generation)
                        Q_EMIT self->progress(static_cast<int>(done), static_cast<int>(total));
                },
                Qt::QueuedConnection);
            return true;
        };
        try {
            auto result = std::make_shared<ExplainResult>();
            if (request.engine) {
                result->explanation = request.engine->explain(request.options);
                request.input = result->explanation.input; // the engine's, which the overlay shows
                request.engine.reset();
            } else {
                result->explanation = debug::explain(worker->modelFor(request), request.input, request.options);
            }
            result->elapsedMs = timer.elapsed();
            request.options.progress = {};
            request.weights.clear(); // kept by the caller; not needed with the result
            result->request = std::move(request);
            if (result->explanation.cancelled) {
                deliver([](ExplainRunner& r) { Q_EMIT r.cancelled(); });
                return;
            }
            deliver([result](ExplainRunner& r) { Q_EMIT r.finished(result); });
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            deliver([message](ExplainRunner& r) { Q_EMIT r.failed(message); });
        }
    });
}

void ExplainRunner::cancel()
{
    ++m_generation; // whatever is still going is dropped when it reports
    m_current->store(m_generation);
}

bool ExplainRunner::waitForIdle(int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (m_running > 0 && t.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        m_job.waitForFinished();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return m_running == 0;
}

} // namespace opscope::gui
