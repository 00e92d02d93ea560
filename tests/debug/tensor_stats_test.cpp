#include "debug/tensor_stats.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <numeric>
#include <span>
#include <string>

using namespace opscope;
using namespace opscope::debug;

TEST(TensorStats, KnownValuesWithNanAndInf)
{
    Tensor t = Tensor::fromValues(Shape({ 8 }), std::vector<float> { 1, -2, 0, 3, NAN, INFINITY, -INFINITY, 0 });
    TensorStats s = computeStats(t.view());
    EXPECT_EQ(s.count, 8);
    EXPECT_EQ(s.finite, 5);
    EXPECT_EQ(s.nan, 1);
    EXPECT_EQ(s.posInf, 1);
    EXPECT_EQ(s.negInf, 1);
    EXPECT_EQ(s.zeros, 2);
    EXPECT_DOUBLE_EQ(s.min, -2);
    EXPECT_DOUBLE_EQ(s.max, 3);
    EXPECT_DOUBLE_EQ(s.mean, 0.4);
    EXPECT_NEAR(s.std, std::sqrt((1 + 4 + 0 + 9 + 0) / 5.0 - 0.16), 1e-12);
    EXPECT_NEAR(s.l2, std::sqrt(14.0), 1e-12);
}

TEST(TensorStats, AllNonFiniteGivesNan)
{
    Tensor t = Tensor::full(Shape({ 3 }), NAN);
    TensorStats s = computeStats(t.view());
    EXPECT_EQ(s.nan, 3);
    EXPECT_TRUE(std::isnan(s.min));
    EXPECT_TRUE(std::isnan(s.mean));
}

// Large tensors take the two-thread path and the vectorised chunks; compare with a plain loop.
TEST(TensorStats, LargeTensorMatchesAPlainLoop)
{
    Generator gen(3);
    Tensor t = Tensor::normal(Shape({ 3'000'017 }), 1.5f, 2.0f, &gen);
    t.at(12345) = NAN;
    t.at(2'999'999) = -INFINITY;
    t.at(100) = 0.0f;
    double sum = 0, sq = 0, mn = INFINITY, mx = -INFINITY;
    int64_t finite = 0;
    for (float v : t.values()) {
        if (!std::isfinite(v)) continue;
        ++finite;
        sum += v;
        sq += double(v) * v;
        mn = std::min<double>(mn, v);
        mx = std::max<double>(mx, v);
    }
    TensorStats s = computeStats(t.view());
    EXPECT_EQ(s.finite, finite);
    EXPECT_EQ(s.nan, 1);
    EXPECT_EQ(s.negInf, 1);
    EXPECT_GE(s.zeros, 1);
    EXPECT_DOUBLE_EQ(s.min, mn);
    EXPECT_DOUBLE_EQ(s.max, mx);
    EXPECT_NEAR(s.mean, sum / finite, 1e-6);
    EXPECT_NEAR(s.std, std::sqrt(sq / finite - (sum / finite) * (sum / finite)), 1e-5);

    Histogram h = computeHistogram(t.view(), s, 64);
    const uint64_t total = std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0));
    EXPECT_EQ(total + h.nan + h.inf, static_cast<uint64_t>(t.size()));
    EXPECT_EQ(h.nan, 1u);
    EXPECT_EQ(h.inf, 1u);
}

TEST(Histogram, LinearBinsAreExact)
{
    // 0..99 into 10 bins over [0, 100): ten per bin.
    std::vector<float> v(100);
    std::iota(v.begin(), v.end(), 0.0f);
    Tensor t = Tensor::fromValues(Shape({ 100 }), v);
    TensorStats s = computeStats(t.view());
    Histogram h = computeHistogram(t.view(), s, 10, HistogramScale::Linear, 0, 100);
    for (uint64_t c : h.bins)
        EXPECT_EQ(c, 10u);
    // Over the data's own range the maximum lands in the last bin.
    Histogram auto10 = computeHistogram(t.view(), s, 10);
    EXPECT_EQ(auto10.lo, 0);
    EXPECT_EQ(auto10.hi, 99);
    EXPECT_EQ(std::accumulate(auto10.bins.begin(), auto10.bins.end(), uint64_t(0)), 100u);
    EXPECT_EQ(auto10.bins.back(), 10u);
}

TEST(Histogram, LogMagnitudeCountsZerosApart)
{
    Tensor t = Tensor::fromValues(Shape({ 6 }), std::vector<float> { 0, 1e-3f, -1e-3f, 1, -10, 100 });
    TensorStats s = computeStats(t.view());
    Histogram h = computeHistogram(t.view(), s, 8, HistogramScale::LogMagnitude);
    EXPECT_EQ(h.zeros, 1u);
    EXPECT_DOUBLE_EQ(h.hi, 2.0);
    EXPECT_DOUBLE_EQ(h.lo, -6.0);
    EXPECT_EQ(std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)), 5u);
    EXPECT_EQ(h.bins[3], 2u); // log10 = -3: bin of [-3, -2)
}

TEST(Histogram, ConstantTensorGetsAUnitRange)
{
    Tensor t = Tensor::full(Shape({ 10 }), 4.0f);
    TensorStats s = computeStats(t.view());
    Histogram h = computeHistogram(t.view(), s, 4);
    EXPECT_LT(h.lo, 4.0);
    EXPECT_GT(h.hi, 4.0);
    EXPECT_EQ(std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)), 10u);
}

// ---- The vectorised paths against a plain scalar reference ----

namespace {

// Runs `check` with each cap on the instruction set: the widest the CPU has, AVX2, and the
// portable path (on a CPU without them the caps change nothing).
template <class Fn> void forEachIsa(Fn check)
{
    for (const char* isa : { "", "avx2", "portable" }) {
        SCOPED_TRACE(std::string("OPSCOPE_STATS_MAX_ISA=") + isa);
        if (*isa)
            setenv("OPSCOPE_STATS_MAX_ISA", isa, 1);
        else
            unsetenv("OPSCOPE_STATS_MAX_ISA");
        check();
    }
    unsetenv("OPSCOPE_STATS_MAX_ISA");
}

// In double, the deviations in a second pass.
TensorStats referenceStats(std::span<const float> v)
{
    TensorStats s;
    s.count = static_cast<int64_t>(v.size());
    double sum = 0, sumSq = 0, mn = INFINITY, mx = -INFINITY;
    for (float x : v) {
        if (std::isnan(x)) {
            ++s.nan;
        } else if (std::isinf(x)) {
            ++(x > 0 ? s.posInf : s.negInf);
        } else {
            ++s.finite;
            s.zeros += x == 0;
            sum += x;
            sumSq += double(x) * x;
            mn = std::min<double>(mn, x);
            mx = std::max<double>(mx, x);
        }
    }
    if (s.finite == 0) {
        s.min = s.max = s.mean = s.std = s.l2 = NAN;
        return s;
    }
    s.min = mn;
    s.max = mx;
    s.mean = sum / s.finite;
    double dev = 0;
    for (float x : v)
        if (std::isfinite(x)) dev += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(dev / s.finite);
    s.l2 = std::sqrt(sumSq);
    return s;
}

// Value v goes to bin floor((v - lo) * bins / (hi - lo)), clamped; log10|v| in LogMagnitude.
Histogram referenceHistogram(std::span<const float> v, int bins, HistogramScale scale, double lo, double hi)
{
    Histogram h;
    h.scale = scale;
    h.lo = lo;
    h.hi = hi;
    h.bins.assign(static_cast<size_t>(bins), 0);
    for (float x : v) {
        if (std::isnan(x)) {
            ++h.nan;
            continue;
        }
        if (std::isinf(x)) {
            ++h.inf;
            continue;
        }
        double u = x;
        if (scale == HistogramScale::LogMagnitude) {
            if (x == 0) {
                ++h.zeros;
                continue;
            }
            u = std::log10(std::fabs(u));
        }
        const double b = std::floor((u - lo) * bins / (hi - lo));
        ++h.bins[static_cast<size_t>(std::clamp(b, 0.0, bins - 1.0))];
    }
    return h;
}

void expectStatsMatch(const TensorStats& s, const TensorStats& r)
{
    EXPECT_EQ(s.count, r.count);
    EXPECT_EQ(s.finite, r.finite);
    EXPECT_EQ(s.nan, r.nan);
    EXPECT_EQ(s.posInf, r.posInf);
    EXPECT_EQ(s.negInf, r.negInf);
    EXPECT_EQ(s.zeros, r.zeros);
    if (r.finite == 0) {
        EXPECT_TRUE(std::isnan(s.min) && std::isnan(s.max) && std::isnan(s.mean) && std::isnan(s.std));
        return;
    }
    EXPECT_EQ(s.min, r.min);
    EXPECT_EQ(s.max, r.max);
    EXPECT_NEAR(s.mean, r.mean, 1e-6 * r.std + 1e-12 * std::fabs(r.mean));
    EXPECT_NEAR(s.std, r.std, 1e-5 * r.std + 1e-12 * std::fabs(r.mean));
    EXPECT_NEAR(s.l2, r.l2, 1e-6 * r.l2);
}

// Statistics and a histogram of `v` (auto range unless lo < hi) against the references.
void expectMatchesReference(
    std::span<const float> v, int bins, HistogramScale scale = HistogramScale::Linear, double lo = 0, double hi = 0)
{
    const TensorView view(v.data(), Shape({ static_cast<int64_t>(v.size()) }));
    const TensorStats s = computeStats(view);
    expectStatsMatch(s, referenceStats(v));
    const Histogram h = computeHistogram(view, s, bins, scale, lo, hi);
    if (lo < hi) {
        EXPECT_EQ(h.lo, lo);
        EXPECT_EQ(h.hi, hi);
    } else if (scale == HistogramScale::Linear && s.finite > 0 && s.min < s.max) {
        EXPECT_EQ(h.lo, s.min);
        EXPECT_EQ(h.hi, s.max);
    }
    const Histogram r = referenceHistogram(v, bins, scale, h.lo, h.hi);
    EXPECT_EQ(h.bins, r.bins);
    EXPECT_EQ(h.nan, r.nan);
    EXPECT_EQ(h.inf, r.inf);
    EXPECT_EQ(h.zeros, r.zeros);
    const uint64_t total = std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)) + h.nan + h.inf + h.zeros;
    EXPECT_EQ(total, v.size());
}

std::vector<float> normalValues(int64_t n, uint64_t seed, float mean = 0, float stddev = 1)
{
    Generator gen(seed);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v)
        x = gen.normal(mean, stddev);
    return v;
}

constexpr int64_t kParallel = 1 << 20; // the size from which both cores are used

} // namespace

// Lengths around the 16-value groups, 128-value blocks, 2048-value statistics blocks, 16384-value
// chunks and the two-thread threshold.
TEST(TensorStats, MatchesAScalarReferenceAtAwkwardLengths)
{
    const int64_t lengths[] = { 0, 1, 2, 15, 16, 17, 127, 128, 129, 2047, 2048, 2049, 16383, 16384, 16385, 65539,
        kParallel - 1, kParallel, kParallel + 1, kParallel + 16384 + 5 };
    for (int64_t n : lengths) {
        SCOPED_TRACE(n);
        const std::vector<float> v = normalValues(n, static_cast<uint64_t>(n) + 11, 0.5f, 3.0f);
        forEachIsa([&] {
            expectMatchesReference(v, 64);
            expectMatchesReference(v, 7);
        });
    }
}

TEST(TensorStats, NanAndInfInSomeChunksOnly)
{
    const int64_t n = 3 * kParallel + 5;
    std::vector<float> v = normalValues(n, 21);
    for (int64_t i : { int64_t(0), int64_t(2047), int64_t(2048), int64_t(16383), int64_t(1'500'000), n - 1 })
        v[static_cast<size_t>(i)] = NAN;
    for (int64_t i : { 5000, 2'000'000 })
        v[static_cast<size_t>(i)] = INFINITY;
    for (int64_t i : { int64_t(16384), kParallel, n - 2 })
        v[static_cast<size_t>(i)] = -INFINITY;
    v[100] = 0.0f;
    v[200] = -0.0f;
    // A NaN with a payload in the low mantissa bits.
    uint32_t bits = 0x7FC0FFFFu;
    std::memcpy(&v[3'000'000], &bits, sizeof bits);
    forEachIsa([&] {
        expectMatchesReference(v, 64);
        expectMatchesReference(v, 100);
        expectMatchesReference(v, 64, HistogramScale::Linear, -1, 1);
        expectMatchesReference(v, 16, HistogramScale::LogMagnitude);
    });
    const TensorStats s = computeStats(TensorView(v.data(), Shape({ n })));
    EXPECT_EQ(s.nan, 7);
    EXPECT_EQ(s.posInf, 2);
    EXPECT_EQ(s.negInf, 3);
}

TEST(TensorStats, AllEqualValues)
{
    for (float value : { 2.5f, 0.0f, -1e-30f, 3e38f }) {
        SCOPED_TRACE(value);
        const std::vector<float> v(static_cast<size_t>(kParallel + 3), value);
        forEachIsa([&] { expectMatchesReference(v, 64); });
        const TensorStats s = computeStats(TensorView(v.data(), Shape({ kParallel + 3 })));
        EXPECT_EQ(s.min, value);
        EXPECT_EQ(s.max, value);
        EXPECT_EQ(s.mean, value);
        EXPECT_EQ(s.std, 0);
    }
}

// Values on the bin edges and their float neighbours, for edges that are floats and edges that
// are not, scattered through random values of the same range.
TEST(Histogram, BinEdgeValuesMatchTheReference)
{
    struct Case {
        float lo, hi;
        int bins;
    };
    for (const Case& c : { Case { -3.0f, 5.0f, 64 }, Case { -1.1f, 2.3f, 64 }, Case { -1.1f, 2.3f, 37 },
             Case { 0.1f, 0.7f, 100 }, Case { -7.25f, 1e-3f, 5 } }) {
        SCOPED_TRACE(c.bins);
        Generator gen(31);
        std::vector<float> v(static_cast<size_t>(kParallel + 777));
        for (float& x : v)
            x = gen.uniform(c.lo, c.hi);
        std::vector<float> special { c.lo, c.hi };
        for (int k = 0; k <= c.bins; ++k) {
            const double edge = c.lo + k * (double(c.hi) - c.lo) / c.bins;
            const float f = static_cast<float>(edge);
            for (float x : { f, std::nextafter(f, -INFINITY), std::nextafter(f, INFINITY) })
                if (x >= c.lo && x <= c.hi) special.push_back(x);
        }
        // Spread over both halves, several times each.
        for (size_t i = 0; i < special.size(); ++i)
            for (size_t r = 0; r < 8; ++r)
                v[(i * 8 + r) * 977 % v.size()] = special[i];
        v[0] = c.lo; // keep the range
        v[1] = c.hi;
        forEachIsa([&] {
            expectMatchesReference(v, c.bins);
            expectMatchesReference(v, c.bins, HistogramScale::Linear, c.lo, c.hi);
        });
    }
}

// A narrow range far from zero, a range given as doubles that are not floats, and a range that
// leaves most values outside: the bins still follow the reference exactly.
TEST(Histogram, NarrowAndOffsetRanges)
{
    std::vector<float> offset = normalValues(kParallel + 99, 41, 1000.0f, 0.005f);
    offset[12345] = NAN;
    offset[kParallel + 7] = -INFINITY;
    const std::vector<float> wide = normalValues(kParallel + 99, 43);
    forEachIsa([&] {
        expectMatchesReference(offset, 64);
        expectMatchesReference(offset, 64, HistogramScale::Linear, 1000.0001, 1000.0101);
        expectMatchesReference(offset, 300, HistogramScale::Linear, 999.99, 1000.01);
        expectMatchesReference(wide, 64, HistogramScale::Linear, 0.5, 0.75);
        expectMatchesReference(wide, 64, HistogramScale::Linear, -1e-30, 1e-30);
        expectMatchesReference(wide, 1);
    });
}

TEST(TensorStats, SumsDoNotOverflowInFloat)
{
    // Squares above 1e38 and sums above the float range, in blocks that are otherwise ordinary.
    std::vector<float> v = normalValues(kParallel + 5, 51);
    for (size_t i = 0; i < v.size(); i += 4099)
        v[i] = (i / 4099) % 2 ? 3e38f : 1e20f;
    forEachIsa([&] { expectMatchesReference(v, 64); });
}

// Table-driven bins of log10|x| (large tensors): zeros, denormals, powers of ten and edges
// closer together than the table's resolution, which fall back to log10 itself.
TEST(Histogram, LogMagnitudeMatchesTheReference)
{
    std::vector<float> v = normalValues(kParallel + 13, 61);
    for (size_t i = 0; i < v.size(); i += 97)
        v[i] = 0.0f;
    for (size_t i = 5; i < v.size(); i += 1001)
        v[i] *= 1e-12f;
    for (size_t i = 7; i < v.size(); i += 3001)
        v[i] *= 1e-40f; // denormal
    const float powers[] = { 1e-8f, 1e-3f, 0.01f, 0.1f, 1.0f, 10.0f, 100.0f };
    for (size_t i = 11; i < v.size(); i += 499)
        v[i] = powers[i % 7] * (i % 2 ? 1.0f : -1.0f);
    v[13] = INFINITY;
    v[17] = NAN;
    forEachIsa([&] {
        expectMatchesReference(v, 64, HistogramScale::LogMagnitude);
        expectMatchesReference(v, 10, HistogramScale::LogMagnitude, -3, 1);
        expectMatchesReference(v, 64, HistogramScale::LogMagnitude, -1e-3, 1e-3);
        expectMatchesReference(v, 1, HistogramScale::LogMagnitude);
    });
}

// Types other than float32: the same statistics in double; integer and bool tensors get bins of
// whole integers (a bool tensor's histogram is two bars).
TEST(TensorStats, BoolTensorHistogramIsTwoBars)
{
    const Tensor b = Tensor::fromValues(Shape({ 5 }), std::vector<float> { 1, 0, 1, 1, 0 }).astype(DType::Bool);
    const TensorStats s = computeStats(b.view());
    EXPECT_EQ(s.count, 5);
    EXPECT_EQ(s.zeros, 2);
    EXPECT_DOUBLE_EQ(s.mean, 0.6);
    const Histogram h = computeHistogram(b.view(), s);
    ASSERT_EQ(h.bins.size(), 2u);
    EXPECT_EQ(h.bins[0], 2u);
    EXPECT_EQ(h.bins[1], 3u);
    EXPECT_DOUBLE_EQ(h.lo, -0.5);
    EXPECT_DOUBLE_EQ(h.hi, 1.5);
}

TEST(TensorStats, IntegerTensorBinsAreWholeIntegers)
{
    std::vector<int64_t> v;
    for (int64_t i = -3; i <= 6; ++i)
        v.push_back(i);
    v.push_back(6);
    const Tensor t = Tensor::fromTyped<int64_t>(Shape({ 11 }), v);
    const TensorStats s = computeStats(t.view());
    EXPECT_DOUBLE_EQ(s.min, -3);
    EXPECT_DOUBLE_EQ(s.max, 6);
    const Histogram few = computeHistogram(t.view(), s, 64); // 10 values, 10 bars of width 1
    ASSERT_EQ(few.bins.size(), 10u);
    EXPECT_DOUBLE_EQ(few.lo, -3.5);
    EXPECT_EQ(few.bins.back(), 2u);
    const Histogram coarse = computeHistogram(t.view(), s, 4); // width 3: every bar spans 3 integers
    EXPECT_DOUBLE_EQ((coarse.hi - coarse.lo) / static_cast<double>(coarse.bins.size()), 3.0);
    uint64_t total = 0;
    for (uint64_t c : coarse.bins)
        total += c;
    EXPECT_EQ(total, 11u);
}

TEST(TensorStats, Float64AndFloat16CountNanAndInf)
{
    const Tensor f = Tensor::fromValues(Shape({ 4 }), std::vector<float> { 1.5f, NAN, -INFINITY, 2.5f });
    for (DType dt : { DType::Float64, DType::Float16 }) {
        SCOPED_TRACE(dtypeName(dt));
        const TensorStats s = computeStats(f.astype(dt).view());
        EXPECT_EQ(s.nan, 1);
        EXPECT_EQ(s.negInf, 1);
        EXPECT_DOUBLE_EQ(s.mean, 2.0);
        const Histogram h = computeHistogram(f.astype(dt).view(), s, 8);
        EXPECT_EQ(h.nan, 1u);
        EXPECT_EQ(h.inf, 1u);
    }
}
