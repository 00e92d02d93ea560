#pragma once

#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace opscope::test {

/// Same shape and every value within atol + rtol·|expected| (NaN matches NaN, ±Inf matches itself).
inline ::testing::AssertionResult tensorsNear(
    const TensorView& actual, const TensorView& expected, float atol = 1e-5f, float rtol = 1e-4f)
{
    if (actual.shape() != expected.shape())
        return ::testing::AssertionFailure()
            << "shape " << actual.shape().str() << " differs from expected " << expected.shape().str();
    for (int64_t i = 0; i < actual.size(); ++i) {
        const float a = actual[i];
        const float e = expected[i];
        if (std::isnan(e) && std::isnan(a))
            continue;
        if (std::isinf(e) && a == e)
            continue;
        if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e)))
            return ::testing::AssertionFailure() << "value " << i << " is " << a << ", expected " << e
                                                 << " (shape " << actual.shape().str() << ")";
    }
    return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult tensorsNear(
    const Tensor& actual, const Tensor& expected, float atol = 1e-5f, float rtol = 1e-4f)
{
    return tensorsNear(actual.view(), expected.view(), atol, rtol);
}

/// The largest magnitude among a tensor's finite values (0 for none). Two results that add the
/// same terms in another order differ by rounding relative to the terms, so by a few units in the
/// last place of the tensor's largest values, which on a value near zero is far more than the
/// value's own 1e-5: tests of such results scale their absolute tolerance by this.
inline float largestMagnitude(const Tensor& t)
{
    const TensorView v = t.view();
    float m = 0;
    for (int64_t i = 0; i < v.size(); ++i)
        if (std::isfinite(v[i])) m = std::max(m, std::fabs(v[i]));
    return m;
}

} // namespace opscope::test
