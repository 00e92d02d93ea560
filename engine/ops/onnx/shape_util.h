#pragma once

// Shape arithmetic and byte-moving loops of ONNX's shape operators (shape_ops.cpp, index_ops.cpp).

#include "tensor/tensor.h"

#include <string_view>
#include <utility>
#include <vector>

namespace opscope::onnx_ops {

/// A shape from values (Expand's, ConstantOfShape's): ShapeError for a negative one or a rank
/// above Shape::kMaxDims; an empty list is a scalar.
Shape shapeOfValues(const std::vector<int64_t>& v, std::string_view op);
/// Reshape's target: 0 copies the input's dimension (unless allowZero), -1 is inferred.
Shape reshapeTarget(const Shape& in, const std::vector<int64_t>& spec, bool allowZero);
Shape squeezed(const Shape& in, const std::vector<int64_t>& axes, bool given);
Shape unsqueezed(const Shape& in, const std::vector<int64_t>& axes);
/// Transpose's permutation (reversed axes when not given), checked.
std::vector<int> permutationOf(const std::vector<int64_t>& perm, bool given, int rank);
Shape permuted(const Shape& in, const std::vector<int>& perm);
void transposeBytes(const Tensor& in, const Tensor& out, const std::vector<int>& perm);
/// Split's sizes along an axis of `length`: given, or equal parts (the last smaller).
std::vector<int64_t> splitSizes(int64_t length, const std::vector<int64_t>& given, int outputs);
void expandBytes(const Tensor& in, const Tensor& out);
void tileBytes(const Tensor& in, const Tensor& out);
/// Shape's [start, end) clamped to the rank.
std::pair<int64_t, int64_t> shapeRange(int rank, int64_t start, int64_t end);

} // namespace opscope::onnx_ops
