#include "debug/tensor_stats.h"
#include "debug/tensor_stats_typed.h"

#include "debug/stats_simd.h"

#include <Eigen/Core>
#include <cmath>

namespace opscope::debug {

namespace {

using simd::Isa;
using simd::isa;
using simd::kInf;


// Counts, extremes, and the mean and sum of squared deviations of the finite values: merged as
// in Chan et al., they keep the standard deviation's precision for values far from zero.
struct Partial {
    int64_t finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double mean = 0, m2 = 0;

    // n more finite values, with shift c, sum of (x - c) s1 and sum of (x - c)² s2.
    void addShifted(int64_t n, double c, double s1, double s2)
    {
        if (n > 0) addMoments(n, c + s1 / static_cast<double>(n), std::max(0.0, s2 - s1 * s1 / static_cast<double>(n)));
    }

    void addMoments(int64_t n, double nMean, double nM2)
    {
        if (n == 0) return;
        const double a = static_cast<double>(finite), b = static_cast<double>(n), delta = nMean - mean;
        finite += n;
        mean += delta * (b / (a + b));
        m2 += nM2 + delta * delta * (a * b / (a + b));
    }

    void merge(const Partial& o)
    {
        nan += o.nan;
        posInf += o.posInf;
        negInf += o.negInf;
        zeros += o.zeros;
        min = std::min(min, o.min);
        max = std::max(max, o.max);
        addMoments(o.finite, o.mean, o.m2);
    }
};

// ---- Statistics ----

void statsScalar(const float* p, int64_t n, Partial& acc)
{
    int64_t count = 0;
    double c = 0, s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float v = p[i];
        if (std::isnan(v)) {
            ++acc.nan;
        } else if (std::isinf(v)) {
            ++(v > 0 ? acc.posInf : acc.negInf);
        } else {
            if (count++ == 0) c = v;
            acc.min = std::min<double>(acc.min, v);
            acc.max = std::max<double>(acc.max, v);
            acc.zeros += v == 0.0f;
            const double d = v - c;
            s1 += d;
            s2 += d * d;
        }
    }
    acc.addShifted(count, c, s1, s2);
}

// Block sums in float lanes are exact enough once shifted by the block's first value: they are
// redone in double when a value is NaN or ±Inf, or they overflowed (non-finite), or squares of
// deviations may have underflowed (sum below 2^-91 in a block that is not constant).
bool floatSumsUsable(float s1, float s2, float min, float max)
{
    return std::isfinite(s1) && std::isfinite(s2) && (s2 >= 0x1p-91f || min == max);
}

// Portable path: Eigen reductions per block.
void statsEigen(const float* p, int64_t n, Partial& acc)
{
    constexpr int64_t kBlock = 1024;
    for (int64_t off = 0; off < n; off += kBlock) {
        const int64_t len = std::min(kBlock, n - off);
        const Eigen::Map<const Eigen::ArrayXf> a(p + off, len);
        const float c = a[0];
        const float s1 = (a - c).sum(), s2 = (a - c).square().sum(), min = a.minCoeff(), max = a.maxCoeff();
        if (!floatSumsUsable(s1, s2, min, max)) {
            statsScalar(p + off, len, acc);
            continue;
        }
        acc.min = std::min<double>(acc.min, min);
        acc.max = std::max<double>(acc.max, max);
        acc.zeros += (a == 0.0f).count();
        acc.addShifted(len, c, s1, s2);
    }
}

#ifdef OPSCOPE_STATS_X86

// Whether all lanes of mn and mx hold one value.
__attribute__((target(OPSCOPE_AVX2))) bool allEqual(__m256 mn, __m256 mx)
{
    alignas(32) float a[8], b[8];
    _mm256_store_ps(a, mn);
    _mm256_store_ps(b, mx);
    return std::all_of(a, a + 8, [&](float v) { return v == a[0]; }) && std::equal(a, a + 8, b);
}

// One read of each value: min, max, zeros and the shifted sums together, in float lanes per block
// of 512 values.
__attribute__((target(OPSCOPE_AVX2))) void statsAvx2(const float* p, int64_t n, Partial& acc)
{
    constexpr int64_t kBlock = 512;
    const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(kInf), ninf = _mm256_set1_ps(-kInf);
    __m256 runMin = inf, runMax = ninf;
    __m256i zeros = _mm256_setzero_si256(); // 64-bit lanes
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        const float* q = p + i;
        const __m256 c = _mm256_set1_ps(q[0]);
        __m256 s0 = zero, s1 = zero, q0 = zero, q1 = zero, mn = inf, mx = ninf;
        __m256i z = _mm256_setzero_si256();
        for (int64_t j = 0; j < kBlock; j += 16) {
            const __m256 a = _mm256_loadu_ps(q + j), b = _mm256_loadu_ps(q + j + 8);
            const __m256 da = _mm256_sub_ps(a, c), db = _mm256_sub_ps(b, c);
            s0 = _mm256_add_ps(s0, da);
            s1 = _mm256_add_ps(s1, db);
            q0 = _mm256_fmadd_ps(da, da, q0);
            q1 = _mm256_fmadd_ps(db, db, q1);
            mn = _mm256_min_ps(mn, _mm256_min_ps(a, b));
            mx = _mm256_max_ps(mx, _mm256_max_ps(a, b));
            z = _mm256_sub_epi32(z, _mm256_castps_si256(_mm256_cmp_ps(a, zero, _CMP_EQ_OQ)));
            z = _mm256_sub_epi32(z, _mm256_castps_si256(_mm256_cmp_ps(b, zero, _CMP_EQ_OQ)));
        }
        // Lane sums to double, then [sum1, sum2].
        const __m256 s = _mm256_add_ps(s0, s1), sq = _mm256_add_ps(q0, q1);
        const __m256d d1
            = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(s)), _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
        const __m256d d2
            = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(sq)), _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
        const __m256d h = _mm256_hadd_pd(d1, d2);
        const __m128d sums = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
        const double sum1 = _mm_cvtsd_f64(sums), sum2 = _mm_cvtsd_f64(_mm_unpackhi_pd(sums, sums));
        if (!std::isfinite(sum1 + sum2) || (sum2 < 0x1p-91 && !allEqual(mn, mx))) [[unlikely]] {
            statsScalar(q, kBlock, acc);
            continue;
        }
        runMin = _mm256_min_ps(runMin, mn);
        runMax = _mm256_max_ps(runMax, mx);
        // Lanes of z are below 256: byte sums fold them into 64-bit lanes.
        zeros = _mm256_add_epi64(zeros, _mm256_sad_epu8(z, _mm256_setzero_si256()));
        acc.addShifted(kBlock, q[0], sum1, sum2);
    }
    alignas(32) int64_t lz[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lz), zeros);
    for (int64_t c : lz)
        acc.zeros += c;
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
#ifdef OPSCOPE_STATS_X86
    if (isa() >= Isa::Avx2) return statsAvx2(p, n, acc);
#endif
    statsEigen(p, n, acc);
}

} // namespace

TensorStats computeStats(const TensorView& t)
{
    if (t.dtype() != DType::Float32) return detail::typedStats(t);
    Partial parts[2];
    simd::parallelFor(t.size(), [&](int w, int64_t b, int64_t e) { statsRange(t.data() + b, e - b, parts[w]); });
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
    s.mean = p.mean;
    s.std = std::sqrt(p.m2 / static_cast<double>(p.finite));
    s.l2 = std::sqrt(p.m2 + static_cast<double>(p.finite) * p.mean * p.mean);
    return s;
}

} // namespace opscope::debug
