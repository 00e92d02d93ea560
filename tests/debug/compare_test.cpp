// The metrics of a pair of tensors (engine/debug/compare.h).

#include "debug/compare.h"

#include <gtest/gtest.h>

#include <cmath>

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
}

