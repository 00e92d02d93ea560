#include "gui/tensor/remote_maps.h"

#include "core/error.h"
#include "gui/tensor/tensor_source.h"

#include <algorithm>

namespace opscope::gui {

namespace {
/// Copies rows × cols values of `s` into `out` (row-major, `cols` wide) from row `row0` on.
void place(const debug::TensorSlice& s, float* out, int64_t cols, int64_t row0)
{
    for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols && c < cols; ++c)
            out[(row0 + r) * cols + c] = static_cast<float>(s.at(r, c));
}
} // namespace

opscope::Tensor readShownItem(
    const TensorSource& source, const opscope::Shape& shape, int64_t item, const std::function<bool()>& cancelled)
{
    const int nd = shape.ndim();
    if (nd < 1 || nd > 4) throw UsageError("a tensor of " + std::to_string(nd) + " axes has no maps");
    if (nd == 1) { // one row, read in bands of columns
        const int64_t n = shape[0];
        opscope::Tensor out(shape);
        for (int64_t c0 = 0; c0 < n; c0 += kMapValuesPerRead) {
            if (cancelled()) return {};
            debug::SliceRequest r;
            r.colBegin = c0;
            r.colCount = std::min(kMapValuesPerRead, n - c0);
            const debug::TensorSlice s = source.slice(r);
            for (int64_t c = 0; c < s.cols && c0 + c < n; ++c)
                out.at(c0 + c) = static_cast<float>(s.at(0, c));
        }
        return out;
    }
    const int64_t h = shape[nd - 2], w = shape[nd - 1];
    const int64_t maps = nd >= 3 ? shape[nd - 3] : 1;
    opscope::Shape outShape = shape;
    if (nd == 4) {
        if (item < 0 || item >= shape[0])
            throw UsageError("item " + std::to_string(item) + " is outside the batch of " + std::to_string(shape[0]));
        outShape = opscope::Shape({ 1, maps, h, w });
    }
    opscope::Tensor out(outShape);
    const int64_t bandRows = std::max<int64_t>(1, kMapValuesPerRead / std::max<int64_t>(w, 1));
    for (int64_t m = 0; m < maps; ++m) {
        float* map = out.data() + m * h * w;
        for (int64_t r0 = 0; r0 < h; r0 += bandRows) {
            if (cancelled()) return {};
            debug::SliceRequest r;
            if (nd == 4) r.index = { item, m };
            if (nd == 3) r.index = { m };
            r.rowBegin = r0;
            r.rowCount = std::min(bandRows, h - r0);
            const debug::TensorSlice s = source.slice(r);
            if (s.cols != w || s.rows != r.rowCount)
                throw Error("a window of " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " came for "
                    + std::to_string(r.rowCount) + "x" + std::to_string(w));
            place(s, map, w, r0);
        }
    }
    return out;
}

} // namespace opscope::gui
