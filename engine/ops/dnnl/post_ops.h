#pragma once

// Private to the engine: a kernel's post-ops (Kernel::setPostOps) as oneDNN's, shared by the
// kernels that take them (Convolution, FullyConnected).

#include "ops/op.h"

#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

/// The list a kernel was given, as the attribute its primitive is made with and the arguments it
/// runs with. A folded normalisation (Affine) is a binary multiply then add by (1, C, 1…) operands;
/// a NaN-keeping relu or clip (only last) is left to finish(), after the output is stored, because
/// oneDNN's relu and clip post-ops turn NaN into 0 or a bound (a convolution runs it inside its
/// primitive on runs whose product is finite: attrWithFinish, dnnlutil::FiniteInput).
class PostOpList {
public:
    /// At most one sum (its residual goes into the destination before the run), a NaN-keeping
    /// relu or clip only at the end, and neither a matrix product's bias, a GELU in pieces nor a
    /// depthwise convolution (the convolution kernel's own: before and after it, two lists).
    static bool takes(std::span<const PostOp> ops);

    /// The list for a destination of rank `outputRank` with `channels` on axis 1.
    void set(std::span<const PostOp> ops, int outputRank, int64_t channels);
    bool empty() const { return m_ops.empty(); }
    bool hasSum() const { return m_sum; }
    /// The last op is left to finish() (a NaN-keeping relu or clip).
    bool hasFinish() const { return m_own; }
    /// Where the residual is among run()'s inputs when the kernel has `own` inputs of its own
    /// (-1 without a sum).
    int residualIndex(size_t own) const;
    /// For the primitive descriptor.
    const dnnl::primitive_attr& attr() const { return m_attr; }
    /// Adds the per-channel operands to the primitive's arguments.
    void addArgs(std::unordered_map<int, dnnl::memory>& args) const;
    /// Points the per-channel operands at the inputs after the kernel's `own` ones, in list order
    /// (and takes a clip's bounds from there); returns the residual (nullptr without a sum).
    const Tensor* bind(std::span<const Tensor* const> in, size_t own);
    /// What is left after the output is stored, on every value whatever the layout: a NaN-keeping
    /// relu, x > 0 ? x : 0·x, or clip, x < lo ? lo : (x > hi ? hi : x) (ONNX's Clip and, for
    /// lo <= hi, MXNet's clip).
    void finish(Tensor& out) const;
    /// The same on `count` values from `y` (an output in a padded layout: its padding too).
    void finish(float* y, int64_t count) const;

    /// Whether the op left to finish() gives oneDNN's result on every finite value it may see: a
    /// NaN-keeping relu, or clip with lo <= hi, after only relu, sigmoid or tanh (each finite on
    /// finite values). Then, on a run whose product is finite, it may run inside the primitive.
    bool finishesFinite() const { return m_finishesFinite; }
    /// The op left to finish() is a clip: inside the primitive, it leaves every value within
    /// finishBounds().
    bool finishesWithClip() const { return m_own && m_ops.back().kind == PostOp::Kind::Clip; }
    /// The list is one NaN-keeping relu (left to finish()): inside the primitive, it leaves every
    /// value within [0, the product's bound].
    bool isReluAlone() const { return m_own && m_ops.size() == 1 && m_ops.back().kind == PostOp::Kind::Relu; }
    /// The list ends with oneDNN's own relu (not NaN-keeping): in its JIT kernels NaN becomes 0,
    /// so every value the primitive writes is within [0, +inf], none NaN, whatever its input.
    bool endsWithPlainRelu() const { return !m_own && !m_ops.empty() && m_ops.back().kind == PostOp::Kind::Relu; }
    /// The bounds of the clip left to finish() at this run (after bind()); a relu's are (0, 0).
    std::pair<float, float> finishBounds() const;
    /// The attribute with the op left to finish() as oneDNN's post-op, with these bounds.
    dnnl::primitive_attr attrWithFinish(std::pair<float, float> bounds) const;

private:
    // The first `count` ops as oneDNN's list.
    dnnl::post_ops build(size_t count) const;

    std::vector<PostOp> m_ops;
    dnnl::memory::desc m_perChannel; // an Affine's operands: (1, C, 1…)
    dnnl::primitive_attr m_attr;
    bool m_sum = false, m_own = false; // m_own: the last op is left to finish()
    bool m_finishesFinite = false; // set(): finishesFinite()
    const Tensor* m_clipLo = nullptr; // a clip's bounds read at each run (PostOp::boundInputs)
    const Tensor* m_clipHi = nullptr;
    std::vector<int> m_binaryArgs; // argument ids of the per-channel operands, in list order
    std::vector<dnnl::memory> m_binaryMemory;
};

} // namespace opscope::dnnlutil
