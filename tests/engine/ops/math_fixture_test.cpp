// Reference kernels of the math operators against values computed by NumPy
// (tests/fixtures/make_math_fixtures.py).

#include "common/test_paths.h"
#include "io/npy.h"
#include "math_test_util.h"

#include <cmath>

using namespace opscope;

namespace {

struct FixtureCase {
    std::string name; // test name suffix
    std::string op;
    AttrMap attrs;
    std::vector<std::string> inputs; // fixture files under math/, without .npy
    std::string expected;
};

Tensor load(const std::string& name)
{
    return readNpy(test::fixture("math/" + name + ".npy"));
}

std::vector<FixtureCase> elemwiseCases()
{
    std::vector<FixtureCase> cases;
    for (const char* op : { "add", "sub", "mul", "div" })
        cases.push_back({ std::string("elemwise_") + op, std::string("elemwise_") + op, {},
            { "elemwise_x", "elemwise_y" }, std::string("elemwise_") + op + "_out" });
    for (const char* pattern : { "mid", "outer", "rank", "lhs", "same" }) {
        for (const char* op : { "add", "sub", "mul", "div", "maximum", "minimum" }) {
            const std::string prefix = std::string("bcast_") + pattern;
            cases.push_back({ prefix + "_" + op, std::string("broadcast_") + op, {}, { prefix + "_x", prefix + "_y" },
                prefix + "_" + op + "_out" });
        }
    }
    return cases;
}

std::vector<FixtureCase> scalarAndUnaryCases()
{
    struct S {
        const char* name;
        const char* op;
        AttrMap attrs;
    };
    const std::vector<S> scalar = {
        { "plus", "_plus_scalar", { { "scalar", "2.5" } } },
        { "plus_default", "_plus_scalar", {} },
        { "minus", "_minus_scalar", { { "scalar", "1.5" }, { "is_int", "False" } } },
        { "rminus", "_rminus_scalar", { { "scalar", "4" } } },
        { "mul", "_mul_scalar", { { "scalar", "-3.0" } } },
        { "div", "_div_scalar", { { "scalar", "0.7" } } },
        { "rdiv", "_rdiv_scalar", { { "scalar", "2.0" } } },
        { "power", "_power_scalar", { { "scalar", "1.7" } } },
        { "power_int", "_power_scalar", { { "scalar", "2" }, { "is_int", "True" } } },
    };
    std::vector<FixtureCase> cases;
    for (const auto& s : scalar)
        cases.push_back({ std::string("scalar_") + s.name, s.op, s.attrs, { "scalar_x" },
            std::string("scalar_") + s.name + "_out" });
    for (const char* op : { "exp", "log", "sqrt", "square", "abs", "negative" })
        cases.push_back({ std::string("unary_") + op, op, {}, { "unary_x" }, std::string("unary_") + op + "_out" });
    cases.push_back(
        { "unary_clip", "clip", { { "a_min", "-0.5" }, { "a_max", "0.8" } }, { "unary_x" }, "unary_clip_out" });
    cases.push_back({ "unary_clip_inverted", "clip", { { "a_min", "1" }, { "a_max", "-1" } }, { "unary_x" },
        "unary_clip_inverted_out" });
    return cases;
}

std::vector<FixtureCase> reduceCases()
{
    struct R {
        const char* name;
        const char* input;
        AttrMap attrs;
    };
    const std::vector<R> rs = {
        { "all", "reduce_x", {} },
        { "all_keep", "reduce_x", { { "axis", "None" }, { "keepdims", "True" } } },
        { "empty_axis", "reduce_x", { { "axis", "()" } } },
        { "axis1", "reduce_x", { { "axis", "1" } } },
        { "axes02", "reduce_x", { { "axis", "(0, 2)" }, { "keepdims", "False" } } },
        { "neg_keep", "reduce_x", { { "axis", "(-1,)" }, { "keepdims", "1" } } },
        { "every_axis", "reduce_x", { { "axis", "[0, 1, 2]" } } },
        { "exclude", "reduce_x", { { "axis", "1" }, { "exclude", "True" } } },
        { "exclude_keep", "reduce_x", { { "axis", "(0, 2)" }, { "exclude", "True" }, { "keepdims", "True" } } },
        { "x4_axes13", "reduce_x4", { { "axis", "(1, 3)" } } },
        { "nan_axis1", "reduce_nan_x", { { "axis", "1" } } },
    };
    std::vector<FixtureCase> cases;
    for (const auto& r : rs)
        for (const char* op : { "sum", "mean", "max" })
            cases.push_back({ std::string("reduce_") + r.name + "_" + op, op, r.attrs, { r.input },
                std::string("reduce_") + r.name + "_" + op + "_out" });
    return cases;
}

std::vector<FixtureCase> dotCases()
{
    struct D {
        const char* op;
        const char* name;
        bool ta, tb;
    };
    const std::vector<D> ds = {
        { "dot", "mm", false, false },
        { "dot", "ta", true, false },
        { "dot", "tb", false, true },
        { "dot", "tab", true, true },
        { "dot", "vv", false, false },
        { "dot", "vm", false, false },
        { "dot", "mv", false, false },
        { "dot", "nd", false, false },
        { "dot", "nd_ta", true, false },
        { "dot", "nd_tb", false, true },
        { "batch_dot", "plain", false, false },
        { "batch_dot", "ta", true, false },
        { "batch_dot", "tb", false, true },
        { "batch_dot", "tab", true, true },
        { "batch_dot", "4d", false, false },
    };
    std::vector<FixtureCase> cases;
    for (const auto& d : ds) {
        const std::string prefix = std::string(d.op) + "_" + d.name;
        cases.push_back({ prefix, d.op, { { "transpose_a", boolAttr(d.ta) }, { "transpose_b", boolAttr(d.tb) } },
            { prefix + "_x", prefix + "_y" }, prefix + "_out" });
    }
    return cases;
}

std::vector<FixtureCase> allCases()
{
    std::vector<FixtureCase> all;
    for (auto&& part : { elemwiseCases(), scalarAndUnaryCases(), reduceCases(), dotCases() })
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

class MathFixture : public ::testing::TestWithParam<FixtureCase> { };

TEST_P(MathFixture, ReferenceMatchesNumPy)
{
    const FixtureCase& c = GetParam();
    std::vector<Tensor> inputs;
    for (const auto& f : c.inputs)
        inputs.push_back(load(f));
    const Tensor expected = load(c.expected);
    const std::vector<Tensor> out = invokeOp(c.op, c.attrs, inputs, KernelKind::Reference);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(test::tensorsNear(out[0], expected, 1e-5f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Math, MathFixture, ::testing::ValuesIn(allCases()),
    [](const ::testing::TestParamInfo<FixtureCase>& info) { return info.param.name; });

// The fixtures above compare NaN with NaN; these pin where the debugger's NaN demo needs them.
TEST(MathSpecialValues, LogAndSqrtOfNegativeGiveNaNLogOfZeroGivesMinusInf)
{
    const Tensor x = Tensor::fromValues(Shape({ 4 }), std::vector<float> { -1.0f, 0.0f, 4.0f, -0.0f });
    const Tensor l = invokeOp("log", {}, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(l.at(0)));
    EXPECT_EQ(l.at(1), -INFINITY);
    EXPECT_FLOAT_EQ(l.at(2), std::log(4.0f));
    EXPECT_EQ(l.at(3), -INFINITY);
    const Tensor s = invokeOp("sqrt", {}, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(s.at(0)));
    EXPECT_EQ(s.at(2), 2.0f);
}

TEST(MathSpecialValues, ExpLogSqrtAtTheEdgesAreExact)
{
    const float tiny = 1e-40f; // subnormal
    const Tensor x
        = Tensor::fromValues(Shape({ 5 }), std::vector<float> { -INFINITY, INFINITY, -104.0f, tiny, 100.0f });
    const Tensor e = invokeOp("exp", {}, { x }, KernelKind::Reference)[0];
    EXPECT_EQ(e.at(0), 0.0f);
    EXPECT_EQ(e.at(1), INFINITY);
    EXPECT_EQ(e.at(2), 0.0f);
    EXPECT_EQ(e.at(4), INFINITY);
    const Tensor l = invokeOp("log", {}, { x }, KernelKind::Reference)[0];
    EXPECT_EQ(l.at(1), INFINITY);
    EXPECT_FLOAT_EQ(l.at(3), std::log(tiny));
    const Tensor s = invokeOp("sqrt", {}, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(s.at(0)));
    EXPECT_EQ(s.at(1), INFINITY);
}

TEST(MathSpecialValues, MaxPropagatesNaNAndBroadcastMaximumFollowsMXNet)
{
    const Tensor x = Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 1.0f, NAN, 3.0f, 4.0f, 5.0f, 6.0f });
    const Tensor m = invokeOp("max", { { "axis", "1" } }, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(m.at(0)));
    EXPECT_EQ(m.at(1), 6.0f);
    const Tensor all = invokeOp("max", {}, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(all.at(0)));
    // mshadow_op::maximum is a > b ? a : b: a NaN lhs yields rhs, a NaN rhs yields NaN.
    const Tensor a = Tensor::fromValues(Shape({ 2 }), std::vector<float> { NAN, 1.0f });
    const Tensor b = Tensor::fromValues(Shape({ 2 }), std::vector<float> { 2.0f, NAN });
    const Tensor mx = invokeOp("broadcast_maximum", {}, { a, b }, KernelKind::Reference)[0];
    EXPECT_EQ(mx.at(0), 2.0f);
    EXPECT_TRUE(std::isnan(mx.at(1)));
}

TEST(MathSpecialValues, ClipKeepsNaN)
{
    const Tensor x = Tensor::fromValues(Shape({ 3 }), std::vector<float> { NAN, -5.0f, 5.0f });
    const Tensor c = invokeOp("clip", { { "a_min", "-1" }, { "a_max", "1" } }, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(std::isnan(c.at(0)));
    EXPECT_EQ(c.at(1), -1.0f);
    EXPECT_EQ(c.at(2), 1.0f);
}

} // namespace
