// The synthetic training sets: shapes, ranges, labels, determinism, and that their classes are
// told apart by trivial means (so a model trained on them has something to learn).

#include "models/datasets.h"
#include "models/sample_models.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

using namespace opscope;
using samples::Dataset;

namespace {

bool sameValues(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && std::equal(a.values().begin(), a.values().end(), b.values().begin());
}

// Per-class mean of 2-D points.
std::vector<std::array<double, 2>> classMeans(const Dataset& d, int classes)
{
    std::vector<std::array<double, 2>> sum(static_cast<size_t>(classes), { 0.0, 0.0 });
    std::vector<int> count(static_cast<size_t>(classes), 0);
    for (int64_t i = 0; i < d.label.size(); ++i) {
        const auto c = static_cast<size_t>(d.label.at(i));
        sum[c][0] += d.data.at(2 * i);
        sum[c][1] += d.data.at(2 * i + 1);
        ++count[c];
    }
    for (size_t c = 0; c < sum.size(); ++c)
        for (double& v : sum[c])
            v /= std::max(count[c], 1);
    return sum;
}

double distance(const std::array<double, 2>& a, const std::array<double, 2>& b)
{
    return std::hypot(a[0] - b[0], a[1] - b[1]);
}

constexpr int kSide = 28;
constexpr int kPixels = kSide * kSide;

} // namespace

TEST(Spirals, ShapeLabelsAndRange)
{
    for (int classes : { 2, 3, 5 }) {
        const Dataset d = samples::spirals(300, classes, 0.1, 4);
        ASSERT_EQ(d.data.shape(), Shape({ 300, 2 }));
        ASSERT_EQ(d.label.shape(), Shape({ 300 }));
        for (int64_t i = 0; i < 300; ++i) {
            EXPECT_EQ(d.label.at(i), static_cast<float>(i % classes));
            EXPECT_LE(std::hypot(d.data.at(2 * i), d.data.at(2 * i + 1)), 1.0f + 1e-6f);
        }
    }
}

TEST(Spirals, SameParameterisationAsTheMlpSampleInput)
{
    for (uint64_t seed : { 0u, 1u, 7u })
        EXPECT_TRUE(sameValues(samples::spirals(40, 3, 0.15, seed).data, samples::spiralPoints(40, seed)));
}

TEST(Spirals, DeterministicFromSeed)
{
    EXPECT_TRUE(sameValues(samples::spirals(200, 3, 0.2, 5).data, samples::spirals(200, 3, 0.2, 5).data));
    EXPECT_FALSE(sameValues(samples::spirals(200, 3, 0.2, 5).data, samples::spirals(200, 3, 0.2, 6).data));
}

TEST(Spirals, ClassMeansDiffer)
{
    for (int classes : { 2, 3 }) {
        const auto means = classMeans(samples::spirals(3000, classes, 0.15, 2), classes);
        for (int a = 0; a < classes; ++a)
            for (int b = a + 1; b < classes; ++b)
                EXPECT_GT(distance(means[static_cast<size_t>(a)], means[static_cast<size_t>(b)]), 0.1)
                    << classes << " classes, " << a << " vs " << b;
    }
}

TEST(Moons, ShapeBalanceAndShuffle)
{
    const Dataset d = samples::moons(501, 0.1, 3);
    ASSERT_EQ(d.data.shape(), Shape({ 501, 2 }));
    ASSERT_EQ(d.label.shape(), Shape({ 501 }));
    int ones = 0;
    for (float l : d.label.values()) {
        EXPECT_TRUE(l == 0.0f || l == 1.0f);
        ones += l == 1.0f;
    }
    EXPECT_EQ(ones, 251); // make_moons: the inner moon takes the odd one
    EXPECT_FALSE(std::is_sorted(d.label.values().begin(), d.label.values().end()));
}

TEST(Moons, WithoutNoiseThePointsLieOnTheTwoHalfCircles)
{
    const Dataset d = samples::moons(200, 0.0, 1);
    for (int64_t i = 0; i < 200; ++i) {
        const double x = d.data.at(2 * i), y = d.data.at(2 * i + 1);
        if (d.label.at(i) == 0.0f) {
            EXPECT_NEAR(std::hypot(x, y), 1.0, 1e-5);
            EXPECT_GE(y, -1e-6);
        } else {
            EXPECT_NEAR(std::hypot(x - 1.0, y - 0.5), 1.0, 1e-5);
            EXPECT_LE(y, 0.5 + 1e-6);
        }
    }
}

TEST(Moons, DeterministicFromSeedAndClassMeansDiffer)
{
    const Dataset a = samples::moons(1000, 0.2, 9), b = samples::moons(1000, 0.2, 9);
    EXPECT_TRUE(sameValues(a.data, b.data));
    EXPECT_TRUE(sameValues(a.label, b.label));
    EXPECT_FALSE(sameValues(a.data, samples::moons(1000, 0.2, 10).data));
    const auto means = classMeans(a, 2);
    // Outer moon around (0, 0.64), inner around (1, -0.14).
    EXPECT_GT(distance(means[0], means[1]), 0.8);
}

TEST(Digits, ShapeRangeAndBalancedLabels)
{
    const Dataset d = samples::digits(1003, 1);
    ASSERT_EQ(d.data.shape(), Shape({ 1003, 1, kSide, kSide }));
    ASSERT_EQ(d.label.shape(), Shape({ 1003 }));
    for (float v : d.data.values()) {
        ASSERT_GE(v, 0.0f);
        ASSERT_LE(v, 1.0f);
    }
    std::array<int, 10> count {};
    for (float l : d.label.values()) {
        ASSERT_EQ(l, std::floor(l));
        ASSERT_GE(l, 0.0f);
        ASSERT_LE(l, 9.0f);
        ++count[static_cast<size_t>(l)];
    }
    for (int c : count) {
        EXPECT_GE(c, 100);
        EXPECT_LE(c, 101);
    }
    EXPECT_FALSE(std::is_sorted(d.label.values().begin(), d.label.values().end()));
}

TEST(Digits, DeterministicFromSeed)
{
    const Dataset a = samples::digits(200, 42), b = samples::digits(200, 42), c = samples::digits(200, 43);
    EXPECT_TRUE(sameValues(a.data, b.data));
    EXPECT_TRUE(sameValues(a.label, b.label));
    EXPECT_FALSE(sameValues(a.data, c.data));
}

// The drawing pad's preprocessing: ink fitted into 20×20 (long side 20), centre of mass in the middle.
TEST(Digits, InkFitsTwentyPixelsAndIsCentredByMass)
{
    const Dataset d = samples::digits(1000, 7);
    for (int64_t i = 0; i < 1000; ++i) {
        const float* img = d.data.data() + i * kPixels;
        double mass = 0, mx = 0, my = 0;
        int left = kSide, top = kSide, right = -1, bottom = -1;
        for (int y = 0; y < kSide; ++y) {
            for (int x = 0; x < kSide; ++x) {
                const float v = img[y * kSide + x];
                mass += v;
                mx += v * (x + 0.5);
                my += v * (y + 0.5);
                if (v <= 32.0f / 255.0f) continue;
                left = std::min(left, x);
                right = std::max(right, x);
                top = std::min(top, y);
                bottom = std::max(bottom, y);
            }
        }
        ASSERT_GT(mass, 5.0) << "digit " << i << " has no ink";
        const int w = right - left + 1, h = bottom - top + 1;
        EXPECT_LE(w, 20) << "digit " << i;
        EXPECT_LE(h, 20) << "digit " << i;
        EXPECT_GE(std::max(w, h), 18) << "digit " << i;
        EXPECT_NEAR(mx / mass, 14.0, 1.0) << "digit " << i << " (label " << d.label.at(i) << ")";
        EXPECT_NEAR(my / mass, 14.0, 1.0) << "digit " << i << " (label " << d.label.at(i) << ")";
    }
}

TEST(Digits, StyleControlsStrokeWidth)
{
    samples::DigitStyle thin, thick;
    thin.minStroke = thin.maxStroke = 1.5;
    thick.minStroke = thick.maxStroke = 4.0;
    thin.blurProbability = thick.blurProbability = 0.0;
    const Dataset a = samples::digits(200, 3, thin), b = samples::digits(200, 3, thick);
    EXPECT_TRUE(sameValues(a.label, b.label));
    double inkA = 0, inkB = 0;
    for (float v : a.data.values())
        inkA += v;
    for (float v : b.data.values())
        inkB += v;
    EXPECT_GT(inkB, 1.5 * inkA);
}

// A nearest-class-mean classifier trained on 2,000 digits, tested on 500 others: far above the
// 10 % of chance if the classes are drawn distinctly.
TEST(Digits, NearestClassMeanBeatsChanceClearly)
{
    const Dataset train = samples::digits(2000, 11), test = samples::digits(500, 12);
    std::vector<std::vector<double>> mean(10, std::vector<double>(kPixels, 0.0));
    std::array<int, 10> count {};
    for (int64_t i = 0; i < 2000; ++i) {
        const auto c = static_cast<size_t>(train.label.at(i));
        ++count[c];
        for (int p = 0; p < kPixels; ++p)
            mean[c][static_cast<size_t>(p)] += train.data.at(i * kPixels + p);
    }
    for (size_t c = 0; c < 10; ++c)
        for (double& v : mean[c])
            v /= count[c];
    int correct = 0;
    for (int64_t i = 0; i < 500; ++i) {
        size_t best = 0;
        double bestDist = 1e300;
        for (size_t c = 0; c < 10; ++c) {
            double dist = 0;
            for (int p = 0; p < kPixels; ++p) {
                const double e = test.data.at(i * kPixels + p) - mean[c][static_cast<size_t>(p)];
                dist += e * e;
            }
            if (dist < bestDist) {
                bestDist = dist;
                best = c;
            }
        }
        correct += static_cast<float>(best) == test.label.at(i);
    }
    const double accuracy = correct / 500.0;
    RecordProperty("accuracy", std::to_string(accuracy));
    EXPECT_GT(accuracy, 0.6);
}
