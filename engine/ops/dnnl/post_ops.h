#pragma once

// Private to the engine: a kernel's post-ops (Kernel::setPostOps) as oneDNN's, shared by the
// kernels that take them (Convolution, FullyConnected).

#include "ops/op.h"

#include <span>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

/// The list a kernel was given, as the attribute its primitive is made with and the arguments it
/// runs with. A folded normalisation (Affine) is a binary multiply then add by (1, C, 1…) operands;
/// a NaN-keeping relu (only last) is left to finish(), after the output is stored, because
/// oneDNN's relu post-op turns NaN into 0.
class PostOpList {
public:
    /// At most one sum (its residual goes into the destination before the run) and a NaN-keeping
    /// relu only at the end.
    static bool takes(std::span<const PostOp> ops);

    /// The list for a destination of rank `outputRank` with `channels` on axis 1.
    void set(std::span<const PostOp> ops, int outputRank, int64_t channels);
    bool empty() const { return m_ops.empty(); }
    bool hasSum() const { return m_sum; }
    /// Where the residual is among run()'s inputs when the kernel has `own` inputs of its own
    /// (-1 without a sum).
    int residualIndex(size_t own) const;
    /// For the primitive descriptor.
    const dnnl::primitive_attr& attr() const { return m_attr; }
    /// Adds the per-channel operands to the primitive's arguments.
    void addArgs(std::unordered_map<int, dnnl::memory>& args) const;
    /// Points the per-channel operands at the inputs after the kernel's `own` ones, in list order;
    /// returns the residual (nullptr without a sum).
    const Tensor* bind(std::span<const Tensor* const> in, size_t own);
    /// What is left after the output is stored: a NaN-keeping relu, x > 0 ? x : 0·x.
    void finish(Tensor& out) const;

private:
    std::vector<PostOp> m_ops;
    dnnl::primitive_attr m_attr;
    bool m_sum = false, m_ownRelu = false;
    std::vector<int> m_binaryArgs; // argument ids of the per-channel operands, in list order
    std::vector<dnnl::memory> m_binaryMemory;
};

} // namespace opscope::dnnlutil
