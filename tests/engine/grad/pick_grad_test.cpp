// pick and reshape_like: forward values worked out by hand (MXNet's documented examples among
// them), shape inference and errors, and gradients against central differences.

#include "common/grad_check.h"
#include "common/op_test_util.h"
#include "core/error.h"

#include <gtest/gtest.h>
#include <vector>

using namespace opscope;
using opscope::test::checkGradient;
using opscope::test::errorOf;
using opscope::test::GradCheckOptions;

namespace {

Tensor values(const Shape& s, std::vector<float> v)
{
    return Tensor::fromValues(s, v);
}

Tensor rnd(const Shape& s, uint64_t seed)
{
    Generator g(seed);
    return Tensor::uniform(s, -1, 1, &g);
}

Tensor pick(const Tensor& x, const Tensor& index, const AttrMap& attrs)
{
    return invokeOp("pick", attrs, { x, index }, KernelKind::Reference).at(0);
}

// x = [[1, 2], [3, 4], [5, 6]], MXNet's example.
Tensor example()
{
    return values({ 3, 2 }, { 1, 2, 3, 4, 5, 6 });
}

} // namespace

TEST(Pick, PicksAlongAnAxis)
{
    const Tensor a0 = pick(example(), values({ 2 }, { 0, 1 }), { { "axis", "0" } });
    EXPECT_EQ(a0.shape(), Shape({ 2 }));
    EXPECT_EQ(a0.toVector(), (std::vector<float> { 1, 4 }));
    const Tensor a1 = pick(example(), values({ 3 }, { 0, 1, 0 }), { { "axis", "1" } });
    EXPECT_EQ(a1.shape(), Shape({ 3 }));
    EXPECT_EQ(a1.toVector(), (std::vector<float> { 1, 4, 5 }));
    // axis defaults to -1.
    EXPECT_EQ(pick(example(), values({ 3 }, { 1, 1, 0 }), {}).toVector(), (std::vector<float> { 2, 4, 5 }));
}

TEST(Pick, ClipAndWrapModes)
{
    // clip (default): 2 → 1, -1 → 0; values are truncated toward zero first (1.9 → 1, -0.5 → 0).
    EXPECT_EQ(pick(example(), values({ 3 }, { 2, -1, 1.9f }), { { "axis", "1" } }).toVector(),
        (std::vector<float> { 2, 3, 6 }));
    EXPECT_EQ(pick(example(), values({ 3 }, { -0.5f, 7, 0.9f }), { { "axis", "1" } }).toVector(),
        (std::vector<float> { 1, 4, 5 }));
    // wrap: 2 → 0, -1 → 1, -2 → 0 (MXNet's example), 5 → 1.
    EXPECT_EQ(pick(example(), values({ 3 }, { 2, -1, -2 }), { { "axis", "1" }, { "mode", "wrap" } }).toVector(),
        (std::vector<float> { 1, 4, 5 }));
    EXPECT_EQ(pick(example(), values({ 3 }, { 5, 0, 3 }), { { "axis", "1" }, { "mode", "wrap" } }).toVector(),
        (std::vector<float> { 2, 3, 6 }));
}

TEST(Pick, KeepdimsAndTheTwoIndexForms)
{
    // MXNet's example: index [[1], [0], [2]] with keepdims gives [[2], [3], [6]] (2 is clipped to 1).
    const Tensor y = pick(example(), values({ 3, 1 }, { 1, 0, 2 }), { { "axis", "1" }, { "keepdims", "True" } });
    EXPECT_EQ(y.shape(), Shape({ 3, 1 }));
    EXPECT_EQ(y.toVector(), (std::vector<float> { 2, 3, 6 }));
    // An index of the keepdims form without keepdims, and the other way round.
    const Tensor a = pick(example(), values({ 3, 1 }, { 1, 0, 1 }), { { "axis", "1" } });
    EXPECT_EQ(a.shape(), Shape({ 3 }));
    EXPECT_EQ(a.toVector(), (std::vector<float> { 2, 3, 6 }));
    const Tensor b = pick(example(), values({ 3 }, { 1, 0, 1 }), { { "axis", "1" }, { "keepdims", "True" } });
    EXPECT_EQ(b.shape(), Shape({ 3, 1 }));
    EXPECT_EQ(b.toVector(), (std::vector<float> { 2, 3, 6 }));
}

TEST(Pick, MiddleAxisOfA3DInput)
{
    // x[l, j, t] = 100 l + 10 j + t, shape (2, 3, 2); picking along axis 1 gives 100 l + 10 index[l, t] + t.
    std::vector<float> v;
    for (int l = 0; l < 2; ++l)
        for (int j = 0; j < 3; ++j)
            for (int t = 0; t < 2; ++t)
                v.push_back(static_cast<float>(100 * l + 10 * j + t));
    const Tensor x = values({ 2, 3, 2 }, v);
    const Tensor y = pick(x, values({ 2, 2 }, { 2, 0, 1, 1 }), { { "axis", "1" } });
    EXPECT_EQ(y.shape(), Shape({ 2, 2 }));
    EXPECT_EQ(y.toVector(), (std::vector<float> { 20, 1, 110, 111 }));
    const Tensor k = pick(x, values({ 2, 1, 2 }, { 2, 0, 1, 1 }), { { "axis", "-2" }, { "keepdims", "1" } });
    EXPECT_EQ(k.shape(), Shape({ 2, 1, 2 }));
    EXPECT_EQ(k.toVector(), (std::vector<float> { 20, 1, 110, 111 }));
    // A 1-D input picks one element: output (1,).
    const Tensor one = pick(values({ 4 }, { 5, 6, 7, 8 }), values({ 1 }, { 2 }), {});
    EXPECT_EQ(one.shape(), Shape({ 1 }));
    EXPECT_EQ(one.toVector(), (std::vector<float> { 7 }));
}

TEST(Pick, ShapeAndAttributeErrors)
{
    auto error = [](const Tensor& index, const AttrMap& attrs) {
        return errorOf<Error>([&] { pick(example(), index, attrs); });
    };
    const Tensor three = values({ 3 }, { 0, 1, 0 });
    EXPECT_NE(error(values({ 2 }, { 0, 1 }), { { "axis", "1" } }).find("index"), std::string::npos);
    EXPECT_NE(error(three, { { "axis", "2" } }).find("out of range"), std::string::npos);
    EXPECT_NE(error(three, { { "axis", "None" } }).find("axis"), std::string::npos);
    EXPECT_NE(error(three, { { "mode", "raise" } }).find("mode"), std::string::npos);
    // The index's shape is not inferred (either form would do), the output's is.
    std::vector<Shape> in { Shape({ 4, 5 }), Shape() };
    EXPECT_EQ(inferOpShapes("pick", { { "axis", "0" } }, in), (std::vector<Shape> { Shape({ 5 }) }));
    EXPECT_EQ(in[1].ndim(), 0);
}

TEST(PickGrad, ScattersIntoThePickedPositions)
{
    const Tensor dy = values({ 3 }, { 0.5f, -2, 3 });
    const Tensor idx = values({ 3 }, { 1, 7, -1 }); // clip: 1, 1, 0
    const std::vector<Tensor> outs = invokeOp("pick", { { "axis", "1" } }, { example(), idx });
    const auto g = invokeBackward("pick", { { "axis", "1" } }, { example(), idx }, outs, { dy });
    EXPECT_EQ(g[0].toVector(), (std::vector<float> { 0, 0.5f, 0, -2, 3, 0 }));
    EXPECT_EQ(g[1].toVector(), (std::vector<float> { 0, 0, 0 }));
    const auto wrapped
        = invokeBackward("pick", { { "axis", "0" }, { "mode", "wrap" } }, { example(), values({ 2 }, { -1, 4 }) },
            invokeOp("pick", { { "axis", "0" }, { "mode", "wrap" } }, { example(), values({ 2 }, { -1, 4 }) }),
            { values({ 2 }, { 1, 2 }) });
    EXPECT_EQ(wrapped[0].toVector(), (std::vector<float> { 0, 0, 0, 2, 1, 0 })); // x[2, 0] and x[1, 1]
}

TEST(PickGrad, CentralDifferences)
{
    // Index values sit at k + 0.5: ±eps never changes the picked position, so the index's numeric
    // gradient is 0, which is what the operator reports.
    const Tensor x = rnd({ 3, 4, 5 }, 1);
    std::vector<float> i1, i0, i2;
    for (int k = 0; k < 15; ++k)
        i1.push_back(static_cast<float>((k * 7) % 4) + 0.5f);
    for (int k = 0; k < 20; ++k)
        i0.push_back(static_cast<float>((k * 5) % 6) - 1.5f); // some out of range: clipped or wrapped
    for (int k = 0; k < 12; ++k)
        i2.push_back(static_cast<float>((k * 3) % 5) + 0.5f);
    EXPECT_TRUE(checkGradient("pick", { { "axis", "1" } }, { x, values({ 3, 5 }, i1) }));
    EXPECT_TRUE(checkGradient("pick", { { "axis", "-2" }, { "keepdims", "True" } }, { x, values({ 3, 1, 5 }, i1) }));
    EXPECT_TRUE(checkGradient("pick", { { "axis", "0" } }, { x, values({ 4, 5 }, i0) }));
    EXPECT_TRUE(checkGradient("pick", { { "axis", "0" }, { "mode", "wrap" } }, { x, values({ 4, 5 }, i0) }));
    GradCheckOptions dataOnly;
    dataOnly.wanted = { true, false };
    EXPECT_TRUE(checkGradient("pick", { { "axis", "2" } }, { x, values({ 3, 4 }, i2) }, dataOnly));
}

TEST(ReshapeLike, TakesTheShapeOfRhs)
{
    const Tensor x = values({ 6 }, { 1, 2, 3, 4, 5, 6 });
    const Tensor y = invokeOp("reshape_like", {}, { x, Tensor::zeros({ 3, 2 }) }).at(0);
    EXPECT_EQ(y.shape(), Shape({ 3, 2 }));
    EXPECT_EQ(y.toVector(), x.toVector());
    // MXNet's examples of the sliced form.
    std::vector<Shape> in { Shape({ 30, 7 }), Shape({ 15, 2, 4 }) };
    EXPECT_EQ(inferOpShapes("reshape_like",
                  { { "lhs_begin", "0" }, { "lhs_end", "1" }, { "rhs_begin", "0" }, { "rhs_end", "2" } }, in)[0],
        Shape({ 15, 2, 7 }));
    in = { Shape({ 3, 5 }), Shape({ 1, 15, 4 }) };
    EXPECT_EQ(inferOpShapes("reshape_like",
                  { { "lhs_begin", "0" }, { "lhs_end", "2" }, { "rhs_begin", "1" }, { "rhs_end", "2" } }, in)[0],
        Shape({ 15 }));
    in = { Shape({ 30, 12 }), Shape({ 4, 2, 2, 3 }) };
    EXPECT_EQ(inferOpShapes("reshape_like",
                  { { "lhs_begin", "-1" }, { "lhs_end", "None" }, { "rhs_begin", "1" }, { "rhs_end", "None" } }, in)[0],
        Shape({ 30, 2, 2, 3 }));
    EXPECT_NE(errorOf<Error>([&] {
        invokeOp("reshape_like", {}, { x, Tensor::zeros({ 4, 2 }) });
    }).find("different sizes"),
        std::string::npos);
}

TEST(ReshapeLikeGrad, CentralDifferences)
{
    EXPECT_TRUE(checkGradient("reshape_like", {}, { rnd({ 2, 6 }, 3), rnd({ 3, 4 }, 4) }));
    const Tensor x = rnd({ 12 }, 5), like = rnd({ 4, 3 }, 6);
    const auto outs = invokeOp("reshape_like", {}, { x, like });
    const auto g = invokeBackward("reshape_like", {}, { x, like }, outs, { rnd({ 4, 3 }, 7) });
    EXPECT_EQ(g[0].shape(), Shape({ 12 }));
    EXPECT_EQ(g[1].toVector(), std::vector<float>(12, 0.0f));
}
