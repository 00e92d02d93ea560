#pragma once

#include "core/error.h"
#include "debug/compare.h"
#include "debug/tensor_stats.h"

#include <cstddef>
#include <memory>

namespace opscope::debug {

/// How much a session records of each run.
enum class RecordLevel : uint8_t {
    None, ///< nothing (the run costs nothing when no breakpoint is set either)
    Ops, ///< every executed op: node, operator, time, output shapes
    Stats, ///< … plus statistics and a histogram of each output
    Tensors, ///< … plus a copy of each output, within the memory budget
};

/// Settings of a session, copied at the start of each run.
struct SessionOptions {
    RecordLevel record = RecordLevel::None;
    /// With a record level: each op's inputs too, as they are before it runs (MXNet's
    /// monitor_all): names, shapes, statistics at Stats, copies at Tensors.
    bool recordInputs = false;
    size_t tensorBudgetBytes = size_t(512) << 20;
    int recordHistogramBins = 64;
    /// The histogram of a pause event's focus tensor.
    int histogramBins = 64;
    HistogramScale histogramScale = HistogramScale::Linear;
    /// The run a `diff>T` condition compares each tensor with, by the op hooks' names (a
    /// comparison's run B); null: such a condition never holds.
    std::shared_ptr<const RecordedRun> reference {};
};

/// Where a tensor read by name was seen (Session::tensorAt): a pause (run id, its sequence), or a
/// run's record (sequence 0). Run 0: wherever the name is found now.
struct TensorPin {
    uint64_t run = 0;
    uint64_t pauseSequence = 0;
};

/// A tensor asked for where the session no longer is: its pause has ended, its run's record has
/// been replaced. Says which.
class MovedOnError : public Error {
public:
    using Error::Error;
};

/// How a run begins.
enum class StartMode : uint8_t {
    Run, ///< run until a breakpoint or a command
    PauseAtEntry, ///< pause before the first op node
};

} // namespace opscope::debug
