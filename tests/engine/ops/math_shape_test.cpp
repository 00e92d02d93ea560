// Shape inference, shape and attribute errors, slot names and aliases of the math operators.

#include "core/error.h"
#include "math_test_util.h"

using namespace opscope;
using mathtest::contains;
using mathtest::errorOf;

namespace {

std::vector<Shape> infer(const std::string& op, const AttrMap& attrs, std::vector<Shape> in)
{
    return inferOpShapes(op, attrs, in);
}

Shape inferOne(const std::string& op, const AttrMap& attrs, std::vector<Shape> in)
{
    return infer(op, attrs, std::move(in)).at(0);
}

// --- shapes ---------------------------------------------------------------------------------

TEST(MathShapes, ElemwiseSharesOneShapeAndCompletesUnknownDims)
{
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" }) {
        SCOPED_TRACE(op);
        EXPECT_EQ(inferOne(op, {}, { Shape({ 2, 3 }), Shape({ 2, 3 }) }), Shape({ 2, 3 }));
        std::vector<Shape> in = { Shape({ 2, 0 }), Shape({ 0, 3 }) };
        EXPECT_EQ(inferOpShapes(op, {}, in).at(0), Shape({ 2, 3 }));
        EXPECT_EQ(in[0], Shape({ 2, 3 }));
        EXPECT_EQ(in[1], Shape({ 2, 3 }));
        std::vector<Shape> unknown = { Shape(), Shape({ 4, 5 }) };
        EXPECT_EQ(inferOpShapes(op, {}, unknown).at(0), Shape({ 4, 5 }));
        EXPECT_EQ(unknown[0], Shape({ 4, 5 }));
    }
}

TEST(MathShapes, ElemwiseMismatchNamesBothShapes)
{
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" }) {
        SCOPED_TRACE(op);
        const std::string msg = errorOf<ShapeError>([&] { infer(op, {}, { Shape({ 2, 3 }), Shape({ 3, 2 }) }); });
        EXPECT_TRUE(contains(msg, "(2, 3)")) << msg;
        EXPECT_TRUE(contains(msg, "(3, 2)")) << msg;
        EXPECT_TRUE(contains(msg, op)) << msg;
        const Tensor a = Tensor::ones(Shape({ 2, 3 })), b = Tensor::ones(Shape({ 6 }));
        EXPECT_THROW(invokeOp(op, {}, { a, b }, KernelKind::Reference), ShapeError);
    }
}

TEST(MathShapes, BroadcastFollowsNumPyAlignment)
{
    EXPECT_EQ(inferOne("broadcast_add", {}, { Shape({ 2, 1, 4 }), Shape({ 3, 1 }) }), Shape({ 2, 3, 4 }));
    EXPECT_EQ(inferOne("broadcast_sub", {}, { Shape({ 4 }), Shape({ 2, 3, 4 }) }), Shape({ 2, 3, 4 }));
    EXPECT_EQ(inferOne("broadcast_mul", {}, { Shape({ 1 }), Shape({ 5, 6 }) }), Shape({ 5, 6 }));
    EXPECT_EQ(inferOne("broadcast_div", {}, { Shape({ 5, 6 }), Shape({ 5, 6 }) }), Shape({ 5, 6 }));
    EXPECT_EQ(inferOne("broadcast_maximum", {}, { Shape({ 1, 1 }), Shape({ 1, 1 }) }), Shape({ 1, 1 }));
    EXPECT_EQ(inferOne("broadcast_minimum", {}, { Shape({ 3, 0 }), Shape({ 3, 4 }) }), Shape({ 3, 4 }));
    // As MXNet: no inference until both ranks are known.
    EXPECT_EQ(inferOne("broadcast_add", {}, { Shape(), Shape({ 3, 4 }) }), Shape());
}

TEST(MathShapes, BroadcastIncompatibleNamesBothShapes)
{
    for (const char* op : { "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
             "broadcast_minimum" }) {
        SCOPED_TRACE(op);
        const std::string msg = errorOf<ShapeError>([&] { infer(op, {}, { Shape({ 2, 3 }), Shape({ 4, 3 }) }); });
        EXPECT_TRUE(contains(msg, "(2, 3)")) << msg;
        EXPECT_TRUE(contains(msg, "(4, 3)")) << msg;
    }
}

TEST(MathShapes, ScalarAndUnaryKeepTheShape)
{
    for (const char* op : { "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
             "_rdiv_scalar", "_power_scalar", "exp", "log", "sqrt", "square", "abs", "negative" }) {
        SCOPED_TRACE(op);
        EXPECT_EQ(inferOne(op, {}, { Shape({ 2, 3, 4 }) }), Shape({ 2, 3, 4 }));
        EXPECT_EQ(inferOne(op, {}, { Shape() }), Shape());
    }
    EXPECT_EQ(inferOne("clip", { { "a_min", "0" }, { "a_max", "1" } }, { Shape({ 7 }) }), Shape({ 7 }));
}

TEST(MathShapes, ReductionShapesFollowMXNet)
{
    const Shape x({ 2, 3, 4 });
    struct C {
        AttrMap attrs;
        Shape expected;
    };
    const std::vector<C> cs = {
        { {}, Shape({ 1 }) },
        { { { "axis", "None" } }, Shape({ 1 }) },
        { { { "keepdims", "True" } }, Shape({ 1, 1, 1 }) },
        { { { "axis", "()" } }, Shape({ 1 }) },
        { { { "axis", "()" }, { "exclude", "True" } }, Shape({ 1 }) }, // MXNet: an empty axis reduces everything
        { { { "axis", "1" } }, Shape({ 2, 4 }) },
        { { { "axis", "(1,)" }, { "keepdims", "True" } }, Shape({ 2, 1, 4 }) },
        { { { "axis", "(-1, 0)" } }, Shape({ 3 }) },
        { { { "axis", "(0, 1, 2)" } }, Shape({ 1 }) },
        { { { "axis", "(0, 1, 2)" }, { "keepdims", "True" } }, Shape({ 1, 1, 1 }) },
        { { { "axis", "1" }, { "exclude", "True" } }, Shape({ 3 }) },
        { { { "axis", "(2, 0)" }, { "exclude", "True" } }, Shape({ 2, 4 }) },
        { { { "axis", "1" }, { "exclude", "True" }, { "keepdims", "True" } }, Shape({ 1, 3, 1 }) },
        { { { "axis", "(0, 1, 2)" }, { "exclude", "True" } }, Shape({ 2, 3, 4 }) },
    };
    for (const char* op : { "sum", "mean", "max" }) {
        for (const auto& c : cs) {
            SCOPED_TRACE(std::string(op) + " " + (c.attrs.count("axis") ? c.attrs.at("axis") : "-"));
            EXPECT_EQ(inferOne(op, c.attrs, { x }), c.expected);
        }
    }
}

TEST(MathShapes, ReductionAxisErrorsNameAxisAndShape)
{
    for (const char* op : { "sum", "mean", "max" }) {
        SCOPED_TRACE(op);
        std::string msg = errorOf<ShapeError>([&] { infer(op, { { "axis", "3" } }, { Shape({ 2, 3, 4 }) }); });
        EXPECT_TRUE(contains(msg, "axis")) << msg;
        EXPECT_TRUE(contains(msg, "(2, 3, 4)")) << msg;
        msg = errorOf<ShapeError>([&] { infer(op, { { "axis", "-4" } }, { Shape({ 2, 3, 4 }) }); });
        EXPECT_TRUE(contains(msg, "(2, 3, 4)")) << msg;
        msg = errorOf<ShapeError>([&] { infer(op, { { "axis", "(1, -2)" } }, { Shape({ 2, 3, 4 }) }); });
        EXPECT_TRUE(contains(msg, "duplicates")) << msg;
    }
}

TEST(MathShapes, DotFollowsMXNetFlattening)
{
    auto dot = [](Shape l, Shape r, bool ta = false, bool tb = false) {
        return inferOne("dot", { { "transpose_a", boolAttr(ta) }, { "transpose_b", boolAttr(tb) } }, { l, r });
    };
    EXPECT_EQ(dot(Shape({ 3, 4 }), Shape({ 4, 5 })), Shape({ 3, 5 }));
    EXPECT_EQ(dot(Shape({ 4, 3 }), Shape({ 4, 5 }), true), Shape({ 3, 5 }));
    EXPECT_EQ(dot(Shape({ 3, 4 }), Shape({ 5, 4 }), false, true), Shape({ 3, 5 }));
    EXPECT_EQ(dot(Shape({ 6 }), Shape({ 6 })), Shape({ 1 }));
    EXPECT_EQ(dot(Shape({ 4 }), Shape({ 4, 5 })), Shape({ 5 }));
    EXPECT_EQ(dot(Shape({ 3, 4 }), Shape({ 4 })), Shape({ 3 }));
    EXPECT_EQ(dot(Shape({ 2, 3, 4 }), Shape({ 4, 5, 6 })), Shape({ 2, 3, 5, 6 }));
    EXPECT_EQ(dot(Shape({ 4, 2, 3 }), Shape({ 4, 5 }), true), Shape({ 2, 3, 5 }));
    EXPECT_EQ(dot(Shape({ 2, 3, 4 }), Shape({ 5, 6, 4 }), false, true), Shape({ 2, 3, 5, 6 }));
    EXPECT_EQ(dot(Shape(), Shape({ 4, 5 })), Shape());
}

TEST(MathShapes, DotErrorsNameBothShapes)
{
    std::string msg = errorOf<ShapeError>([] { infer("dot", {}, { Shape({ 3, 4 }), Shape({ 5, 6 }) }); });
    EXPECT_TRUE(contains(msg, "(3, 4)")) << msg;
    EXPECT_TRUE(contains(msg, "(5, 6)")) << msg;
    msg = errorOf<ShapeError>([] {
        infer("dot", { { "transpose_b", "True" } }, { Shape({ 3, 4 }), Shape({ 4, 5 }) });
    });
    EXPECT_TRUE(contains(msg, "(3, 4)") && contains(msg, "(4, 5)")) << msg;
    msg = errorOf<ShapeError>([] { infer("dot", { { "transpose_a", "True" } }, { Shape({ 3 }), Shape({ 3 }) }); });
    EXPECT_TRUE(contains(msg, "transpose")) << msg;
    msg = errorOf<ShapeError>([] { infer("dot", {}, { Shape({ 3 }), Shape({ 4 }) }); });
    EXPECT_TRUE(contains(msg, "(3,)") && contains(msg, "(4,)")) << msg;
}

TEST(MathShapes, BatchDotShapesAndErrors)
{
    auto bd = [](Shape l, Shape r, bool ta = false, bool tb = false) {
        return inferOne("batch_dot", { { "transpose_a", boolAttr(ta) }, { "transpose_b", boolAttr(tb) } }, { l, r });
    };
    EXPECT_EQ(bd(Shape({ 2, 3, 4 }), Shape({ 2, 4, 5 })), Shape({ 2, 3, 5 }));
    EXPECT_EQ(bd(Shape({ 2, 4, 3 }), Shape({ 2, 4, 5 }), true), Shape({ 2, 3, 5 }));
    EXPECT_EQ(bd(Shape({ 2, 3, 4 }), Shape({ 2, 5, 4 }), false, true), Shape({ 2, 3, 5 }));
    EXPECT_EQ(bd(Shape({ 2, 4, 3 }), Shape({ 2, 5, 4 }), true, true), Shape({ 2, 3, 5 }));
    EXPECT_EQ(bd(Shape({ 7, 2, 3, 4 }), Shape({ 7, 2, 4, 5 })), Shape({ 7, 2, 3, 5 }));

    const std::vector<std::pair<Shape, Shape>> bad = {
        { Shape({ 2, 3, 4 }), Shape({ 2, 5, 6 }) }, // contracted
        { Shape({ 2, 3, 4 }), Shape({ 3, 4, 5 }) }, // batch
        { Shape({ 3, 4 }), Shape({ 4, 5 }) }, // rank < 3
        { Shape({ 2, 3, 4 }), Shape({ 1, 2, 4, 5 }) }, // ranks differ
    };
    for (const auto& [l, r] : bad) {
        const std::string msg = errorOf<ShapeError>([&] { infer("batch_dot", {}, { l, r }); });
        EXPECT_TRUE(contains(msg, l.str()) && contains(msg, r.str())) << msg;
    }
}

// --- attributes -----------------------------------------------------------------------------

TEST(MathAttributes, BadValuesNameTheAttribute)
{
    struct C {
        const char* op;
        AttrMap attrs;
        std::vector<Shape> in;
        const char* attr;
    };
    const Shape s({ 2, 3 });
    const std::vector<C> cs = {
        { "_plus_scalar", { { "scalar", "abc" } }, { s }, "scalar" },
        { "_power_scalar", { { "scalar", "2" }, { "is_int", "maybe" } }, { s }, "is_int" },
        { "clip", { { "a_max", "1" } }, { s }, "a_min" },
        { "clip", { { "a_min", "0" } }, { s }, "a_max" },
        { "clip", { { "a_min", "x" }, { "a_max", "1" } }, { s }, "a_min" },
        { "sum", { { "axis", "(0, x)" } }, { s }, "axis" },
        { "mean", { { "keepdims", "maybe" } }, { s }, "keepdims" },
        { "max", { { "exclude", "2.5" } }, { s }, "exclude" },
        { "dot", { { "transpose_a", "abc" } }, { s, s }, "transpose_a" },
        { "dot", { { "forward_stype", "dense" } }, { s, s }, "forward_stype" },
        { "batch_dot", { { "transpose_b", "yes please" } }, { s, s }, "transpose_b" },
    };
    for (const auto& c : cs) {
        SCOPED_TRACE(std::string(c.op) + " " + c.attr);
        const std::string msg = errorOf<AttributeError>([&] { infer(c.op, c.attrs, c.in); });
        EXPECT_TRUE(contains(msg, std::string("'") + c.attr + "'")) << msg;
        EXPECT_TRUE(contains(msg, c.op)) << msg;
    }
}

TEST(MathAttributes, AcceptedSpellings)
{
    const Tensor x = Tensor::fromValues(Shape({ 2, 2 }), std::vector<float> { 1, 2, 3, 4 });
    EXPECT_EQ(invokeOp("_mul_scalar", { { "scalar", "1e1" }, { "is_int", "0" } }, { x })[0].at(3), 40.0f);
    EXPECT_EQ(invokeOp("sum", { { "axis", "[1]" }, { "keepdims", "true" } }, { x })[0].shape(), Shape({ 2, 1 }));
    EXPECT_EQ(invokeOp("dot", { { "forward_stype", "default" }, { "transpose_b", "1" } }, { x, x })[0].at(0), 5.0f);
    EXPECT_EQ(invokeOp("clip", { { "a_min", "-inf" }, { "a_max", "2.5" } }, { x })[0].at(3), 2.5f);
}

// --- slot names and aliases -----------------------------------------------------------------

TEST(MathSlots, MatchMXNetRegistrations)
{
    const auto& reg = OpRegistry::instance();
    auto slots = [&](const std::string& op, const AttrMap& attrs = {}) {
        const OpDef& def = reg.get(op);
        auto p = def.parse(attrs);
        return std::make_pair(def.inputSlotNames(*p), def.outputSlotNames(*p));
    };
    using V = std::vector<std::string>;
    EXPECT_EQ(slots("elemwise_add"), std::make_pair(V { "lhs", "rhs" }, V { "output" }));
    for (const char* op : { "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add", "broadcast_sub",
             "broadcast_mul", "broadcast_div", "broadcast_maximum", "broadcast_minimum", "dot", "batch_dot" }) {
        SCOPED_TRACE(op);
        EXPECT_EQ(slots(op), std::make_pair(V { "lhs", "rhs" }, V { "0" }));
    }
    // No FListInputNames in MXNet: the op hook reports input0.
    for (const char* op :
        { "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
            "_power_scalar", "exp", "log", "sqrt", "square", "abs", "negative", "sum", "mean", "max" }) {
        SCOPED_TRACE(op);
        EXPECT_EQ(slots(op), std::make_pair(V { "input0" }, V { "0" }));
    }
    EXPECT_EQ(slots("clip", { { "a_min", "0" }, { "a_max", "1" } }), std::make_pair(V { "input0" }, V { "0" }));
}

TEST(MathSlots, AliasesResolveToTheCanonicalOperator)
{
    const auto& reg = OpRegistry::instance();
    const std::vector<std::pair<const char*, const char*>> aliases = {
        { "_add", "elemwise_add" },
        { "_plus", "elemwise_add" },
        { "_Plus", "elemwise_add" },
        { "_sub", "elemwise_sub" },
        { "_minus", "elemwise_sub" },
        { "_Minus", "elemwise_sub" },
        { "_mul", "elemwise_mul" },
        { "_Mul", "elemwise_mul" },
        { "_div", "elemwise_div" },
        { "_Div", "elemwise_div" },
        { "broadcast_plus", "broadcast_add" },
        { "broadcast_minus", "broadcast_sub" },
        { "_PlusScalar", "_plus_scalar" },
        { "_MinusScalar", "_minus_scalar" },
        { "_RMinusScalar", "_rminus_scalar" },
        { "_MulScalar", "_mul_scalar" },
        { "_DivScalar", "_div_scalar" },
        { "_RDivScalar", "_rdiv_scalar" },
        { "_PowerScalar", "_power_scalar" },
        { "sum_axis", "sum" },
        { "max_axis", "max" },
    };
    for (const auto& [alias, name] : aliases) {
        SCOPED_TRACE(alias);
        const OpDef* def = reg.find(alias);
        ASSERT_NE(def, nullptr);
        EXPECT_EQ(def->name, name);
        EXPECT_EQ(def, &reg.get(name));
    }
}

} // namespace
