#pragma once

#include "debug/pause_event.h"
#include "debug/run_record.h"

#include <string>
#include <vector>

namespace opscope::debug {

/// What a Session reports about its runs. Every call comes from the session's worker thread;
/// a listener must not destroy the session from a call (it may issue commands: continueRun(),
/// step()…, and query the paused state). A GUI forwards these to its own thread with queued
/// calls and drops those whose run id is stale.
class SessionListener {
public:
    virtual ~SessionListener() = default;
    virtual void runStarted(uint64_t runId) { }
    /// The run is paused until a command resumes or stops it.
    virtual void paused(const PauseEvent& event) { }
    /// The run ended: completed (outputs given) or stopped (record.status == Stopped, no outputs).
    virtual void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record) { }
    /// The engine threw: `error` names the node, its operator and the shapes involved.
    virtual void runFailed(uint64_t runId, const std::string& error) { }
};

} // namespace opscope::debug
