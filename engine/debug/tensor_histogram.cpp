#include "debug/tensor_stats.h"
#include "debug/tensor_stats_typed.h"

#include "debug/stats_simd.h"

#include <cmath>
#include <optional>
#include <vector>

namespace opscope::debug {

namespace {

using simd::Isa;
using simd::isa;
using simd::kInf;

constexpr int64_t kTableMin = 1 << 16; // values from which per-call count tables pay off

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

#ifdef OPSCOPE_STATS_X86

// Vectorised linear bins. A policy bins 8 values (bins16 takes 16 through it, lanes in any order) and
// flags the group when a value is not finite or lies so close to a bin edge that rounding may put
// it on the other side of the edge than Binner does; binExact16 redoes such groups. The policies
// add a constant M = 1.5·2^e to t, so that the rounded sum holds the integer part of t at a fixed
// bit position above the fraction bits. t is first clamped a fraction inside [0, bins]: values at
// lo or hi (zeros after a ReLU, say) are not in doubt.

// Binner's bins of 16 values, with the same double operations, four at a time.
__attribute__((target(OPSCOPE_AVX2), noinline)) void binExact16(const float* p, const Binner& bin, HistPartial& h)
{
    const __m256 x0 = _mm256_loadu_ps(p), x1 = _mm256_loadu_ps(p + 8);
    const __m256 nonFinite = _mm256_cmp_ps(_mm256_sub_ps(x0, x0), _mm256_sub_ps(x1, x1), _CMP_UNORD_Q);
    if (_mm256_movemask_ps(nonFinite) || !std::isfinite(bin.range)) {
        binScalar(p, 16, bin, h);
        return;
    }
    const __m256d lo = _mm256_set1_pd(bin.lo), bins = _mm256_set1_pd(bin.bins), range = _mm256_set1_pd(bin.range);
    const __m256d first = _mm256_setzero_pd(), last = _mm256_set1_pd(bin.bins - 1);
    alignas(16) int32_t idx[16];
    for (int k = 0; k < 16; k += 4) {
        const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(p + k));
        const __m256d t = _mm256_div_pd(_mm256_mul_pd(_mm256_sub_pd(v, lo), bins), range);
        _mm_store_si128(
            reinterpret_cast<__m128i*>(idx + k), _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_max_pd(t, first), last)));
    }
    for (int32_t b : idx)
        ++h.counts[static_cast<size_t>(b)];
}

// t = (x - lo) * (bins / (hi - lo)) in double: within 4 ulps of Binner's t, far below the 2^-32
// resolution kept (bins <= 2^16), so only a zero fraction is in doubt.
struct DoubleParams {
    double lo, scale;
    int bins;
};

struct DoubleBins {
    __m256d lo, scale, magic, min, max;
    __m256i mask;

    __attribute__((target(OPSCOPE_AVX2))) explicit DoubleBins(const DoubleParams& c)
        : lo(_mm256_set1_pd(c.lo))
        , scale(_mm256_set1_pd(c.scale))
        , magic(_mm256_set1_pd(1.5 * (1 << 20)))
        , min(_mm256_set1_pd(1.5 * (1 << 20) + 0.25))
        , max(_mm256_set1_pd(1.5 * (1 << 20) + c.bins - 0.25))
        , mask(_mm256_set1_epi32((1 << 19) - 1))
    {
    }

    // Bins in the high words of t + M, fractions in the low words.
    __attribute__((target(OPSCOPE_AVX2), always_inline)) inline __m256i bins8(__m256 x, __m256i& doubt) const
    {
        const __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
        const __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
        __m256d y0 = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(d0, lo), scale), magic);
        __m256d y1 = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(d1, lo), scale), magic);
        y0 = _mm256_min_pd(_mm256_max_pd(y0, min), max);
        y1 = _mm256_min_pd(_mm256_max_pd(y1, min), max);
        const __m256 frac = _mm256_shuffle_ps(_mm256_castpd_ps(y0), _mm256_castpd_ps(y1), 0x88);
        const __m256 high = _mm256_shuffle_ps(_mm256_castpd_ps(y0), _mm256_castpd_ps(y1), 0xDD);
        doubt = _mm256_or_si256(doubt, _mm256_cmpeq_epi32(_mm256_castps_si256(frac), _mm256_setzero_si256()));
        return _mm256_and_si256(_mm256_castps_si256(high), mask);
    }

};

// y = (x - flo) * fs + M in float, M = 1.5·2^e with 2^(e-1) >= bins: f = 23 - e fraction bits.
// |y - M - t| < window·2^-f for Binner's t in [0, bins] (bound in floatParams).
struct FloatParams {
    float lo, scale, magic;
    int bins, fracBits, window;
};

bool floatParams(const Binner& bin, FloatParams& p)
{
    const double s = bin.bins / bin.range;
    const float flo = static_cast<float>(bin.lo), fs = static_cast<float>(s);
    if (!std::isfinite(flo) || !std::isfinite(fs) || !(fs > 0) || bin.bins > (1 << 16)) return false;
    int e = 1;
    while ((1 << (e - 1)) < bin.bins)
        ++e;
    const int f = 23 - e;
    const double unit = std::ldexp(1.0, -f);
    // fs and x - flo round (2^-24 relative each), lo rounds to flo, y rounds (half a unit);
    // Binner's own roundings and s against the exact quotient: well below 2^-40 relative.
    const double rel = std::fabs(fs - s) / s + 0x1p-24 + 0x1p-40;
    const double err
        = (bin.bins + 1) * rel + std::fabs(bin.lo - static_cast<double>(flo)) * fs * (1 + 0x1p-23) + unit / 2;
    int window = 1; // a power of two: the test is a mask
    while (window <= err / unit)
        window *= 2;
    if (window * 64.0 > std::ldexp(1.0, f)) // more than 1/32 of the values in doubt
        return false;
    p = { flo, fs, static_cast<float>(std::ldexp(1.5, e)), bin.bins, f, window };
    return true;
}

struct FloatBins {
    __m256 lo, scale, magic, min, max;
    __m256i window, edgeMask, binMask;
    __m128i shift;

    __attribute__((target(OPSCOPE_AVX2))) explicit FloatBins(const FloatParams& c)
        : lo(_mm256_set1_ps(c.lo))
        , scale(_mm256_set1_ps(c.scale))
        , magic(_mm256_set1_ps(c.magic))
        , min(_mm256_set1_ps(c.magic + 0.5f))
        , max(_mm256_set1_ps(c.magic + static_cast<float>(c.bins) - 0.5f))
        , window(_mm256_set1_epi32(c.window))
        , edgeMask(_mm256_set1_epi32(((1 << c.fracBits) - 1) & ~(2 * c.window - 1)))
        , binMask(_mm256_set1_epi32((1 << (22 - c.fracBits)) - 1))
        , shift(_mm_cvtsi32_si128(c.fracBits))
    {
    }

    // In doubt when the fraction is within `window` units of an integer.
    __attribute__((target(OPSCOPE_AVX2), always_inline)) inline __m256i bins8(__m256 x, __m256i& doubt) const
    {
        __m256 y = _mm256_fmadd_ps(_mm256_sub_ps(x, lo), scale, magic);
        y = _mm256_min_ps(_mm256_max_ps(y, min), max);
        const __m256i near = _mm256_and_si256(_mm256_add_epi32(_mm256_castps_si256(y), window), edgeMask);
        doubt = _mm256_or_si256(doubt, _mm256_cmpeq_epi32(near, _mm256_setzero_si256()));
        return _mm256_and_si256(_mm256_srl_epi32(_mm256_castps_si256(y), shift), binMask);
    }

};

// The bins of 16 values by a policy's bins8 (lanes in any order): false when a value is not finite
// or in doubt (binExact16 then redoes the group).
template <class Bins>
__attribute__((target(OPSCOPE_AVX2), always_inline)) inline bool bins16(
    const Bins& policy, const float* p, __m256i& a, __m256i& b)
{
    const __m256 xa = _mm256_loadu_ps(p), xb = _mm256_loadu_ps(p + 8);
    // x - x is NaN exactly for NaN and ±Inf.
    __m256i doubt = _mm256_castps_si256(_mm256_cmp_ps(_mm256_sub_ps(xa, xa), _mm256_sub_ps(xb, xb), _CMP_UNORD_Q));
    a = policy.bins8(xa, doubt);
    b = policy.bins8(xb, doubt);
    return _mm256_testz_si256(doubt, doubt);
}

// With kPairs (bins <= 64) two bins a and b count as one a·bins + b in a bins² table: half the
// read-modify-writes. Otherwise four interleaved tables avoid store-to-load stalls on repeats.
template <bool kPairs, class Bins>
__attribute__((target(OPSCOPE_AVX2))) void binAvx2(
    const float* p, int64_t n, const Bins& policyRef, const Binner& bin, uint32_t* table, HistPartial& h)
{
    const Bins policy = policyRef; // a local copy: the counts stores cannot alias it
    const __m256i weights = _mm256_set1_epi32((1 << 16) | bin.bins);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a, b;
        if (!bins16(policy, p + i, a, b)) [[unlikely]] {
            binExact16(p + i, bin, h);
            continue;
        }
        if constexpr (kPairs) {
            // Through general registers, two indexes a move: cheaper than a store and reloads.
            const __m256i pairs = _mm256_madd_epi16(_mm256_packs_epi32(a, b), weights);
            const __m128i lo = _mm256_castsi256_si128(pairs), hi = _mm256_extracti128_si256(pairs, 1);
            const uint64_t q[4]
                = { static_cast<uint64_t>(_mm_cvtsi128_si64(lo)), static_cast<uint64_t>(_mm_extract_epi64(lo, 1)),
                      static_cast<uint64_t>(_mm_cvtsi128_si64(hi)), static_cast<uint64_t>(_mm_extract_epi64(hi, 1)) };
            for (uint64_t v : q) {
                ++table[static_cast<uint32_t>(v)];
                ++table[v >> 32];
            }
        } else {
            alignas(32) int32_t idx[16];
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx), a);
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx + 8), b);
            for (int j = 0; j < 16; ++j)
                ++table[idx[j] * 4 + (j & 3)];
        }
    }
    binScalar(p + i, n - i, bin, h);
}

template <class Bins>
__attribute__((target(OPSCOPE_AVX2))) void binChunks(
    const float* p, int64_t n, const Bins& policy, const Binner& bin, HistPartial& h)
{
    const bool pairs = bin.bins <= 64 && n >= kTableMin;
    const size_t bins = static_cast<size_t>(bin.bins), width = pairs ? bins : 4;
    std::vector<uint32_t> table(bins * width, 0);
    // Entries stay below 2^32: flushed every 2^31 values.
    auto flush = [&] {
        for (size_t a = 0; a < bins; ++a) {
            for (size_t b = 0; b < width; ++b) {
                const uint32_t v = table[a * width + b];
                h.counts[a] += v;
                if (pairs) h.counts[b] += v;
            }
        }
        std::fill(table.begin(), table.end(), 0);
    };
    constexpr int64_t kFlushEvery = int64_t(1) << 31;
    for (int64_t off = 0; off < n; off += kFlushEvery) {
        const int64_t len = std::min(kFlushEvery, n - off);
        if (pairs)
            binAvx2<true>(p + off, len, policy, bin, table.data(), h);
        else
            binAvx2<false>(p + off, len, policy, bin, table.data(), h);
        flush();
    }
}

// GCC 12 takes the _mm512_undefined_* operands of these intrinsics for uninitialised reads.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Bins <= 64 with AVX-512: each value sets bit `bin` of a 64-bit lane, and these one-hot vectors
// are summed position by position in bit-sliced counters (carry-save adders, two ternary-logic
// operations a vector): no store per value.
struct Float512 {
    __m512 lo, scale, magic, min, max;
    __m512i window, edgeMask, binMask, one;
    __m128i shiftEven, shiftOdd;

    __attribute__((target(OPSCOPE_AVX512))) explicit Float512(const FloatParams& c)
        : lo(_mm512_set1_ps(c.lo))
        , scale(_mm512_set1_ps(c.scale))
        , magic(_mm512_set1_ps(c.magic))
        , min(_mm512_set1_ps(c.magic + 0.5f))
        , max(_mm512_set1_ps(c.magic + static_cast<float>(c.bins) - 0.5f))
        , window(_mm512_set1_epi32(c.window))
        , edgeMask(_mm512_set1_epi32(((1 << c.fracBits) - 1) & ~(2 * c.window - 1)))
        , binMask(_mm512_set1_epi64((1 << (22 - c.fracBits)) - 1))
        , one(_mm512_set1_epi64(1))
        , shiftEven(_mm_cvtsi32_si128(c.fracBits))
        , shiftOdd(_mm_cvtsi32_si128(32 + c.fracBits))
    {
    }
};

// One-hot bins of p[0..15], even elements in `even` and odd ones in `odd`; a group in doubt (as
// in FloatBins) goes to binExact16 and contributes nothing here.
__attribute__((target(OPSCOPE_AVX512), always_inline)) inline void oneHot16(
    const float* p, const Float512& c, const Binner& bin, HistPartial& h, __m512i& even, __m512i& odd)
{
    constexpr int kNanOrInf = 0x01 | 0x08 | 0x10 | 0x80;
    const __m512 x = _mm512_loadu_ps(p);
    __m512 y = _mm512_fmadd_ps(_mm512_sub_ps(x, c.lo), c.scale, c.magic);
    y = _mm512_min_ps(_mm512_max_ps(y, c.min), c.max);
    const __m512i q = _mm512_castps_si512(y);
    const __mmask16 doubt
        = _mm512_testn_epi32_mask(_mm512_add_epi32(q, c.window), c.edgeMask) | _mm512_fpclass_ps_mask(x, kNanOrInf);
    even = _mm512_sllv_epi64(c.one, _mm512_and_si512(_mm512_srl_epi64(q, c.shiftEven), c.binMask));
    odd = _mm512_sllv_epi64(c.one, _mm512_and_si512(_mm512_srl_epi64(q, c.shiftOdd), c.binMask));
    if (doubt) [[unlikely]] {
        binExact16(p, bin, h);
        even = odd = _mm512_setzero_si512();
    }
}

void addPlane(const __m512i& plane, uint64_t weight, HistPartial& h)
{
    alignas(64) uint64_t lanes[8];
    std::memcpy(lanes, &plane, sizeof lanes);
    for (uint64_t bits : lanes)
        for (; bits; bits &= bits - 1)
            h.counts[static_cast<size_t>(__builtin_ctzll(bits))] += weight;
}

// sum + a + b = sum' + 2·carry, bit by bit.
__attribute__((target(OPSCOPE_AVX512), always_inline)) inline void csa(
    __m512i& carry, __m512i& sum, __m512i a, __m512i b)
{
    carry = _mm512_ternarylogic_epi64(sum, a, b, 0xE8);
    sum = _mm512_ternarylogic_epi64(sum, a, b, 0x96);
}

__attribute__((target(OPSCOPE_AVX512))) void binBitSliced(
    const float* p, int64_t n, const FloatParams& params, const Binner& bin, HistPartial& h)
{
    // Count of a position = ones + 2·twos + 4·fours + 8·eights + 16·(up as a binary number).
    constexpr int kUp = 12;
    constexpr int64_t kBlock = 128; // 16 one-hot vectors
    constexpr int64_t kBlocksPerFlush = ((int64_t(1) << (4 + kUp)) - 1) / 16;
    const Float512 c(params);
    __m512i ones = _mm512_setzero_si512(), twos = ones, fours = ones, eights = ones, up[kUp];
    for (__m512i& v : up)
        v = ones;
    auto flush = [&] __attribute__((always_inline))
    {
        addPlane(ones, 1, h);
        addPlane(twos, 2, h);
        addPlane(fours, 4, h);
        addPlane(eights, 8, h);
        for (int k = 0; k < kUp; ++k)
            addPlane(up[k], uint64_t(16) << k, h);
    };
    int64_t blocks = 0, i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        const float* q = p + i;
        __m512i a, b, twosA, twosB, foursA, foursB, eightsA, eightsB, sixteens;
        oneHot16(q, c, bin, h, a, b);
        csa(twosA, ones, a, b);
        oneHot16(q + 16, c, bin, h, a, b);
        csa(twosB, ones, a, b);
        csa(foursA, twos, twosA, twosB);
        oneHot16(q + 32, c, bin, h, a, b);
        csa(twosA, ones, a, b);
        oneHot16(q + 48, c, bin, h, a, b);
        csa(twosB, ones, a, b);
        csa(foursB, twos, twosA, twosB);
        csa(eightsA, fours, foursA, foursB);
        oneHot16(q + 64, c, bin, h, a, b);
        csa(twosA, ones, a, b);
        oneHot16(q + 80, c, bin, h, a, b);
        csa(twosB, ones, a, b);
        csa(foursA, twos, twosA, twosB);
        oneHot16(q + 96, c, bin, h, a, b);
        csa(twosA, ones, a, b);
        oneHot16(q + 112, c, bin, h, a, b);
        csa(twosB, ones, a, b);
        csa(foursB, twos, twosA, twosB);
        csa(eightsB, fours, foursA, foursB);
        csa(sixteens, eights, eightsA, eightsB);
        for (int k = 0; k < kUp; ++k) {
            const __m512i carry = _mm512_and_si512(up[k], sixteens);
            up[k] = _mm512_xor_si512(up[k], sixteens);
            sixteens = carry;
        }
        if (++blocks == kBlocksPerFlush) {
            flush();
            ones = twos = fours = eights = _mm512_setzero_si512();
            for (__m512i& v : up)
                v = ones;
            blocks = 0;
        }
    }
    binScalar(p + i, n - i, bin, h);
    flush();
}
#pragma GCC diagnostic pop
#endif

// LogMagnitude: log10 of floats is monotone (neighbouring floats differ by far more than its
// rounding error), so bins are steps in |x|. A table indexed by the top 15 bits of |x| (exponent
// and 7 mantissa bits) holds the bin of every |x| in its range, or -1 when a bin edge falls inside
// the range: then Binner bins the value itself.
class LogTable {
public:
    explicit LogTable(const Binner& bin)
        : m_bins(size_t(1) << 15)
    {
        // first[k]: bits of the smallest positive float in bin k or above; first[bins] a sentinel.
        std::vector<uint32_t> first(static_cast<size_t>(bin.bins) + 1, UINT32_MAX);
        first[0] = 0;
        for (int k = 1; k < bin.bins; ++k)
            first[static_cast<size_t>(k)] = firstInBin(bin, k);
        size_t k = 0;
        for (uint32_t key = 0; key < m_bins.size(); ++key) {
            const uint32_t lowest = std::max(key << 16, 1u), highest = (key << 16) | 0xFFFF;
            while (first[k + 1] <= lowest)
                ++k;
            m_bins[key] = first[k + 1] <= highest ? int16_t(-1) : static_cast<int16_t>(k);
        }
    }

    static bool usable(const Binner& bin) { return bin.logMag && bin.bins < (1 << 15); }
    int operator()(uint32_t absBits) const { return m_bins[absBits >> 16]; }

private:
    static constexpr uint32_t kInfBits = 0x7F800000;

    static int binOfBits(const Binner& bin, uint32_t bits)
    {
        float v;
        std::memcpy(&v, &bits, sizeof v);
        return bin(std::log10(static_cast<double>(v)));
    }

    // Binary search over the positive floats, from a guess at 10^edge when it brackets the edge.
    static uint32_t firstInBin(const Binner& bin, int k)
    {
        uint32_t lo = 1, hi = kInfBits - 1;
        if (binOfBits(bin, lo) >= k) return lo;
        if (binOfBits(bin, hi) < k) return kInfBits;
        const float guess = static_cast<float>(std::pow(10.0, bin.lo + k * bin.range / bin.bins));
        uint32_t g;
        std::memcpy(&g, &guess, sizeof g);
        if (guess > 0 && g > lo + 64 && g + 64 < hi && binOfBits(bin, g - 64) < k && binOfBits(bin, g + 64) >= k) {
            lo = g - 64;
            hi = g + 64;
        }
        while (hi - lo > 1) { // bin(lo) < k <= bin(hi)
            const uint32_t mid = lo + (hi - lo) / 2;
            (binOfBits(bin, mid) >= k ? hi : lo) = mid;
        }
        return hi;
    }

    std::vector<int16_t> m_bins;
};

void binLogTable(const float* p, int64_t n, const Binner& bin, const LogTable& table, HistPartial& h)
{
    std::vector<uint64_t> local(static_cast<size_t>(bin.bins) * 4, 0); // four interleaved, as in binAvx2
    for (int64_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, p + i, sizeof bits);
        bits &= 0x7FFFFFFF;
        if (bits >= 0x7F800000) {
            ++(bits > 0x7F800000 ? h.nan : h.inf);
            continue;
        }
        if (bits == 0) {
            ++h.zeros;
            continue;
        }
        int b = table(bits);
        if (b < 0) b = bin(std::log10(std::fabs(static_cast<double>(p[i]))));
        ++local[static_cast<size_t>(b) * 4 + static_cast<size_t>(i & 3)];
    }
    for (size_t b = 0; b < h.counts.size(); ++b)
        h.counts[b] += local[b * 4] + local[b * 4 + 1] + local[b * 4 + 2] + local[b * 4 + 3];
}

void binRange(const float* p, int64_t n, const Binner& bin, const LogTable* logTable, HistPartial& h)
{
#ifdef OPSCOPE_STATS_X86
    const Isa level = isa();
    if (!bin.logMag && n >= 16 && level >= Isa::Avx2) {
        FloatParams fp;
        if (floatParams(bin, fp)) {
            if (level == Isa::Avx512 && bin.bins <= 64 && n >= kTableMin) return binBitSliced(p, n, fp, bin, h);
            return binChunks(p, n, FloatBins(fp), bin, h);
        }
        const double scale = bin.bins / bin.range;
        if (std::isfinite(scale) && scale > 0 && bin.bins <= (1 << 16))
            return binChunks(p, n, DoubleBins(DoubleParams { bin.lo, scale, bin.bins }), bin, h);
    }
#endif
    if (logTable) return binLogTable(p, n, bin, *logTable, h);
    binScalar(p, n, bin, h);
}

} // namespace

Histogram computeHistogram(
    const TensorView& t, const TensorStats& stats, int bins, HistogramScale scale, double lo, double hi)
{
    if (t.dtype() != DType::Float32) return detail::typedHistogram(t, stats, bins, scale, lo, hi);
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
    std::optional<LogTable> logTable;
    if (LogTable::usable(bin) && t.size() >= kTableMin) logTable.emplace(bin);
    simd::parallelFor(t.size(), [&](int w, int64_t b, int64_t e) {
        binRange(t.data() + b, e - b, bin, logTable ? &*logTable : nullptr, parts[w]);
    });
    h.bins.resize(static_cast<size_t>(bins));
    for (size_t b = 0; b < h.bins.size(); ++b)
        h.bins[b] = parts[0].counts[b] + parts[1].counts[b];
    h.nan = parts[0].nan + parts[1].nan;
    h.inf = parts[0].inf + parts[1].inf;
    h.zeros = parts[0].zeros + parts[1].zeros;
    return h;
}

} // namespace opscope::debug
