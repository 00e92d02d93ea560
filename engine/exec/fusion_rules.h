#pragma once

// Which nodes the executor's fusion pass may fold into the kernel before them (ExecFlags::fuse),
// and as which post-op.

#include "graph/graph.h"
#include "ops/op.h"

#include <optional>

namespace opscope::fusion {

/// A kernel that takes post-ops: MXNet's Convolution, ONNX's Conv.
bool takesPostOps(const Node& node);
/// An addition of two tensors: MXNet's elemwise_add and broadcast_add, ONNX's Add (a Sum post-op
/// when one operand is ready before the kernel runs).
bool isAdd(const Node& node);
/// The element-wise post-op a one-input node computes exactly as its own kernel does, applied to
/// its input 0: relu (MXNet Activation/relu, ONNX Relu), sigmoid, tanh, gelu (MXNet LeakyReLU),
/// clip (MXNet clip with a_min <= a_max, ONNX Clip with bounds known before the run). nullopt
/// otherwise.
std::optional<PostOp> elementwise(const Node& node);
/// An inference normalisation foldable as an Affine post-op: MXNet's BatchNorm on axis 1 (when not
/// training, or with use_global_stats), ONNX's BatchNormalization. Its inputs are data, then the
/// four per-channel parameters (gamma/scale, beta/bias, mean, variance).
bool isNormalization(const Node& node, bool training);
/// The per-channel scale and shift a normalisation applies: out = data·scale + shift, with the
/// node's own arithmetic (MXNet: float, gamma read as 1 under fix_gamma; ONNX: double, rounded).
void normalizationAffine(const Node& node, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
    const Tensor& var, Tensor& scale, Tensor& shift);

} // namespace opscope::fusion
