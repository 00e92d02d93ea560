#pragma once

#include "tensor/tensor_view.h"

#include <cstdint>
#include <vector>

namespace opscope::debug {

/// Which 2-D window of a tensor to read: the last two axes are rows and columns (a 1-D tensor is
/// one row, a scalar one value); `index` fixes every leading axis (missing entries are 0).
struct SliceRequest {
    std::vector<int64_t> index;
    int64_t rowBegin = 0;
    int64_t rowCount = -1; ///< -1: to the end
    int64_t colBegin = 0;
    int64_t colCount = -1;
};

/// Values of a 2-D window, row-major, as doubles (exact for every element type but int64 beyond
/// 2^53); `dtype` is the tensor's, for formatting (integers without a fraction, bools as 0/1).
struct TensorSlice {
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t rowBegin = 0;
    int64_t colBegin = 0;
    DType dtype = DType::Float32;
    std::vector<double> values;
    double at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

/// Cuts the window out of `t`, clamping ranges to the tensor. Throws UsageError for an index
/// out of range.
TensorSlice sliceOf(const TensorView& t, const SliceRequest& request);

} // namespace opscope::debug
