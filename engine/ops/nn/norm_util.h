#pragma once

// Private helpers of the normalisation, Dropout and Embedding operators.

#include "core/error.h"
#include "tensor/shape.h"

#include <cstdint>
#include <string>

namespace opscope::normutil {

/// Python-style axis in [-ndim, ndim) to [0, ndim) of the input `data`; otherwise a ShapeError
/// naming the attribute that holds the axis and the data's shape.
inline int normalizeAxis(int64_t axis, const Shape& shape, const std::string& attribute)
{
    const int ndim = shape.ndim();
    if (axis < -ndim || axis >= ndim)
        throw ShapeError("attribute '" + attribute + "' = " + std::to_string(axis)
            + " is out of range for input 'data' of shape " + shape.str());
    return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

/// A dense row-major tensor seen as (outer, channels, inner) around one axis: element
/// (o, c, i) is at (o * channels + c) * inner + i.
struct AxisSplit {
    int64_t outer = 1;
    int64_t channels = 1;
    int64_t inner = 1;
};

inline AxisSplit splitAt(const Shape& shape, int axis)
{
    return { shape.product(0, axis), shape[axis], shape.product(axis + 1, shape.ndim()) };
}

} // namespace opscope::normutil
