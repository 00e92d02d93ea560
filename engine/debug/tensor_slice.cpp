#include "debug/tensor_slice.h"

#include "core/error.h"

#include <algorithm>
#include <string>

namespace opscope::debug {

TensorSlice sliceOf(const TensorView& t, const SliceRequest& request)
{
    const int nd = t.ndim();
    const int lead = std::max(0, nd - 2);
    const int64_t rows = nd >= 2 ? t.shape()[nd - 2] : 1;
    const int64_t cols = nd >= 1 ? t.shape()[nd - 1] : 1;
    if (static_cast<int>(request.index.size()) > lead)
        throw UsageError("slice: " + std::to_string(request.index.size())
            + " leading indexes given for a tensor of shape " + t.shape().str() + " (at most " + std::to_string(lead)
            + ")");
    int64_t offset = 0;
    for (int a = 0; a < lead; ++a) {
        const int64_t i = a < static_cast<int>(request.index.size()) ? request.index[static_cast<size_t>(a)] : 0;
        if (i < 0 || i >= t.shape()[a])
            throw UsageError("slice: index " + std::to_string(i) + " out of range for axis " + std::to_string(a)
                + " of shape " + t.shape().str());
        offset = offset * t.shape()[a] + i;
    }
    offset *= rows * cols;
    TensorSlice s;
    s.rowBegin = std::clamp<int64_t>(request.rowBegin, 0, rows);
    s.colBegin = std::clamp<int64_t>(request.colBegin, 0, cols);
    s.rows = request.rowCount < 0 ? rows - s.rowBegin : std::min(request.rowCount, rows - s.rowBegin);
    s.cols = request.colCount < 0 ? cols - s.colBegin : std::min(request.colCount, cols - s.colBegin);
    if (t.size() == 0) s.rows = s.cols = 0;
    s.dtype = t.dtype();
    s.values.reserve(static_cast<size_t>(s.rows * s.cols));
    for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c)
            s.values.push_back(t.valueAt(offset + (s.rowBegin + r) * cols + s.colBegin + c));
    return s;
}

} // namespace opscope::debug
