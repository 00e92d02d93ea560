#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <functional>

namespace opscope::gui {

class TensorSource;

/// Values per read when the maps of a tensor held elsewhere are read (a map larger than this is
/// read in bands of rows).
constexpr int64_t kMapValuesPerRead = 1 << 16;

/// What the Image tab shows of a tensor held at `source`: batch item `item` of an (N, C, H, W)
/// tensor, shaped (1, C, H, W); a tensor of fewer axes whole. Read map by map (windows of at most
/// kMapValuesPerRead values) as float32; stops early, returning an undefined tensor, when
/// `cancelled()` turns true. Throws what the source throws.
opscope::Tensor readShownItem(
    const TensorSource& source, const opscope::Shape& shape, int64_t item, const std::function<bool()>& cancelled);

} // namespace opscope::gui
