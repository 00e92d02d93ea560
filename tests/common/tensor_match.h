#pragma once

#include "tensor/tensor.h"

#include <gtest/gtest.h>

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

} // namespace opscope::test
