#pragma once

#include "tensor/tensor_view.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace opscope {

class Graph;
struct Node;

enum class OpPhase : uint8_t { Before = 1, After = 2 };

/// Which phases of a node an observer wants to see (a bit mask of OpPhase).
enum class PhaseMask : uint8_t { None = 0, Before = 1, After = 2, Both = 3 };
inline PhaseMask operator|(PhaseMask a, PhaseMask b)
{
    return static_cast<PhaseMask>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
inline bool hasPhase(PhaseMask m, OpPhase p)
{
    return (static_cast<uint8_t>(m) & static_cast<uint8_t>(p)) != 0;
}

/// What the executor reports about one op node. Views are valid only during the call.
/// `outputs` is empty in the Before phase.
struct OpEvent {
    const Graph& graph;
    uint32_t nodeId;
    const Node& node;
    OpPhase phase;
    std::span<const TensorView> inputs;
    std::span<const TensorView> outputs;
    /// The node's kernel runs for the first time since it was prepared (the executor planned):
    /// its time then includes one-time setup (oneDNN's weight reorder, first use of buffers and
    /// threads), so it is no measure of the op's cost.
    bool firstCall = false;
};

enum class ObserverAction : uint8_t { Continue, Stop };

/// A callback on one tensor: (tensor name, operator name, the tensor), MXNet's op-hook signature.
/// The view is valid only during the call.
using TensorCallback = std::function<void(std::string_view tensor_name, std::string_view op_name, const TensorView& array)>;

/// One call of a callback on one tensor of a node, and nothing else (ExecutionObserver::tensorCalls).
struct TensorCall {
    const TensorCallback* callback; ///< the observer's, kept where it is (ExecutionObserver::tensorCalls)
    std::string_view name, op; ///< as the callback is given them; held, as the callback, until the executor asks again
    uint32_t slot; ///< the node's input (before the op) or output (after it)
};

/// Lowest layer of hooks and breakpoints: called before and after each op node. The executor
/// first asks wants() for every node (once per graph and shape plan, not per run), so a node no
/// observer wants costs one predictable branch. onOp() runs on the thread that runs the executor;
/// returning Stop ends the run with RunStatus::Stopped (no exception through user code).
class ExecutionObserver {
public:
    virtual ~ExecutionObserver() = default;
    virtual PhaseMask wants(const Graph& graph, uint32_t nodeId) = 0;
    virtual ObserverAction onOp(const OpEvent& event) = 0;

    /// Optional, for an observer whose every call for a node's phase is a callback on a single
    /// tensor (it never stops the run, never reads firstCall): appends those calls to `calls` in
    /// the order onOp() would make them and returns true; the executor may then make them itself,
    /// each on the view of its `slot` (dropped when the node has no such slot), instead of calling
    /// onOp(), which it still calls where it has no table (dynamic mode, a profiled run). Asked
    /// after wants() for every node. What the calls point to must hold until the executor asks
    /// again (attach, detach, refreshWants, a new plan): an observer that changes it has the
    /// executor refresh its wants before the next run, and changes nothing a run may still call.
    virtual bool tensorCalls(uint32_t nodeId, OpPhase phase, std::vector<TensorCall>& calls)
    {
        (void)nodeId, (void)phase, (void)calls;
        return false;
    }
};

} // namespace opscope
