#pragma once

// What the executor's tests in three modes share: the fixture (dynamic, static_alloc,
// static_shape), an observer that records every event it is given, and the mlp graph's result
// computed by eager calls.

#include "exec/executor.h"
#include "exec/invoke.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

/// Parameter 0: dynamic, 1: static_alloc, 2: static_shape. Instantiated once, in executor_test.cpp,
/// for the tests of every file.
class ExecutorModes : public ::testing::TestWithParam<int> {
protected:
    opscope::ExecFlags flags() const
    {
        opscope::ExecFlags f;
        f.static_alloc = GetParam() >= 1;
        f.static_shape = GetParam() >= 2;
        return f;
    }
};

namespace opscope::test {

/// What mlpGraph() computes, by eager calls on its five inputs (mlpInputs).
inline Tensor mlpEager(const std::vector<Tensor>& v)
{
    Tensor h = invokeOp("FullyConnected", { { "num_hidden", "8" } }, { v[0], v[1], v[2] })[0];
    h = invokeOp("Activation", { { "act_type", "relu" } }, { h })[0];
    return invokeOp("FullyConnected", { { "num_hidden", "4" } }, { h, v[3], v[4] })[0];
}

/// Watches the phases in `mask` of every node: "node:before|after:inputs:outputs" per event, a copy
/// of every output it is shown, and a stop at the node named `stopAt`.
struct Recorder : ExecutionObserver {
    PhaseMask mask = PhaseMask::Both;
    std::string stopAt;
    std::vector<std::string> events;
    std::vector<Tensor> copies;
    PhaseMask wants(const Graph&, uint32_t) override { return mask; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        events.push_back(ev.node.name + (ev.phase == OpPhase::Before ? ":before:" : ":after:")
            + std::to_string(ev.inputs.size()) + ":" + std::to_string(ev.outputs.size()));
        for (const TensorView& o : ev.outputs)
            copies.push_back(Tensor::copyOf(o));
        return ev.node.name == stopAt ? ObserverAction::Stop : ObserverAction::Continue;
    }
};

} // namespace opscope::test
