#pragma once

// The loops of ONNX's indexing operators (index_ops.cpp), byte-wise where they only move elements.

#include "tensor/tensor.h"

#include <string>
#include <vector>

namespace opscope::onnx_ops {

/// An index as int64 from an int32 or int64 tensor, negative ones counted from `bound`; ShapeError
/// naming `what`, the index and the bound when outside [-bound, bound).
int64_t indexAt(const Tensor& indices, int64_t i, int64_t bound, const char* what);

void gatherAxis(const Tensor& data, const Tensor& indices, const Tensor& out, int axis);
void gatherElements(const Tensor& data, const Tensor& indices, const Tensor& out, int axis);
Shape gatherNDShape(const Shape& data, const Shape& indices, int64_t batchDims);
void gatherND(const Tensor& data, const Tensor& indices, const Tensor& out, int64_t batchDims);
void scatterElements(const Tensor& data, const Tensor& indices, const Tensor& updates, const Tensor& out, int axis,
    const std::string& reduction);
void scatterND(const Tensor& data, const Tensor& indices, const Tensor& updates, const Tensor& out,
    const std::string& reduction);

/// Slice's arguments as given (starts, ends, optional axes and steps).
struct SliceSpec {
    std::vector<int64_t> starts, ends, axes, steps;
};
/// Per dimension of the input: the first index, the step and the count; and the result's shape.
struct ResolvedSlice {
    std::vector<int64_t> start, step;
    Shape shape;
};
ResolvedSlice resolveSlice(const SliceSpec& spec, const Shape& in);
void sliceBytes(const Tensor& in, const Tensor& out, const ResolvedSlice& s);

/// Pads as [begin_0 … begin_{r-1}, end_0 … end_{r-1}] for every dimension (from pads over `axes`).
std::vector<int64_t> padsFor(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes, int rank);
Shape paddedShape(const Shape& in, const std::vector<int64_t>& pads);
void padTensor(const Tensor& in, const Tensor& out, const std::vector<int64_t>& pads, const std::string& mode, double value);

void oneHot(const Tensor& indices, const Tensor& values, const Tensor& out, int axis, int64_t depth);
void trilu(const Tensor& in, const Tensor& out, int64_t k, bool upper);

} // namespace opscope::onnx_ops
