#include "debug/tensor_stats.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#if defined(__GNUC__) && defined(__x86_64__)
#define OPSCOPE_STATS_AVX2 1
#include <immintrin.h>
#endif

namespace opscope::debug {

namespace {

constexpr int64_t kChunk = 16384;
constexpr int64_t kParallelMin = 1 << 20;
constexpr float kInf = std::numeric_limits<float>::infinity();

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

bool hasAvx2()
{
#ifdef OPSCOPE_STATS_AVX2
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
#else
    return false;
#endif
}

template <class Fn> void parallelFor(int64_t n, Fn fn)
{
    const int threads
        = n >= kParallelMin ? static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency()))) : 1;
    if (threads == 1) {
        fn(0, 0, n);
        return;
    }
    // On a chunk boundary: both passes split the tensor alike.
    const int64_t half = (n / 2 + kChunk - 1) / kChunk * kChunk;
    std::thread worker([&] { fn(1, half, n); });
    fn(0, 0, half);
    worker.join();
}

// ---- Statistics ----

void statsScalar(const float* p, int64_t n, Partial& acc)
{
    for (int64_t i = 0; i < n; ++i) {
        const float v = p[i];
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

// Portable path: Eigen reductions per chunk.
void statsEigen(const float* p, int64_t n, Partial& acc)
{
    for (int64_t off = 0; off < n; off += kChunk) {
        const int64_t len = std::min(kChunk, n - off);
        const Eigen::Map<const Eigen::ArrayXf> a(p + off, len);
        const float sum = a.sum(), sumSq = a.square().sum();
        // Non-finite when a value is NaN or ±Inf, or the float sums overflowed.
        if (!std::isfinite(sum) || !std::isfinite(sumSq)) {
            statsScalar(p + off, len, acc);
            continue;
        }
        acc.finite += len;
        acc.min = std::min<double>(acc.min, a.minCoeff());
        acc.max = std::max<double>(acc.max, a.maxCoeff());
        acc.sum += sum;
        acc.sumSq += sumSq;
        acc.zeros += (a == 0.0f).count();
    }
}

#ifdef OPSCOPE_STATS_AVX2
__attribute__((target("avx2,fma"))) inline double hsum(__m256d v)
{
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// One read of each value: sum, sum of squares, min, max and zeros together. Float lanes per block
// of 2048 values, double across blocks; a block with a non-finite value is redone value by value.
__attribute__((target("avx2,fma"))) void statsAvx2(const float* p, int64_t n, Partial& acc)
{
    constexpr int64_t kBlock = 2048;
    const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(kInf), ninf = _mm256_set1_ps(-kInf);
    __m256d sumLo = _mm256_setzero_pd(), sumHi = sumLo, sqLo = sumLo, sqHi = sumLo;
    __m256 runMin = inf, runMax = ninf;
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        const float* q = p + i;
        __m256 s0 = zero, s1 = zero, q0 = zero, q1 = zero, mn0 = inf, mn1 = inf, mx0 = ninf, mx1 = ninf;
        __m256i z0 = _mm256_setzero_si256(), z1 = z0;
        for (int64_t j = 0; j < kBlock; j += 16) {
            const __m256 a = _mm256_loadu_ps(q + j), b = _mm256_loadu_ps(q + j + 8);
            s0 = _mm256_add_ps(s0, a);
            s1 = _mm256_add_ps(s1, b);
            q0 = _mm256_fmadd_ps(a, a, q0);
            q1 = _mm256_fmadd_ps(b, b, q1);
            mn0 = _mm256_min_ps(mn0, a);
            mn1 = _mm256_min_ps(mn1, b);
            mx0 = _mm256_max_ps(mx0, a);
            mx1 = _mm256_max_ps(mx1, b);
            z0 = _mm256_sub_epi32(z0, _mm256_castps_si256(_mm256_cmp_ps(a, zero, _CMP_EQ_OQ)));
            z1 = _mm256_sub_epi32(z1, _mm256_castps_si256(_mm256_cmp_ps(b, zero, _CMP_EQ_OQ)));
        }
        const __m256 s = _mm256_add_ps(s0, s1), sq = _mm256_add_ps(q0, q1);
        // NaN or ±Inf in the block (or a float overflow) leaves s + sq non-finite, and x - x NaN.
        const __m256 probe = _mm256_add_ps(s, sq);
        if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(probe, probe), zero, _CMP_NEQ_UQ))) {
            statsScalar(q, kBlock, acc);
            continue;
        }
        sumLo = _mm256_add_pd(sumLo, _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
        sumHi = _mm256_add_pd(sumHi, _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
        sqLo = _mm256_add_pd(sqLo, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
        sqHi = _mm256_add_pd(sqHi, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
        runMin = _mm256_min_ps(runMin, _mm256_min_ps(mn0, mn1));
        runMax = _mm256_max_ps(runMax, _mm256_max_ps(mx0, mx1));
        alignas(32) int32_t z[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(z), _mm256_add_epi32(z0, z1));
        acc.zeros += int64_t(z[0]) + z[1] + z[2] + z[3] + z[4] + z[5] + z[6] + z[7];
        acc.finite += kBlock;
    }
    acc.sum += hsum(_mm256_add_pd(sumLo, sumHi));
    acc.sumSq += hsum(_mm256_add_pd(sqLo, sqHi));
    alignas(32) float mn[8], mx[8];
    _mm256_store_ps(mn, runMin);
    _mm256_store_ps(mx, runMax);
    for (int l = 0; l < 8; ++l) {
        acc.min = std::min<double>(acc.min, mn[l]);
        acc.max = std::max<double>(acc.max, mx[l]);
    }
    statsScalar(p + i, n - i, acc);
}
#endif

void statsRange(const float* p, int64_t n, Partial& acc)
{
#ifdef OPSCOPE_STATS_AVX2
    if (hasAvx2()) return statsAvx2(p, n, acc);
#endif
    statsEigen(p, n, acc);
}

// ---- Histogram ----

// Bin of a value (log10|x| in LogMagnitude): floor((v - lo) * bins / (hi - lo)) clamped to
// [0, bins - 1], in double. Every path bins exactly like this.
struct Binner {
    double lo = 0, range = 1;
    int bins = 1;
    bool logMag = false;

    int operator()(double v) const
    {
        const double t = (v - lo) * bins / range;
        if (!(t >= 1)) return 0;
        return t >= bins - 1 ? bins - 1 : static_cast<int>(t);
    }
};

struct HistPartial {
    std::vector<uint64_t> counts;
    uint64_t nan = 0, inf = 0, zeros = 0;
};

void binScalar(const float* p, int64_t n, const Binner& bin, HistPartial& h)
{
    for (int64_t i = 0; i < n; ++i) {
        const float v = p[i];
        if (!std::isfinite(v)) {
            ++(std::isnan(v) ? h.nan : h.inf);
        } else if (!bin.logMag) {
            ++h.counts[static_cast<size_t>(bin(v))];
        } else if (v == 0.0f) {
            ++h.zeros;
        } else {
            ++h.counts[static_cast<size_t>(bin(std::log10(std::fabs(static_cast<double>(v)))))];
        }
    }
}

#ifdef OPSCOPE_STATS_AVX2
// Linear bins of finite values, 16 at a time. t = (v - lo) * (bins / (hi - lo)) in double is
// within a few ulps of Binner's t; clamped to [1/4, bins - 1/4] and added to 1.5·2^20, its
// integer part lands in the high word and 32 bits of fraction in the low word. A zero fraction
// (t within 2^-33 of a bin edge) or a non-finite value sends the 16 values to binScalar.
// With kPairs (bins <= 64) two bins a and b count as one a·bins + b in a bins² table.
struct LinearAvx2 {
    double lo, scale;
    int bins;
};

struct LinearConsts {
    __m256d lo, scale, min, max, magic;
    __m256i mask;
    __attribute__((target("avx2,fma"))) explicit LinearConsts(const LinearAvx2& c)
        : lo(_mm256_set1_pd(c.lo))
        , scale(_mm256_set1_pd(c.scale))
        , min(_mm256_set1_pd(0.25))
        , max(_mm256_set1_pd(c.bins - 0.25))
        , magic(_mm256_set1_pd(1.5 * (1 << 20)))
        , mask(_mm256_set1_epi32((1 << 19) - 1))
    {
    }
};

// Bins of 8 values in the high words (lane order mixed); flags edge and non-finite values.
__attribute__((target("avx2,fma"), always_inline)) inline __m256i bins8(__m256 x, const LinearConsts& k, __m256i& flag)
{
    const __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
    const __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
    __m256d t0 = _mm256_mul_pd(_mm256_sub_pd(d0, k.lo), k.scale);
    __m256d t1 = _mm256_mul_pd(_mm256_sub_pd(d1, k.lo), k.scale);
    t0 = _mm256_add_pd(_mm256_min_pd(_mm256_max_pd(t0, k.min), k.max), k.magic);
    t1 = _mm256_add_pd(_mm256_min_pd(_mm256_max_pd(t1, k.min), k.max), k.magic);
    const __m256 hi = _mm256_shuffle_ps(_mm256_castpd_ps(t0), _mm256_castpd_ps(t1), 0xDD);
    const __m256 lo = _mm256_shuffle_ps(_mm256_castpd_ps(t0), _mm256_castpd_ps(t1), 0x88);
    const __m256 nonFinite = _mm256_cmp_ps(_mm256_sub_ps(x, x), _mm256_setzero_ps(), _CMP_NEQ_UQ);
    flag = _mm256_or_si256(flag,
        _mm256_or_si256(
            _mm256_cmpeq_epi32(_mm256_castps_si256(lo), _mm256_setzero_si256()), _mm256_castps_si256(nonFinite)));
    return _mm256_and_si256(_mm256_castps_si256(hi), k.mask);
}

template <bool kPairs>
__attribute__((target("avx2,fma"))) void binAvx2(
    const float* p, int64_t n, const LinearAvx2& c, const Binner& bin, uint32_t* table, HistPartial& h)
{
    const LinearConsts k(c);
    const __m256i izero = _mm256_setzero_si256();
    const __m256i weights = _mm256_set1_epi32((1 << 16) | c.bins);
    int64_t i = 0;
    alignas(32) int32_t idx[16];
    for (; i + 16 <= n; i += 16) {
        __m256i flag = izero;
        const __m256i a = bins8(_mm256_loadu_ps(p + i), k, flag);
        const __m256i b = bins8(_mm256_loadu_ps(p + i + 8), k, flag);
        if (!_mm256_testz_si256(flag, flag)) {
            binScalar(p + i, 16, bin, h);
            continue;
        }
        if constexpr (kPairs) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx), _mm256_madd_epi16(_mm256_packs_epi32(a, b), weights));
            for (int j = 0; j < 8; ++j)
                ++table[idx[j]];
        } else {
            // Four interleaved count arrays: no store-to-load stall on repeated bins.
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx), a);
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx + 8), b);
            for (int j = 0; j < 16; ++j)
                ++table[idx[j] * 4 + (j & 3)];
        }
    }
    binScalar(p + i, n - i, bin, h);
}
#endif

// Counts [p, p + n) into h. Chunks are taken last to first: the tail of the range, read last by
// the statistics pass, may still be in the last-level cache.
void binRange(const float* p, int64_t n, const Binner& bin, HistPartial& h)
{
#ifdef OPSCOPE_STATS_AVX2
    const double scale = bin.bins / bin.range;
    if (!bin.logMag && hasAvx2() && std::isfinite(scale) && bin.bins <= (1 << 16)) {
        const LinearAvx2 c { bin.lo, scale, bin.bins };
        const bool pairs = bin.bins <= 64 && n >= 4 * kChunk;
        const size_t bins = static_cast<size_t>(bin.bins);
        std::vector<uint32_t> table(pairs ? bins * bins : bins * 4, 0);
        // Table entries stay below 2^32: flushed at least every 2^31 values.
        auto flush = [&] {
            for (size_t a = 0; a < bins; ++a) {
                for (size_t b = 0; b < (pairs ? bins : 4); ++b) {
                    const uint32_t v = table[a * (pairs ? bins : 4) + b];
                    h.counts[a] += v;
                    if (pairs) h.counts[b] += v;
                }
            }
            std::fill(table.begin(), table.end(), 0);
        };
        int64_t sinceFlush = 0;
        for (int64_t off = (n - 1) / kChunk * kChunk; off >= 0; off -= kChunk) {
            const int64_t len = std::min(kChunk, n - off);
            if (pairs)
                binAvx2<true>(p + off, len, c, bin, table.data(), h);
            else
                binAvx2<false>(p + off, len, c, bin, table.data(), h);
            if ((sinceFlush += len) >= (int64_t(1) << 31)) {
                flush();
                sinceFlush = 0;
            }
        }
        flush();
        return;
    }
#endif
    binScalar(p, n, bin, h);
}

} // namespace

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

Histogram computeHistogram(
    const TensorView& t, const TensorStats& stats, int bins, HistogramScale scale, double lo, double hi)
{
    Histogram h;
    h.scale = scale;
    bins = std::max(1, bins);
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
    const Binner bin { lo, hi - lo, bins, logMag };
    HistPartial parts[2];
    for (HistPartial& part : parts)
        part.counts.assign(static_cast<size_t>(bins), 0);
    parallelFor(t.size(), [&](int w, int64_t b, int64_t e) { binRange(t.data() + b, e - b, bin, parts[w]); });
    h.bins.resize(static_cast<size_t>(bins));
    for (size_t b = 0; b < h.bins.size(); ++b)
        h.bins[b] = parts[0].counts[b] + parts[1].counts[b];
    h.nan = parts[0].nan + parts[1].nan;
    h.inf = parts[0].inf + parts[1].inf;
    h.zeros = parts[0].zeros + parts[1].zeros;
    return h;
}

} // namespace opscope::debug
