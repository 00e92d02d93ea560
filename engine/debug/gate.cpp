#include "debug/gate.h"

namespace opscope::debug {

void Gate::beginRun()
{
    std::lock_guard lock(m_mutex);
    m_active = true;
    m_command.reset();
    m_pending.store(false, std::memory_order_release);
    m_pause.reset();
    m_stop.store(m_shutdown, std::memory_order_release);
}

void Gate::endRun()
{
    std::lock_guard lock(m_mutex);
    m_active = false;
    m_command.reset();
    m_pending.store(false, std::memory_order_release);
    m_pause.reset();
}

bool Gate::active() const
{
    std::lock_guard lock(m_mutex);
    return m_active;
}

bool Gate::post(Command c)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_active) return false;
        m_command = std::move(c);
        m_pending.store(true, std::memory_order_release);
    }
    m_cv.notify_all();
    return true;
}

bool Gate::requestStop()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_active) return false;
        m_stop.store(true, std::memory_order_release);
    }
    m_cv.notify_all();
    return true;
}

void Gate::shutdown()
{
    {
        std::lock_guard lock(m_mutex);
        m_shutdown = true;
        m_stop.store(true, std::memory_order_release);
    }
    m_cv.notify_all();
}

bool Gate::paused() const
{
    std::lock_guard lock(m_mutex);
    return m_pause != nullptr;
}

std::shared_ptr<const PauseEvent> Gate::currentPause() const
{
    std::lock_guard lock(m_mutex);
    return m_pause;
}

std::optional<Command> Gate::takeCommand()
{
    std::lock_guard lock(m_mutex);
    std::optional<Command> c = std::move(m_command);
    m_command.reset();
    m_pending.store(false, std::memory_order_release);
    return c;
}

void Gate::enterPause(std::shared_ptr<const PauseEvent> event)
{
    std::lock_guard lock(m_mutex);
    m_pause = std::move(event);
}

std::optional<Command> Gate::waitWhilePaused()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_cv.wait(lock, [&] { return m_command.has_value() || m_stop.load(std::memory_order_acquire); });
        if (m_stop.load(std::memory_order_acquire)) {
            m_pause.reset();
            return std::nullopt;
        }
        std::optional<Command> c = std::move(m_command);
        m_command.reset();
        m_pending.store(false, std::memory_order_release);
        if (c->kind != Command::Kind::Pause) {
            m_pause.reset();
            return c;
        }
    }
}

} // namespace opscope::debug
