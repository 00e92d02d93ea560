#pragma once

#include "debug/tensor_stats.h"
#include "exec/executor.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace opscope::debug {

/// One executed op node of a run.
struct OpRecord {
    uint32_t nodeId = 0;
    std::string node;
    std::string op;
    int64_t timeNs = 0; ///< steady_clock between the before and after events (the kernel)
    /// The kernel's first call since it was prepared: timeNs includes one-time setup (oneDNN's
    /// weight reorder, first use of buffers and threads) and is no measure of the op's cost.
    bool firstCall = false;
    /// The op's time on a warm call: timeNs when !firstCall, else the last warm time of the node in an
    /// earlier run with the same prepared kernels (0 when there was none: run again to see it).
    int64_t warmNs = 0;
    /// Preparing the kernel (oneDNN primitive creation) before the run, when this run prepared it.
    int64_t prepareNs = 0;
    std::vector<std::string> outputNames;
    std::vector<Shape> outputShapes;
    std::vector<TensorStats> outputStats; ///< empty unless statistics are recorded
    std::vector<Histogram> outputHistograms; ///< idem
    /// SessionOptions::recordInputs: the op's inputs before it ran, by op-hook name
    /// (`<node>_<input slot>`), with statistics when they are recorded.
    std::vector<std::string> inputNames;
    std::vector<Shape> inputShapes;
    std::vector<TensorStats> inputStats;
};

/// A run's history: every executed op in order, and optionally copies of output tensors kept
/// within a memory budget (the oldest are dropped first, and the record says so). Built by the
/// session's worker; a finished record is an immutable value the listener receives.
class RunRecord {
public:
    uint64_t runId = 0;
    RunStatus status = RunStatus::Completed;
    std::vector<OpRecord> ops;

    void setTensorBudget(size_t bytes) { m_budget = bytes; }
    size_t tensorBudget() const { return m_budget; }
    /// Keeps a copy of `values` under `name` (replacing a tensor of that name), dropping the
    /// oldest kept tensors until the total fits the budget. A tensor larger than the whole
    /// budget is not kept (and counted as dropped).
    void keepTensor(const std::string& name, const TensorView& values);
    /// A kept tensor, or nullptr (never kept, or dropped).
    const Tensor* tensor(const std::string& name) const;
    /// The names of the kept tensors, oldest first.
    std::vector<std::string> keptNames() const;
    size_t keptBytes() const { return m_keptBytes; }
    size_t keptCount() const { return m_kept.size(); }
    /// Tensors dropped for the budget; non-zero means the record is incomplete.
    uint64_t droppedTensors() const { return m_dropped; }
    bool tensorsDropped() const { return m_dropped > 0; }

private:
    struct Kept {
        std::string name;
        Tensor values;
    };
    std::deque<Kept> m_kept; // oldest first
    size_t m_budget = size_t(512) << 20;
    size_t m_keptBytes = 0;
    uint64_t m_dropped = 0;
};

} // namespace opscope::debug
