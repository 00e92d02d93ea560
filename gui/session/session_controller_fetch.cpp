// SessionController: tensors of the engine, fetched whole off the GUI thread or read where they
// are (a server's) through a TensorSource, and the report of the current pause.

#include "gui/session/engine_tensor_source.h"
#include "gui/session/session_controller.h"

#include <algorithm>
#include <exception>

#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

QFuture<SessionController::Fetched> SessionController::fetchWith(size_t count, FetchOne fetch, FetchProgress progress)
{
    auto fetchAll = [count, fetch = std::move(fetch), progress = std::move(progress)](debug::Engine& engine) {
        Fetched out;
        for (size_t i = 0; i < count; ++i) {
            try {
                out.tensors.push_back(fetch(engine, i, [&](size_t received, size_t total) {
                    if (progress) progress(i, received, total);
                }));
            } catch (const FetchCancelled& e) {
                out.error = QString::fromUtf8(e.what());
                out.tensors.resize(count); // nothing more
                break;
            } catch (const std::exception& e) {
                out.tensors.push_back(std::nullopt);
                if (out.error.isEmpty()) out.error = QString::fromStdString(e.what());
            }
        }
        return out;
    };
    // This process's engine has the tensors at hand (copies sharing storage): no thread needed.
    if (!m_remote) return QtFuture::makeReadyFuture(fetchAll(*m_engine));
    // The engine is held by the task: a detach meanwhile leaves it to finish (its answer dropped
    // by whoever looks at the pause it was for).
    return QtConcurrent::run([engine = m_remote, fetchAll = std::move(fetchAll)] { return fetchAll(*engine); });
}

QFuture<SessionController::Fetched> SessionController::fetchTensors(std::vector<std::string> names, FetchProgress progress, debug::TensorPin pin)
{
    const size_t count = names.size();
    return fetchWith(count,
        [names = std::move(names), pin](debug::Engine& engine, size_t i, const debug::Engine::Progress& p) {
            return engine.fetch(names[i], p, pin);
        },
        std::move(progress));
}

QFuture<SessionController::Fetched> SessionController::fetchCompared(
    std::vector<std::pair<debug::CompareSide, std::string>> tensors, uint64_t comparison)
{
    const size_t count = tensors.size();
    return fetchWith(count,
        [tensors = std::move(tensors), comparison](debug::Engine& engine, size_t i, const debug::Engine::Progress& p) {
            return engine.fetchCompared(tensors[i].first, tensors[i].second, p, comparison);
        },
        {});
}

QFuture<SessionController::Compared> SessionController::compare(debug::CompareRequest request)
{
    auto job = [request = std::move(request)](debug::Engine& engine) -> Compared {
        try {
            return { engine.compare(request), {} };
        } catch (const std::bad_alloc&) {
            return { nullptr, QStringLiteral("out of memory comparing the runs") };
        } catch (const std::exception& e) {
            return { nullptr, QString::fromStdString(e.what()) };
        }
    };
    if (m_remote) return QtConcurrent::run(&m_remoteCalls, [engine = m_remote, job = std::move(job)] { return job(*engine); });
    QFuture<Compared> f = QtConcurrent::run([engine = m_engine.get(), job = std::move(job)] { return job(*engine); });
    m_localComparisons.erase(std::remove_if(m_localComparisons.begin(), m_localComparisons.end(),
                                 [](const QFuture<void>& j) { return j.isFinished(); }),
        m_localComparisons.end());
    m_localComparisons.append(QFuture<void>(f));
    return f;
}

void SessionController::endComparison()
{
    if (!hasControl()) return;
    try {
        m_active->endComparison();
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
    }
}

std::shared_ptr<const TensorSource> SessionController::tensorSource(const std::string& name, const debug::TensorPin& pin) const
{
    if (!m_remote) return nullptr;
    return std::make_shared<EngineTensorSource>(m_remote, name, pin);
}

std::shared_ptr<debug::Engine> SessionController::remoteEngine() const { return m_remote; }

std::shared_ptr<const debug::PauseReport> SessionController::pauseReport() const
{
    return m_pause && m_pauseReport && &m_pauseReport->event == m_pause.get() ? m_pauseReport : nullptr;
}

} // namespace opscope::gui
