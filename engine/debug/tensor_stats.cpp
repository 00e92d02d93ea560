#include "debug/tensor_stats.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace opscope::debug {

namespace {
    constexpr int64_t kChunk = 16384; // 64 KiB of floats: read from memory once, reduced from L2
    constexpr int64_t kParallelMin = 1 << 20;

    struct Partial {
        int64_t finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
        double min = std::numeric_limits<double>::infinity();
        double max = -std::numeric_limits<double>::infinity();
        double sum = 0, sumSq = 0;

        void merge(const Partial& o)
        {
            finite += o.finite;
            nan += o.nan;
            posInf += o.posInf;
            negInf += o.negInf;
            zeros += o.zeros;
            min = std::min(min, o.min);
            max = std::max(max, o.max);
            sum += o.sum;
            sumSq += o.sumSq;
        }
    };

    void statsRange(const float* p, int64_t n, Partial& acc)
    {
        for (int64_t off = 0; off < n; off += kChunk) {
            const int64_t len = std::min(kChunk, n - off);
            const Eigen::Map<const Eigen::ArrayXf> a(p + off, len);
            // x·0 is NaN exactly when x is NaN or ±Inf: one vectorised test for the whole chunk.
            if (std::isfinite((a * 0.0f).sum())) {
                acc.finite += len;
                acc.min = std::min<double>(acc.min, a.minCoeff());
                acc.max = std::max<double>(acc.max, a.maxCoeff());
                acc.sum += static_cast<double>(a.sum());
                acc.sumSq += static_cast<double>(a.square().sum());
                acc.zeros += (a == 0.0f).count();
                continue;
            }
            for (int64_t i = 0; i < len; ++i) {
                const float v = p[off + i];
                if (std::isnan(v)) {
                    ++acc.nan;
                } else if (std::isinf(v)) {
                    ++(v > 0 ? acc.posInf : acc.negInf);
                } else {
                    ++acc.finite;
                    acc.min = std::min<double>(acc.min, v);
                    acc.max = std::max<double>(acc.max, v);
                    acc.sum += v;
                    acc.sumSq += static_cast<double>(v) * v;
                    acc.zeros += v == 0.0f;
                }
            }
        }
    }

    template <class Fn> void parallelFor(int64_t n, Fn fn)
    {
        const int threads = n >= kParallelMin ? static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency()))) : 1;
        if (threads == 1) {
            fn(0, 0, n);
            return;
        }
        // Split on chunk boundaries so both halves take the vectorised path alike.
        const int64_t half = (n / 2 + kChunk - 1) / kChunk * kChunk;
        std::thread worker([&] { fn(1, half, n); });
        fn(0, 0, half);
        worker.join();
    }

    void binRange(const float* p, int64_t n, double lo, double scale, int bins, bool logMag, uint64_t* counts,
        uint64_t& nan, uint64_t& inf, uint64_t& zeros)
    {
        // Four interleaved count arrays avoid store-to-load stalls on repeated bins.
        std::vector<uint32_t> local(static_cast<size_t>(bins) * 4, 0);
        std::vector<int32_t> idx(static_cast<size_t>(kChunk));
        const float flo = static_cast<float>(lo), fscale = static_cast<float>(scale);
        const int last = bins - 1;
        auto binOf = [&](float v) {
            int b = static_cast<int>((v - flo) * fscale);
            return b < 0 ? 0 : (b > last ? last : b);
        };
        for (int64_t off = 0; off < n; off += kChunk) {
            const int64_t len = std::min(kChunk, n - off);
            const Eigen::Map<const Eigen::ArrayXf> a(p + off, len);
            if (!logMag && std::isfinite((a * 0.0f).sum())) {
                // All finite: bin indexes computed vectorised, then counted.
                Eigen::Map<Eigen::ArrayXi> ix(idx.data(), len);
                ix = ((a - flo) * fscale).max(0.0f).min(static_cast<float>(last)).cast<int32_t>();
                int64_t i = 0;
                for (; i + 4 <= len; i += 4) {
                    ++local[static_cast<size_t>(idx[static_cast<size_t>(i)]) * 4];
                    ++local[static_cast<size_t>(idx[static_cast<size_t>(i + 1)]) * 4 + 1];
                    ++local[static_cast<size_t>(idx[static_cast<size_t>(i + 2)]) * 4 + 2];
                    ++local[static_cast<size_t>(idx[static_cast<size_t>(i + 3)]) * 4 + 3];
                }
                for (; i < len; ++i)
                    ++local[static_cast<size_t>(idx[static_cast<size_t>(i)]) * 4];
                continue;
            }
            for (int64_t i = 0; i < len; ++i) {
                float v = p[off + i];
                if (!std::isfinite(v)) {
                    ++(std::isnan(v) ? nan : inf);
                    continue;
                }
                if (logMag) {
                    if (v == 0.0f) {
                        ++zeros;
                        continue;
                    }
                    v = std::log10(std::fabs(v));
                }
                ++local[static_cast<size_t>(binOf(v)) * 4];
            }
        }
        for (int b = 0; b < bins; ++b)
            counts[b] += uint64_t(local[static_cast<size_t>(b) * 4]) + local[static_cast<size_t>(b) * 4 + 1]
                + local[static_cast<size_t>(b) * 4 + 2] + local[static_cast<size_t>(b) * 4 + 3];
    }
}

TensorStats computeStats(const TensorView& t)
{
    Partial parts[2];
    parallelFor(t.size(), [&](int w, int64_t b, int64_t e) { statsRange(t.data() + b, e - b, parts[w]); });
    parts[0].merge(parts[1]);
    const Partial& p = parts[0];
    TensorStats s;
    s.count = t.size();
    s.finite = p.finite;
    s.nan = p.nan;
    s.posInf = p.posInf;
    s.negInf = p.negInf;
    s.zeros = p.zeros;
    if (p.finite == 0) {
        s.min = s.max = s.mean = s.std = s.l2 = std::numeric_limits<double>::quiet_NaN();
        return s;
    }
    s.min = p.min;
    s.max = p.max;
    s.mean = p.sum / static_cast<double>(p.finite);
    s.std = std::sqrt(std::max(0.0, p.sumSq / static_cast<double>(p.finite) - s.mean * s.mean));
    s.l2 = std::sqrt(p.sumSq);
    return s;
}

Histogram computeHistogram(const TensorView& t, const TensorStats& stats, int bins, HistogramScale scale, double lo, double hi)
{
    Histogram h;
    h.scale = scale;
    bins = std::max(1, bins);
    h.bins.assign(static_cast<size_t>(bins), 0);
    const bool logMag = scale == HistogramScale::LogMagnitude;
    if (!(lo < hi)) {
        if (logMag) {
            const double a = std::max(std::fabs(stats.min), std::fabs(stats.max));
            // Down to 1e-8 of the largest magnitude, or the smallest non-zero value if larger.
            hi = a > 0 ? std::log10(a) : 0.0;
            lo = hi - 8.0;
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
    const double s = bins / (hi - lo);
    std::vector<uint64_t> counts[2] = { std::vector<uint64_t>(static_cast<size_t>(bins), 0),
        std::vector<uint64_t>(static_cast<size_t>(bins), 0) };
    uint64_t nan[2] = { 0, 0 }, inf[2] = { 0, 0 }, zeros[2] = { 0, 0 };
    parallelFor(t.size(), [&](int w, int64_t b, int64_t e) {
        binRange(t.data() + b, e - b, lo, s, bins, logMag, counts[w].data(), nan[w], inf[w], zeros[w]);
    });
    for (int b = 0; b < bins; ++b)
        h.bins[static_cast<size_t>(b)] = counts[0][static_cast<size_t>(b)] + counts[1][static_cast<size_t>(b)];
    h.nan = nan[0] + nan[1];
    h.inf = inf[0] + inf[1];
    h.zeros = zeros[0] + zeros[1];
    return h;
}

} // namespace opscope::debug
