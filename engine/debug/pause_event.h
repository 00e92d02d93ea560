#pragma once

#include "debug/tensor_stats.h"
#include "exec/observer.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::debug {

/// Why a run paused.
enum class PauseReason : uint8_t {
    Breakpoint, ///< a node or tensor breakpoint (ids in PauseEvent::breakpointIds)
    Watchpoint, ///< a watchpoint (ids in PauseEvent::breakpointIds)
    Entry, ///< Session::start(StartMode::PauseAtEntry)
    Step,
    StepOver,
    StepOut,
    RunTo,
    Pause, ///< Session::pause()
};

const char* toString(PauseReason r);

/// One tensor of the paused node, copied out of the executor (the executor's views die when
/// the observer returns).
struct PausedTensor {
    std::string name; ///< "<node>_<slot>", MXNet's op-hook name
    std::string slot;
    bool isInput = false;
    int index = 0; ///< slot index among the node's inputs or outputs
    Tensor values; ///< a copy; shares storage with copies of this event, never written
};

/// What the run looked like when it paused: an immutable snapshot published to the listener on
/// the worker thread. Copies share the tensors' storage (cheap); nothing in it is written after
/// publication, so any thread may read it.
struct PauseEvent {
    uint64_t runId = 0;
    uint64_t sequence = 0; ///< 1 for the first pause of a run, 2 for the next…
    uint32_t nodeId = 0;
    std::string node;
    std::string op; ///< canonical operator name
    OpPhase phase = OpPhase::Before;
    std::string blockPath;
    PauseReason reason = PauseReason::Step;
    std::vector<int> breakpointIds; ///< breakpoints that hit here (may be set for any reason)
    /// Before: the inputs in slot order; After: the inputs, then the outputs, in slot order.
    std::vector<PausedTensor> tensors;
    int focus = -1; ///< index in `tensors`: the tensor that hit, else the first output / input
    TensorStats focusStats;
    Histogram focusHistogram;

    const PausedTensor* find(const std::string& tensorName) const;
    const PausedTensor* focusTensor() const
    {
        return focus >= 0 && focus < static_cast<int>(tensors.size()) ? &tensors[static_cast<size_t>(focus)] : nullptr;
    }
};

} // namespace opscope::debug
