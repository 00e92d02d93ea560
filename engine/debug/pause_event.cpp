#include "debug/pause_event.h"

namespace opscope::debug {

const char* toString(PauseReason r)
{
    switch (r) {
    case PauseReason::Breakpoint:
        return "breakpoint";
    case PauseReason::Watchpoint:
        return "watchpoint";
    case PauseReason::Entry:
        return "entry";
    case PauseReason::Step:
        return "step";
    case PauseReason::StepOver:
        return "step over";
    case PauseReason::StepOut:
        return "step out";
    case PauseReason::RunTo:
        return "run to";
    case PauseReason::Pause:
        return "pause";
    }
    return "?";
}

const PausedTensor* PauseEvent::find(const std::string& tensorName) const
{
    for (const PausedTensor& t : tensors)
        if (t.name == tensorName) return &t;
    return nullptr;
}

} // namespace opscope::debug
