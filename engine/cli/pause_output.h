#pragma once

#include "debug/breakpoint.h"
#include "debug/session_listener.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace opscope::cli {

/// Collects a debug session's events for the thread that waits on them: the first pause of a run,
/// and its end. reset() before each run.
class WaitingListener : public debug::SessionListener {
public:
    void paused(const debug::PauseEvent& e) override;
    void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const debug::RunRecord& record) override;
    void runFailed(uint64_t runId, const std::string& error) override;

    /// Waits for a pause or the end of the run.
    void waitPausedOrDone();
    void waitDone();
    /// Forgets the last run (call while no run is active).
    void reset();

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::optional<debug::PauseEvent> m_pause;
    bool m_done = false;
    bool m_stopped = false;
    std::string m_error;
    std::vector<Tensor> m_outputs;
};

/// The paused node: operator, phase, reason (with the breakpoints that hit), block, each tensor's
/// statistics and the focus tensor's histogram.
void printPause(std::ostream& out, const debug::PauseEvent& e, const std::vector<debug::Breakpoint>& breakpoints);
/// The same from each tensor's shape and statistics (a pause received from a server has no values).
void printPause(std::ostream& out, const debug::PauseEvent& e, const std::vector<debug::Breakpoint>& breakpoints,
    const std::vector<Shape>& shapes, const std::vector<debug::TensorStats>& stats);
/// Writes every tensor of the pause to DIR/<tensor name>.npy (nothing when `dir` is empty), the name
/// made a safe file name (safeFileName: nothing is written outside DIR).
void dumpPause(const debug::PauseEvent& e, const std::string& dir);

} // namespace opscope::cli
