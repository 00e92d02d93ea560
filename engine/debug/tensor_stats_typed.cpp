// Statistics and histograms of tensors that are not float32 (float64, float16, the integer types,
// bool): one plain pass in double. A tensor of integers (or bools) gets bins of whole integers, so
// a bool tensor's histogram is two bars.

#include "debug/tensor_stats_typed.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opscope::debug::detail {

TensorStats typedStats(const TensorView& t)
{
    TensorStats s;
    s.count = t.size();
    double mean = 0, m2 = 0, lo = INFINITY, hi = -INFINITY;
    int64_t finite = 0;
    dispatchType(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* p = static_cast<const T*>(t.raw());
        for (int64_t i = 0; i < s.count; ++i) {
            const double v = toDouble(p[i]);
            if (std::isnan(v)) {
                ++s.nan;
                continue;
            }
            if (std::isinf(v)) {
                ++(v > 0 ? s.posInf : s.negInf);
                continue;
            }
            if (v == 0) ++s.zeros;
            ++finite;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            const double d = v - mean; // Welford
            mean += d / static_cast<double>(finite);
            m2 += d * (v - mean);
        }
    });
    s.finite = finite;
    if (finite == 0) {
        s.min = s.max = s.mean = s.std = s.l2 = std::numeric_limits<double>::quiet_NaN();
        return s;
    }
    s.min = lo;
    s.max = hi;
    s.mean = mean;
    s.std = std::sqrt(m2 / static_cast<double>(finite));
    s.l2 = std::sqrt(m2 + static_cast<double>(finite) * mean * mean);
    return s;
}

Histogram typedHistogram(
    const TensorView& t, const TensorStats& stats, int bins, HistogramScale scale, double lo, double hi)
{
    Histogram h;
    h.scale = scale;
    bins = std::max(1, bins);
    const bool logMag = scale == HistogramScale::LogMagnitude;
    const bool integral = isIntegerType(t.dtype()) || t.dtype() == DType::Bool;
    if (!(lo < hi)) {
        if (logMag) {
            const double a = std::max(std::fabs(stats.min), std::fabs(stats.max));
            hi = a > 0 ? std::log10(a) : 0.0;
            lo = hi - 8.0;
        } else if (integral && std::isfinite(stats.min)) {
            // Whole integers per bin: bins of width w cover min - 0.5 … max + 0.5.
            const double lowest = t.dtype() == DType::Bool ? 0 : stats.min;
            const double highest = t.dtype() == DType::Bool ? 1 : stats.max;
            const double values = highest - lowest + 1;
            const double width = std::ceil(values / bins);
            bins = static_cast<int>(std::ceil(values / width));
            lo = lowest - 0.5;
            hi = lo + bins * width;
        } else {
            lo = stats.min;
            hi = stats.max;
        }
        if (!std::isfinite(lo) || !std::isfinite(hi)) {
            lo = 0;
            hi = 1;
        }
        if (hi <= lo) {
            lo -= 0.5;
            hi += 0.5;
        }
    }
    h.lo = lo;
    h.hi = hi;
    h.bins.assign(static_cast<size_t>(bins), 0);
    const double scaleBy = bins / (hi - lo);
    dispatchType(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* p = static_cast<const T*>(t.raw());
        for (int64_t i = 0; i < t.size(); ++i) {
            double v = toDouble(p[i]);
            if (std::isnan(v)) {
                ++h.nan;
                continue;
            }
            if (std::isinf(v)) {
                ++h.inf;
                continue;
            }
            if (logMag) {
                if (v == 0) {
                    ++h.zeros;
                    continue;
                }
                v = std::log10(std::fabs(v));
            }
            const double b = std::floor((v - lo) * scaleBy);
            // NaN (an infinite bound) goes to the first bin, as values below it do.
            ++h.bins[static_cast<size_t>(b >= 0 ? std::min(b, static_cast<double>(bins - 1)) : 0.0)];
        }
    });
    return h;
}

} // namespace opscope::debug::detail
