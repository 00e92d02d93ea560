#pragma once

// MXNet's Reshape shape rule (InferReshapeShape in src/operator/tensor/matrix_op-inl.h).

#include "tensor/shape.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope::shapeops {

/// Checks a Reshape `shape` attribute on its own (special values 0, -1, -2, -3, -4; at most one
/// -1 outside a -4 split; -4 followed by two dims, not both -1). Returns why it is invalid, or
/// nullopt. With `reverse` the values are read right to left, as MXNet does.
std::optional<std::string> checkReshapeSpec(const std::vector<int64_t>& spec, bool reverse);

/// The output shape for input `data` (0 dims are unknown and stay unknown where they matter).
/// Throws ShapeError naming the input shape and the attribute when they do not fit together.
Shape inferReshapeShape(const std::vector<int64_t>& spec, const Shape& data, bool reverse);

} // namespace opscope::shapeops
