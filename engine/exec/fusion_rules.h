#pragma once

// Which nodes the executor's fusion pass may fold into the kernel before them (ExecFlags::fuse),
// and as which post-op.

#include "graph/graph.h"
#include "ops/op.h"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opscope::fusion {

/// A kernel that takes post-ops: MXNet's Convolution and FullyConnected, ONNX's Conv, MatMul and Gemm.
bool takesPostOps(const Node& node);
/// ONNX's MatMul or Gemm: its post-ops are applied by its own kernel (a bias along the last axis, a
/// residual, an activation), never a folded normalisation.
bool isMatrixProduct(const Node& node);
/// An addition of two tensors: MXNet's elemwise_add and broadcast_add, ONNX's Add (a Sum post-op
/// when one operand is ready before the kernel runs and has the output's shape; after a matrix
/// product, a Bias post-op when it is a vector along the output's last axis).
bool isAdd(const Node& node);
/// The element-wise post-op a node computes exactly as its own kernel does, applied to its input
/// 0: relu (MXNet Activation/relu, ONNX Relu), sigmoid, tanh, gelu (MXNet LeakyReLU), clip (MXNet
/// clip with a_min <= a_max; ONNX Clip, its bounds as attributes or as inputs 1 and 2, which the
/// kernel reads at each run: PostOp::boundInputs). nullopt otherwise.
std::optional<PostOp> elementwise(const Node& node);
/// An inference normalisation foldable as an Affine post-op: MXNet's BatchNorm on axis 1 (when not
/// training, or with use_global_stats), ONNX's BatchNormalization. Its inputs are data, then the
/// four per-channel parameters (gamma/scale, beta/bias, mean, variance).
bool isNormalization(const Node& node, bool training);
/// The per-channel scale and shift a normalisation applies: out = data·scale + shift, with the
/// node's own arithmetic (MXNet: float, gamma read as 1 under fix_gamma; ONNX: double, rounded).
void normalizationAffine(const Node& node, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
    const Tensor& var, Tensor& scale, Tensor& shift);

/// A convolution (or fully connected layer, or matrix product) and the chain of nodes that alone
/// read its output, one after the other, each computable as a post-op (a GELU's five nodes as one,
/// its Div and first Mul both reading the value before it): what fusion runs inside the producer's
/// kernel when no observer watches them (as far as the kernel takes the post-ops).
struct Chain {
    uint32_t producer = 0; ///< node ids
    std::vector<uint32_t> consumers; ///< per post-op, the node whose output it gives
    std::vector<PostOp> ops; ///< one per consumer
    std::vector<int64_t> residuals; ///< per consumer: the entry a Sum or Bias adds, else -1
    /// The entries element-wise post-ops read at each run, in chain order: a clip's bounds
    /// (PostOp::boundInputs), a GELU's divisor, addend and factor, a depthwise convolution's weights
    /// and bias.
    std::vector<uint32_t> bounds;
    /// Per consumer, the nodes before it that its post-op also replaces, in graph order: a GELU's
    /// Div, Erf, Add and first Mul (its consumer is the last Mul). Empty for a post-op of one node.
    std::vector<std::vector<uint32_t>> parts;
    /// Every node the chain folds, in order: each post-op's parts, then its consumer.
    std::vector<uint32_t> nodes() const;
};

/// Which nodes may be a post-op of the kernel before them as a whole (Kernel::asPostOp: a
/// depthwise convolution after a 1x1 one), by node id; nullopt for the others.
using NodePostOp = std::function<std::optional<PostOp>(uint32_t node)>;

/// Every chain of a graph with these entry shapes and types (by Graph::entryId), for a training
/// run or not. A residual, a clip's bounds, a GELU's three constants and a depthwise convolution's
/// weights and bias must be ready before the convolution runs (a variable, or made by a node before
/// it in graph order). `asPostOp` (when given) names the nodes that may be a Depthwise post-op: the
/// chain goes on through such a node after a NaN-keeping relu or clip too (the kernel runs that one
/// inside its primitive when it can, or the two convolutions apart), and after it only through
/// element-wise ops.
std::vector<Chain> chains(const Graph& g, std::span<const Shape> shapes, std::span<const DType> types, bool training,
    const NodePostOp& asPostOp = {});

/// What a chain folds, for people: "BatchNorm (scale and shift), add (residual), relu".
std::string describe(const Graph& g, const Chain& chain);

} // namespace opscope::fusion
