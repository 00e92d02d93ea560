#pragma once

// Which nodes the executor's fusion pass may fold together (ExecFlags::fuse).

#include "graph/graph.h"

namespace opscope::fusion {

/// A relu: MXNet's Activation(act_type=relu) or relu, ONNX's Relu.
bool isRelu(const Node& node);
/// An op whose kernel may take a relu or a sum as a post-op: MXNet's Convolution, ONNX's Conv.
bool takesRelu(const Node& node);
/// An addition of two tensors: MXNet's elemwise_add and broadcast_add, ONNX's Add.
bool isAdd(const Node& node);

} // namespace opscope::fusion
