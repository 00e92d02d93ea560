#pragma once

#include "tensor/tensor_view.h"

#include <cstdint>
#include <vector>

namespace opscope::debug {

/// Summary statistics of a tensor. min, max, mean, std and l2 are over the finite values (NaN
/// and ±Inf are counted apart); with no finite value they are NaN.
struct TensorStats {
    int64_t count = 0;
    int64_t finite = 0;
    int64_t nan = 0;
    int64_t posInf = 0;
    int64_t negInf = 0;
    int64_t zeros = 0;
    double min = 0;
    double max = 0;
    double mean = 0;
    double std = 0; ///< population standard deviation
    double l2 = 0;
    int64_t inf() const { return posInf + negInf; }
};

enum class HistogramScale { Linear, LogMagnitude };

/// Counts of finite values in `bins` equal bins over [lo, hi] (Linear), or over log10|x| for
/// non-zero values (LogMagnitude; zeros counted apart). NaN and ±Inf are counted apart.
/// Counts of all bins plus nan, inf (and zeros in LogMagnitude) equal the element count.
/// A value v goes to bin floor((v - lo) * bins / (hi - lo)), evaluated in double and clamped
/// to [0, bins - 1].
struct Histogram {
    HistogramScale scale = HistogramScale::Linear;
    double lo = 0;
    double hi = 0;
    std::vector<uint64_t> bins;
    uint64_t nan = 0;
    uint64_t inf = 0;
    uint64_t zeros = 0; ///< LogMagnitude only
};

/// One pass over the values (vectorised; both cores above ~1 M elements; a plain pass in double for
/// tensors that are not float32). The environment
/// variable OPSCOPE_STATS_MAX_ISA=avx2 or =portable caps the instruction set used here and in
/// computeHistogram (for tests and benchmarks).
TensorStats computeStats(const TensorView& t);
/// The histogram over the finite range of `stats` (or over [lo, hi] when lo < hi is given). For an
/// integer or bool tensor the bins span whole integers (bool: two bars, 0 and 1).
Histogram computeHistogram(const TensorView& t, const TensorStats& stats, int bins = 64,
    HistogramScale scale = HistogramScale::Linear, double lo = 0, double hi = 0);

} // namespace opscope::debug
