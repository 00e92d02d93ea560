// The metrics of a pair of tensors (engine/debug/compare.h).

#include "debug/compare.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace opscope;

TEST(Compare, IdenticalTensorsHaveExactMetrics)
{
    const Tensor a = Tensor::fromValues(Shape({ 4 }), std::vector<float> { 1, -2, 3, 0 });
    const debug::TensorDiff d = debug::compareTensors("t", a.view(), a.view(), {});
    EXPECT_EQ(d.maxAbs, 0);
    EXPECT_EQ(d.relL2, 0);
    EXPECT_EQ(d.cosine, 1);
    EXPECT_TRUE(std::isinf(d.sqnrDb));
    EXPECT_FALSE(d.diverges);
    // One element off by 0.5: |d| 0.5, rel 0.5/2, relL2 0.5/sqrt(14), share 1/4; a NaN on B's side.
    const Tensor b = Tensor::fromValues(Shape({ 4 }), std::vector<float> { 1, -2.5f, 3, NAN });
    const debug::TensorDiff e = debug::compareTensors("t", a.view(), b.view(), {});
    EXPECT_DOUBLE_EQ(e.maxAbs, 0.5);
    EXPECT_DOUBLE_EQ(e.maxRel, 0.25);
    EXPECT_NEAR(e.relL2, 0.5 / std::sqrt(14.0), 1e-12);
    EXPECT_DOUBLE_EQ(e.beyond, 0.5);
    EXPECT_EQ(e.nanOnlyB, 1);
    EXPECT_TRUE(e.diverges);
    EXPECT_NEAR(e.sqnrDb, 10 * std::log10(14 / 0.25), 1e-9);
    // A pair that cannot be compared is the worst on every metric (SQNR: -inf).
    const Tensor c = Tensor::fromValues(Shape({ 2, 2 }), std::vector<float> { 1, 2, 3, 4 });
    const Tensor three = Tensor::fromValues(Shape({ 3 }), std::vector<float> { 1, 2, 3 });
    const debug::TensorDiff bad = debug::compareTensors("t", c.view(), three.view(), {});
    EXPECT_FALSE(bad.problem.empty());
    EXPECT_EQ(debug::metricOf(bad, debug::Metric::Sqnr), -INFINITY);
    EXPECT_EQ(debug::metricOf(bad, debug::Metric::RelL2), INFINITY);
}


namespace {
// The metrics by their definitions, element by element in double.
debug::TensorDiff byDefinition(const Tensor& a, const Tensor& b, const debug::CompareTolerance& tol)
{
    debug::TensorDiff d;
    double a2 = 0, b2 = 0, ab = 0, d2 = 0;
    int64_t beyond = 0;
    for (int64_t i = 0; i < a.size(); ++i) {
        const double x = a.data()[i], y = b.data()[i], diff = std::fabs(x - y);
        d.maxAbs = std::max(d.maxAbs, diff);
        if (x != 0) d.maxRel = std::max(d.maxRel, diff / std::fabs(x));
        beyond += diff > tol.atol + tol.rtol * std::fabs(x);
        a2 += x * x;
        b2 += y * y;
        ab += x * y;
        d2 += diff * diff;
    }
    d.relL2 = std::sqrt(d2 / a2);
    d.cosine = ab / std::sqrt(a2 * b2);
    d.beyond = static_cast<double>(beyond) / static_cast<double>(a.size());
    return d;
}
}

TEST(Compare, TheVectorisedPassAgreesWithTheDefinitionsOnEveryInstructionSet)
{
    Generator gen(11);
    for (const char* isa : { "", "avx2", "portable" }) {
        if (*isa)
            setenv("OPSCOPE_STATS_MAX_ISA", isa, 1);
        else
            unsetenv("OPSCOPE_STATS_MAX_ISA");
        for (int64_t n : { 1, 7, 8, 9, 63, 1000, 4099 }) {
            const Tensor a = Tensor::normal(Shape({ n }), 0, 1, &gen);
            Tensor b = a.copy();
            for (int64_t i = 0; i < n; i += 3)
                b.data()[i] += 1e-3f * static_cast<float>(i % 7);
            if (n > 2) b.data()[1] = 0, a.data()[2] = 0; // a zero in A has no relative difference
            const debug::CompareTolerance tol { 1e-3, 1e-5 };
            const debug::TensorDiff got = debug::compareTensors("t", a.view(), b.view(), tol);
            const debug::TensorDiff want = byDefinition(a, b, tol);
            EXPECT_DOUBLE_EQ(got.maxAbs, want.maxAbs) << isa << " n=" << n;
            EXPECT_DOUBLE_EQ(got.maxRel, want.maxRel) << isa << " n=" << n;
            EXPECT_NEAR(got.relL2, want.relL2, 1e-12 + 1e-9 * want.relL2) << isa << " n=" << n;
            EXPECT_NEAR(got.cosine, want.cosine, 1e-12) << isa << " n=" << n;
            EXPECT_DOUBLE_EQ(got.beyond, want.beyond) << isa << " n=" << n;
            // The same tensor: exact.
            const debug::TensorDiff same = debug::compareTensors("t", a.view(), a.view(), tol);
            EXPECT_EQ(same.maxAbs, 0);
            EXPECT_EQ(same.relL2, 0);
            EXPECT_EQ(same.cosine, 1) << isa << " n=" << n;
            EXPECT_TRUE(std::isinf(same.sqnrDb));
        }
        // A NaN deep in a long tensor takes the counting path.
        const Tensor a = Tensor::normal(Shape({ 5000 }), 0, 1, &gen);
        Tensor b = a.copy();
        b.data()[4321] = NAN;
        const debug::TensorDiff d = debug::compareTensors("t", a.view(), b.view(), {});
        EXPECT_EQ(d.nanOnlyB, 1) << isa;
        EXPECT_EQ(d.maxAbs, 0) << isa;
        EXPECT_TRUE(d.diverges);
    }
    unsetenv("OPSCOPE_STATS_MAX_ISA");
}
