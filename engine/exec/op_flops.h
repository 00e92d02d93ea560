#pragma once

#include "graph/graph.h"

#include <cstdint>
#include <vector>

namespace opscope {

/// Floating-point operations of one run of op node `nodeId` (a multiply-add counts two), from the
/// shapes of its inputs and outputs (`entryShapes` by entry id, as Executor::entryShapes() gives
/// them); -1 where none is defined. Defined where the work is the products: convolutions and
/// deconvolutions, fully connected layers and matrix products, of MXNet and of ONNX. Biases and
/// activations are not counted (they are a small share, and frameworks' GFLOP/s leave them out too).
int64_t opFlops(const Graph& graph, uint32_t nodeId, const std::vector<Shape>& entryShapes);

} // namespace opscope
