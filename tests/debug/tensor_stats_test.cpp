#include "debug/tensor_stats.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

using namespace opscope;
using namespace opscope::debug;

TEST(TensorStats, KnownValuesWithNanAndInf)
{
    Tensor t = Tensor::fromValues(Shape({ 8 }),
        std::vector<float> { 1, -2, 0, 3, NAN, INFINITY, -INFINITY, 0 });
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
        if (!std::isfinite(v))
            continue;
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
