#pragma once

// Private to the engine: whether a convolution can make a NaN or an infinity from this run's input.
// A post-op that keeps NaN (a clip or relu after the store, PostOpList::finish) gives what oneDNN's
// own post-op gives on every finite value: when the product cannot leave the finite numbers, the
// convolution applies it inside its primitive and the pass over its output is saved.

#include "tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace opscope::dnnlutil {

/// A bound on the input from the weights: every |x| <= limit() keeps each output within FLT_MAX / 4
/// (|y_o| <= max|x| · Σ_j |w_oj| + |b_o|), so no sum of products overflows and none is NaN.
class FiniteInput {
public:
    /// `weights` in rows of one output channel each (MXNet's and ONNX's (O, I/g, k…)), `bias` or
    /// null. Measured again only when either changed (Tensor::version) or moved.
    void update(const Tensor& weights, const Tensor* bias);
    /// The largest |x| of the `n` values when every one is finite and within the limit; nothing otherwise.
    std::optional<float> bound(const float* x, int64_t n) const;
    /// A bound on every output for inputs within `inputBound` (<= limit()): inputBound · max_o Σ_j |w_oj|
    /// + max_o |b_o|, rounded up.
    float outputBound(float inputBound) const;
    /// Negative when a weight or bias is not finite (then nothing holds).
    float limit() const { return m_limit; }

private:
    const void* m_weightsFrom = nullptr;
    const void* m_biasFrom = nullptr;
    uint64_t m_weightsVersion = 0, m_biasVersion = 0;
    double m_rowSum = 0, m_biasMax = 0; // max_o Σ_j |w_oj|, max_o |b_o|
    bool m_weightsFinite = false, m_biasFinite = true;
    float m_limit = -1.0f;
};

/// What a kernel knows of its output at this run: every value within [lo, hi], so none NaN (a
/// convolution that ran its clip or relu inside its primitive on an input within its weights'
/// bound: finite bounds; one that ends with oneDNN's own relu: [0, +inf]). Kept for the kernels that run next on the same thread
/// (a pass's kernels run on one), so that a convolution reading it needs no pass over its input.
/// Keyed by where the values are and by the storage's version (Tensor::version: changed by any
/// write, numbers never reused), so a tensor written since, or another one, never matches.
void recordBounds(const Tensor& t, float lo, float hi);
/// The bounds recorded for these values (the same start, at most as many) and not written since.
std::optional<std::pair<float, float>> recordedBounds(const Tensor& t);

} // namespace opscope::dnnlutil
