#pragma once

#include "debug/condition.h"
#include "exec/observer.h"

#include <cstdint>
#include <string>

namespace opscope::debug {

/// Where and when a run should pause. A value type: the Session stores them (under its mutex)
/// and hands out copies.
///  - Node: on the node `location`, before it runs (its inputs) or after (its outputs). On a
///    variable (a data input or a parameter), before the first op that reads it (Graph::firstReader),
///    testing that input; `phase` is then ignored.
///  - Tensor: on one tensor `location` = "<node>_<slot>" (MXNet's op-hook name); an input slot
///    is tested before the node runs, an output slot after. `phase` is ignored.
///  - Watch: on every op node (a watchpoint), tested on its inputs (Before) or outputs (After).
/// With a condition, the location hits only when one of the tensors tested satisfies it.
/// A hit counts in `hitCount`; the run pauses when hitCount > ignoreCount (so ignoreCount = 2
/// skips the first two hits). Hit counts restart at 0 at the start of every run.
struct Breakpoint {
    enum class Kind : uint8_t { Node, Tensor, Watch };

    int id = 0; ///< given by Session::addBreakpoint (0 until then)
    Kind kind = Kind::Node;
    std::string location; ///< node name, tensor name, or empty for Watch
    OpPhase phase = OpPhase::Before;
    Condition condition;
    bool enabled = true;
    int64_t ignoreCount = 0;
    int64_t hitCount = 0; ///< maintained by the session

    static Breakpoint onNode(std::string node, OpPhase phase = OpPhase::Before, Condition c = {});
    static Breakpoint onTensor(std::string tensorName, Condition c = {});
    /// A watchpoint: e.g. watch(Condition::of(Condition::Kind::NanOrInf)) stops at the first op
    /// whose output has NaN or Inf.
    static Breakpoint watch(Condition c, OpPhase phase = OpPhase::After);

    /// "node x (after) if nan", "tensor x_output if max>3", "watch outputs if naninf".
    std::string str() const;
};

/// A node breakpoint from "NODE", "NODE:before" or "NODE:after" (before by default), as the command
/// lines write it. Throws UsageError naming the text.
Breakpoint parseBreakSpec(const std::string& text);

} // namespace opscope::debug
