#pragma once

#include <cstdint>
#include <vector>

namespace opscope {

/// What one op node cost in one run, as the executor measured it on the steady clock
/// (nanoseconds since the clock's epoch, so that runs and threads line up). Observer times are
/// the hooks, breakpoints and watchpoints called before and after the kernel; 0 when none wants
/// the node.
struct StepTiming {
    uint32_t node = 0;
    int64_t kernelBegin = 0, kernelEnd = 0;
    int64_t beforeBegin = 0, beforeEnd = 0; ///< observers' Before callbacks (equal when none)
    int64_t afterBegin = 0, afterEnd = 0; ///< observers' After callbacks (equal when none)
    /// The kernel ran for the first time since it was prepared: its time includes one-time setup.
    bool firstCall = false;

    int64_t kernelNs() const { return kernelEnd - kernelBegin; }
    int64_t observerNs() const { return (beforeEnd - beforeBegin) + (afterEnd - afterBegin); }
};

/// The timeline of one Executor::run(): filled when a profile is set on the executor
/// (Executor::setProfile), cleared at the start of each run. `planNs` is the time the run spent
/// planning (shape inference and kernel creation); 0 when it reused the plan.
struct RunProfile {
    int64_t begin = 0, end = 0;
    int64_t planNs = 0;
    uint64_t thread = 0; ///< the thread that ran the kernels (a stable number per thread)
    std::vector<StepTiming> steps; ///< in the order the steps ran; a stopped run ends early

    int64_t totalNs() const { return end - begin; }
};

/// A number naming the calling thread (the same one for every call on that thread).
uint64_t currentThreadNumber();

} // namespace opscope
