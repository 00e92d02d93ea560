// The remote engine's control: who drives the server, and what follows from holding it.

#include "gui/session/session_controller.h"

#include <functional>

namespace opscope::gui {

void SessionController::onControlChanged(debug::ControlInfo control)
{
    if (!m_remote) return;
    // A broadcast is the same for every client: whether it is this one's is told by the id.
    control.youHold = control.holder != 0 && control.holder == m_remote->client().clientId();
    const bool gained = control.youHold && !m_control.youHold;
    m_control = std::move(control);
    if (gained && !isActive()) applyRecordLevel();
    Q_EMIT controlChanged();
}

void SessionController::applyRecordLevel()
{
    // The Record menu's level holds for the engine the window drives (the run record panel fills
    // from it). A server takes it from the client in control while no run goes on there: at
    // attach, when control comes, after each run (a run going on at attach, a training loop's).
    if (!m_remote || !hasControl()) return;
    try {
        debug::SessionOptions o = m_remote->options();
        if (o.record == m_recordLevel) return;
        o.record = m_recordLevel;
        m_remote->setOptions(o);
    } catch (const std::exception&) { // a run started meanwhile, a server gone: the next end tries again
    }
}

bool SessionController::controlCall(const std::function<debug::ControlInfo()>& f)
{
    if (!m_remote) return true; // this process's engine: always its own
    try {
        m_control = f();
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    Q_EMIT controlChanged();
    return true;
}

bool SessionController::takeControl()
{
    return controlCall([this] { return m_remote->takeControl(); });
}

bool SessionController::releaseControl()
{
    return controlCall([this] { return m_remote->releaseControl(); });
}

bool SessionController::handOverControl(quint64 client)
{
    return controlCall([this, client] { return m_remote->handOverControl(client); });
}

void SessionController::onEngineLost(const QString& why)
{
    if (!m_remote) return;
    m_engineLost = true;
    m_lastError = why;
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    setState(State::Failed);
    Q_EMIT engineLost(why);
}

} // namespace opscope::gui
