#pragma once

// ONNX's Relu and Sigmoid on one value, as their kernels compute them: shared by those kernels and
// a matrix product's fused post-ops, so that fused and unfused values agree bit for bit.

#include <cmath>

namespace opscope::onnx_ops {

/// NaN gives 0 (the comparison is false).
template <class C> C reluValue(C x)
{
    return x > 0 ? x : C(0);
}

/// Without overflow on either side: exp of a non-positive number only.
template <class C> C sigmoidValue(C x)
{
    return x >= 0 ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
}

} // namespace opscope::onnx_ops
