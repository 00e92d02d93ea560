// SessionController: tensors of the engine, fetched whole off the GUI thread or read where they
// are (a server's) through a TensorSource, and the report of the current pause.

#include "gui/session/engine_tensor_source.h"
#include "gui/session/session_controller.h"

#include <exception>

#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

QFuture<SessionController::Fetched> SessionController::fetchTensors(std::vector<std::string> names, FetchProgress progress)
{
    auto fetchAll = [names = std::move(names), progress = std::move(progress)](debug::Engine& engine) {
        Fetched out;
        for (size_t i = 0; i < names.size(); ++i) {
            try {
                out.tensors.push_back(engine.fetch(names[i], [&](size_t received, size_t total) {
                    if (progress) progress(i, received, total);
                }));
            } catch (const FetchCancelled& e) {
                out.error = QString::fromUtf8(e.what());
                out.tensors.resize(names.size()); // nothing more
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

std::shared_ptr<const TensorSource> SessionController::tensorSource(const std::string& name) const
{
    if (!m_remote) return nullptr;
    return std::make_shared<EngineTensorSource>(m_remote, name);
}

std::shared_ptr<const debug::PauseReport> SessionController::pauseReport() const
{
    return m_pause && m_pauseReport && &m_pauseReport->event == m_pause.get() ? m_pauseReport : nullptr;
}

} // namespace opscope::gui
