#pragma once

#include "debug/pause_event.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace opscope::debug {

/// A command that resumes (or redirects) a run.
struct Command {
    enum class Kind : uint8_t { Continue, Step, StepOver, StepOut, RunTo, Pause };
    Kind kind = Kind::Continue;
    std::string node; ///< RunTo only
};

/// The pause gate between the session's worker and the threads that command it. Commands only
/// change the state under the mutex and notify; the worker waits here while paused.
/// One command slot: a newer command replaces one not yet taken. Stop is a separate flag that
/// nothing clears until the next run.
class Gate {
public:
    // Run lifecycle (Session::start and the worker).
    void beginRun();
    void endRun();
    bool active() const;

    // Any thread.
    /// False when no run is active (the command is dropped).
    bool post(Command c);
    /// Ends the current run at its next event (or now, when paused). False when none is active.
    bool requestStop();
    /// Ends any run, now and from then on (the session is being destroyed).
    void shutdown();
    bool paused() const;
    /// Runs `f` while the run stays paused (the worker cannot resume meanwhile); false, without
    /// calling it, when not paused.
    template <class F> bool whilePaused(F&& f) const
    {
        std::lock_guard lock(m_mutex);
        if (!m_pause) return false;
        f();
        return true;
    }
    /// The current pause (null when not paused). Shared: stays valid after a resume.
    std::shared_ptr<const PauseEvent> currentPause() const;

    // Worker thread.
    bool stopRequested() const { return m_stop.load(std::memory_order_acquire); }
    /// Cheap check: a command may be waiting.
    bool hasCommand() const { return m_pending.load(std::memory_order_acquire); }
    std::optional<Command> takeCommand();
    /// Publishes the pause (before the listener hears of it).
    void enterPause(std::shared_ptr<const PauseEvent> event);
    /// Blocks until a resuming command or a stop; returns the command, or nothing on stop.
    /// Pause commands received while paused are dropped (already paused).
    std::optional<Command> waitWhilePaused();

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_pending { false };
    bool m_shutdown = false;
    bool m_active = false;
    std::optional<Command> m_command;
    std::shared_ptr<const PauseEvent> m_pause;
};

} // namespace opscope::debug
