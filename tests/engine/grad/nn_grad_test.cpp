// Gradients of the neural-network operators against central differences.

#include "common/grad_check.h"
#include "core/error.h"

#include <gtest/gtest.h>

using namespace opscope;
using opscope::test::checkGradient;
using opscope::test::GradCheckOptions;

namespace {
Tensor rnd(const Shape& s, uint64_t seed, float lo = -1, float hi = 1)
{
    Generator g(seed);
    return Tensor::uniform(s, lo, hi, &g);
}
} // namespace

TEST(Gradient, FullyConnected)
{
    EXPECT_TRUE(checkGradient(
        "FullyConnected", { { "num_hidden", "5" } }, { rnd({ 3, 4 }, 1), rnd({ 5, 4 }, 2), rnd({ 5 }, 3) }));
    // flatten folds the trailing axes; without flatten the last axis is transformed.
    EXPECT_TRUE(checkGradient(
        "FullyConnected", { { "num_hidden", "3" }, { "no_bias", "True" } }, { rnd({ 2, 2, 3 }, 4), rnd({ 3, 6 }, 5) }));
    EXPECT_TRUE(checkGradient("FullyConnected", { { "num_hidden", "3" }, { "flatten", "False" } },
        { rnd({ 2, 2, 4 }, 6), rnd({ 3, 4 }, 7), rnd({ 3 }, 8) }));
    // Only the weight's gradient asked for (data is an input, bias frozen).
    GradCheckOptions o;
    o.wanted = { false, true, false };
    EXPECT_TRUE(checkGradient(
        "FullyConnected", { { "num_hidden", "2" } }, { rnd({ 3, 4 }, 9), rnd({ 2, 4 }, 10), rnd({ 2 }, 11) }, o));
}

TEST(Gradient, AnOperatorWithoutAGradientSaysSo)
{
    const OpDef& def = OpRegistry::instance().get("FullyConnected");
    EXPECT_TRUE(static_cast<bool>(def.backward));
    // A wrong output-gradient shape names the operator and both shapes.
    try {
        invokeBackward("FullyConnected", { { "num_hidden", "2" } },
            { rnd({ 3, 4 }, 1), rnd({ 2, 4 }, 2), rnd({ 2 }, 3) }, { Tensor({ 3, 2 }) }, { Tensor({ 2, 3 }) });
        FAIL();
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("FullyConnected"), std::string::npos);
    }
}
