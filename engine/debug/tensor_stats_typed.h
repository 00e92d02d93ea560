#pragma once

// Private to the debug library: statistics of tensors of the types the vectorised float32 pass
// does not cover.

#include "debug/tensor_stats.h"

namespace opscope::debug::detail {

TensorStats typedStats(const TensorView& t);
Histogram typedHistogram(
    const TensorView& t, const TensorStats& stats, int bins, HistogramScale scale, double lo, double hi);

} // namespace opscope::debug::detail
