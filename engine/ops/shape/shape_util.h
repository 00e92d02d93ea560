#pragma once

// Private helpers of the shape operators (reshape.cpp, transpose.cpp, concat_split.cpp).

#include "core/error.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace opscope::shapeops {

/// Throws ShapeError when the rank of `s` is unknown (the operator cannot infer anything then).
inline void requireRank(const Shape& s, const std::string& what)
{
    if (s.ndim() == 0) throw ShapeError(what + ": shape is unknown");
}

/// Python-style axis in [-ndim, ndim) to [0, ndim); ShapeError naming the shape otherwise.
inline int normalizeAxis(int64_t axis, const Shape& s, const std::string& what)
{
    const int64_t n = s.ndim();
    if (axis < -n || axis >= n)
        throw ShapeError(what + ": axis " + std::to_string(axis) + " is out of range for shape " + s.str()
            + " (valid: " + std::to_string(-n) + " to " + std::to_string(n - 1) + ")");
    return static_cast<int>(axis < 0 ? axis + n : axis);
}

/// A shape seen as (outer, axis, inner) around one axis: the layout every concat/split/slice uses.
struct AxisView {
    int64_t outer = 1;
    int64_t dim = 1;
    int64_t inner = 1;
};

inline AxisView axisView(const Shape& s, int axis)
{
    return { s.product(0, axis), s[axis], s.product(axis + 1, s.ndim()) };
}

/// Copies all values of `src` into `dst` (same size; shape ops never return views).
inline void copyAll(const Tensor& src, const Tensor& dst)
{
    float* d = dst.data();
    const float* s = src.data();
    if (d != s && dst.size() > 0) std::memcpy(d, s, static_cast<size_t>(dst.size()) * sizeof(float));
}

} // namespace opscope::shapeops
