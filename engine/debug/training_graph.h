#pragma once

#include "graph/graph.h"

#include <memory>
#include <string>
#include <vector>

namespace opscope::debug {

/// One training step as one graph the debugger runs: the model's forward pass, the loss on its
/// first output, and the backward pass back to the parameters.
///
/// Nodes: the model's (same names and blocks), the loss block's, then the backward nodes
/// (`<node>_backward`, `_backward_<Op>`, gradient sums) in the block "backward/<forward block>", so a
/// collapsed view shows the backward pass as one group. Variables: the model's (its inputs, its
/// parameters and auxiliary states), `label`, and the loss's head gradient (bind ones). Heads: the
/// loss (one value per sample), then the gradient of each parameter of `wrt`, in that order.
struct TrainingGraph {
    std::shared_ptr<const Graph> graph;
    std::string label; ///< the label variable ("label", or "loss_label" when the model has a "label")
    std::string headGrad; ///< the loss's head-gradient variable
    std::vector<std::string> wrt; ///< the parameters whose gradients follow the loss among the heads
};

/// Builds the step's graph. `model` and `loss` are finalized; the loss graph's first variable takes
/// the model's first head, its second is the label. Throws GraphError naming what is missing (a loss
/// without two inputs, a name of `wrt` that is not a variable of the model, an operator without a
/// gradient).
TrainingGraph buildTrainingGraph(const Graph& model, const Graph& loss, const std::vector<std::string>& wrt);

} // namespace opscope::debug
