#pragma once

// Post-ops (Kernel::setPostOps) that ONNX's MatMul and Gemm apply to their float32 output row by
// row, while the row is in cache: the nodes the executor fuses after a matrix product (a bias add,
// a residual add, Relu, Sigmoid, Tanh, Clip, and GELU as exporters write it: Div, Erf, Add, Mul,
// Mul), each with the arithmetic of the nodes it replaces, so fused values equal unfused ones bit
// for bit.

#include "ops/op.h"

#include <span>
#include <vector>

namespace opscope::onnx_ops {

class MatrixEpilogue {
public:
    /// Takes a list of Bias, Sum, Relu (ONNX's: NaN gives 0), Sigmoid, Tanh, Clip and GeluParts in any order;
    /// refuses (and then holds none) a list with anything else (Affine, Gelu, a NaN-keeping relu:
    /// no ONNX node folds as those).
    bool set(std::span<const PostOp> ops);
    bool empty() const { return m_ops.empty(); }
    /// How many inputs the list reads after the kernel's own.
    size_t extraInputs() const { return m_extra; }
    /// Applies the list to `out`, rows of its last dimension, reading what the post-ops read from
    /// `extra` in list order: a bias of that many elements, a residual of out's size, a clip's
    /// scalar bounds, a GELU's three scalars. Throws ShapeError or TypeError naming what does not fit.
    void apply(Tensor& out, std::span<const Tensor* const> extra);
    /// `extra` with each input that shares storage with `out` replaced by a copy taken now, before
    /// the product writes `out`: a caller may feed a previous run's output buffer back as the
    /// residual (static_alloc reuses it), and the product would overwrite it before it is read.
    std::span<const Tensor* const> apart(const Tensor& out, std::span<const Tensor* const> extra);

private:
    // A post-op with what it reads at this run (pointers set by apply).
    struct Step {
        PostOp op;
        const float* operand = nullptr; // a bias or a residual
        float lo = 0, hi = 0; // a clip's bounds
        float divisor = 1, addend = 0, factor = 1; // GeluParts: x * (erf(x / divisor) + addend) * factor
    };
    std::vector<PostOp> m_ops;
    std::vector<Step> m_steps; // one per post-op, sized by set()
    std::vector<Tensor> m_copies; // apart(): inputs in the output's storage, copied
    std::vector<const Tensor*> m_apart;
    size_t m_extra = 0;
};

} // namespace opscope::onnx_ops
