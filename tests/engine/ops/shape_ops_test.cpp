// Shape operators: Flatten, Reshape, expand_dims, squeeze, _copy, transpose, Concat, SliceChannel,
// slice_axis. Expected values come from NumPy (tests/fixtures/make_shape_fixtures.py); expected
// Reshape shapes are MXNet's docstring examples, written here as literal data.

#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace opscope;

namespace {

Tensor fx(const std::string& name)
{
    return readNpy(test::fixture("shape/" + name + ".npy"));
}

std::vector<Tensor> fxList(const std::string& name, const std::string& tag, int n)
{
    std::vector<Tensor> list;
    for (int i = 0; i < n; ++i)
        list.push_back(fx(name + "_" + tag + std::to_string(i)));
    return list;
}

Tensor run1(const std::string& op, const AttrMap& attrs, const Tensor& x, KernelKind kind = KernelKind::Reference)
{
    auto out = invokeOp(op, attrs, { x }, kind);
    EXPECT_EQ(out.size(), 1u);
    return out.at(0);
}

Shape outShape(const std::string& op, const AttrMap& attrs, const Shape& in)
{
    std::vector<Shape> shapes { in };
    return inferOpShapes(op, attrs, shapes).at(0);
}

// Runs `fn` and returns the message of the exception of type E it throws ("" if none).
template <class E, class F> std::string messageOf(F fn)
{
    try {
        fn();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return {};
}

std::vector<std::string> inputSlots(const std::string& op, const AttrMap& attrs)
{
    const OpDef& def = OpRegistry::instance().get(op);
    return def.inputSlotNames(*def.parse(attrs));
}

std::vector<std::string> outputSlots(const std::string& op, const AttrMap& attrs)
{
    const OpDef& def = OpRegistry::instance().get(op);
    return def.outputSlotNames(*def.parse(attrs));
}

using Strings = std::vector<std::string>;

} // namespace

// ---- Flatten -------------------------------------------------------------------------------------

TEST(ShapeOpsFlatten, MatchesNumPy)
{
    EXPECT_TRUE(test::tensorsNear(run1("Flatten", {}, fx("flatten_4d_in")), fx("flatten_4d_out")));
    EXPECT_TRUE(test::tensorsNear(run1("flatten", {}, fx("flatten_1d_in")), fx("flatten_1d_out")));
}

TEST(ShapeOpsFlatten, KeepsUnknownDims)
{
    EXPECT_EQ(outShape("Flatten", {}, Shape({ 0, 3, 4 })), Shape({ 0, 12 }));
    EXPECT_EQ(outShape("Flatten", {}, Shape({ 2, 0, 4 })), Shape({ 2, 0 }));
    EXPECT_THROW(outShape("Flatten", {}, Shape()), ShapeError);
}

// ---- Reshape -------------------------------------------------------------------------------------

struct ReshapeCase {
    Shape input;
    std::string shape;
    bool reverse;
    Shape expected;
};

class ShapeOpsReshapeDoc : public ::testing::TestWithParam<ReshapeCase> { };

// Every example of MXNet 1.9's Reshape docstring.
TEST_P(ShapeOpsReshapeDoc, InfersTheDocumentedShape)
{
    const ReshapeCase& c = GetParam();
    AttrMap attrs { { "shape", c.shape } };
    if (c.reverse) attrs["reverse"] = "True";
    EXPECT_EQ(outShape("Reshape", attrs, c.input), c.expected) << "shape=" << c.shape;
}

INSTANTIATE_TEST_SUITE_P(Docstring, ShapeOpsReshapeDoc,
    ::testing::Values(ReshapeCase { { 2, 3, 4 }, "(4,0,2)", false, { 4, 3, 2 } },
        ReshapeCase { { 2, 3, 4 }, "(2,0,0)", false, { 2, 3, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(6,1,-1)", false, { 6, 1, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(3,-1,8)", false, { 3, 1, 8 } },
        ReshapeCase { { 2, 3, 4 }, "(-1,)", false, { 24 } }, ReshapeCase { { 2, 3, 4 }, "(-2,)", false, { 2, 3, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(2,-2)", false, { 2, 3, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(-2,1,1)", false, { 2, 3, 4, 1, 1 } },
        ReshapeCase { { 2, 3, 4 }, "(-3,4)", false, { 6, 4 } },
        ReshapeCase { { 2, 3, 4, 5 }, "(-3,-3)", false, { 6, 20 } },
        ReshapeCase { { 2, 3, 4 }, "(0,-3)", false, { 2, 12 } },
        ReshapeCase { { 2, 3, 4 }, "(-3,-2)", false, { 6, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(-4,1,2,-2)", false, { 1, 2, 3, 4 } },
        ReshapeCase { { 2, 3, 4 }, "(2,-4,-1,3,-2)", false, { 2, 1, 3, 4 } },
        ReshapeCase { { 10, 5, 4 }, "(-1,0)", false, { 40, 5 } },
        ReshapeCase { { 10, 5, 4 }, "(-1,0)", true, { 50, 4 } },
        // Not in the docstring: "(-1)" without a comma, and -3 read right to left.
        ReshapeCase { { 2, 3, 4 }, "(-1)", false, { 24 } },
        ReshapeCase { { 2, 3, 4, 5 }, "(-1,-3)", false, { 10, 12 } },
        ReshapeCase { { 2, 3, 4, 5 }, "(-1,-3)", true, { 6, 20 } },
        ReshapeCase { { 2, 3, 4 }, "(-4,-1,2,0,0)", false, { 1, 2, 3, 4 } },
        ReshapeCase { { 2, 3, 4 }, "[4, 6]", false, { 4, 6 } }));

TEST(ShapeOpsReshape, ValuesKeepTheirOrder)
{
    const Tensor x = fx("reshape_in_2x3x4_in");
    const std::vector<std::pair<std::string, std::string>> cases {
        { "(4,0,2)", "reshape_4x3x2" },
        { "(2,0,0)", "reshape_2x3x4" },
        { "(6,1,-1)", "reshape_6x1x4" },
        { "(3,-1,8)", "reshape_3x1x8" },
        { "(-1,)", "reshape_24" },
        { "(-2,1,1)", "reshape_2x3x4x1x1" },
        { "(-3,-2)", "reshape_6x4" },
        { "(0,-3)", "reshape_2x12" },
        { "(-4,1,2,-2)", "reshape_1x2x3x4" },
        { "(2,-4,-1,3,-2)", "reshape_2x1x3x4" },
    };
    for (const auto& [shape, expected] : cases)
        EXPECT_TRUE(test::tensorsNear(run1("Reshape", { { "shape", shape } }, x), fx(expected + "_out")))
            << "shape=" << shape;
    const Tensor x4 = fx("reshape_in_2x3x4x5_in");
    EXPECT_TRUE(test::tensorsNear(run1("Reshape", { { "shape", "(-3,-3)" } }, x4), fx("reshape_6x20_out")));
    EXPECT_TRUE(test::tensorsNear(run1("reshape", { { "shape", "(-1,-3)" } }, x4), fx("reshape_10x12_out")));
    const Tensor x3 = fx("reshape_in_10x5x4_in");
    EXPECT_TRUE(test::tensorsNear(run1("Reshape", { { "shape", "(-1,0)" } }, x3), fx("reshape_40x5_out")));
    EXPECT_TRUE(
        test::tensorsNear(run1("Reshape", { { "shape", "(-1,0)" }, { "reverse", "1" } }, x3), fx("reshape_50x4_out")));
}

TEST(ShapeOpsReshape, LegacyTargetShape)
{
    const Tensor x = fx("reshape_in_2x3x4_in");
    EXPECT_TRUE(test::tensorsNear(run1("Reshape", { { "target_shape", "(0, 4)" } }, x), fx("reshape_6x4_out")));
    EXPECT_TRUE(test::tensorsNear(
        run1("Reshape", { { "target_shape", "(7, 0)" }, { "keep_highest", "True" } }, x), fx("reshape_2x12_out")));
    // `shape` wins over the deprecated attribute.
    EXPECT_EQ(outShape("Reshape", { { "shape", "(4, 6)" }, { "target_shape", "(0, 4)" } }, Shape({ 2, 3, 4 })),
        Shape({ 4, 6 }));
}

TEST(ShapeOpsReshape, UnknownDims)
{
    // A copied unknown dim stays unknown; -1 cannot be inferred then.
    EXPECT_EQ(outShape("Reshape", { { "shape", "(0, -1)" } }, Shape({ 0, 3, 4 })), Shape({ 0, 0 }));
    EXPECT_EQ(outShape("Reshape", { { "shape", "(-3, 0)" } }, Shape({ 2, 0, 4 })), Shape({ 0, 4 }));
    // MXNet's ReverseReshapeInferShape: a known output completes one unknown input dim.
    std::vector<Shape> in { Shape({ 0, 4 }) };
    EXPECT_EQ(inferOpShapes("Reshape", { { "shape", "(6, 4)" } }, in).at(0), Shape({ 6, 4 }));
    EXPECT_EQ(in[0], Shape({ 6, 4 }));
}

TEST(ShapeOpsReshape, ShapeErrorsNameBothShapes)
{
    const Tensor x = Tensor::zeros(Shape({ 2, 3, 4 }));
    std::string msg = messageOf<ShapeError>([&] { run1("Reshape", { { "shape", "(5, 5)" } }, x); });
    EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(5, 5)"), std::string::npos) << msg;
    msg = messageOf<ShapeError>([&] { run1("Reshape", { { "shape", "(5, -1)" } }, x); });
    EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(5, -1)"), std::string::npos) << msg;
    msg = messageOf<ShapeError>([&] { run1("Reshape", { { "shape", "(0, 0, 0, 0)" } }, x); });
    EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
    EXPECT_THROW(run1("Reshape", { { "shape", "(-3, -3)" } }, x), ShapeError);
    EXPECT_THROW(run1("Reshape", { { "shape", "(-4, 5, -1, -2)" } }, x), ShapeError);
    EXPECT_THROW(run1("Reshape", { { "shape", "(-2, 1, 1, 1, 1)" } }, x), ShapeError); // 7 dims
}

TEST(ShapeOpsReshape, AttributeErrors)
{
    const Tensor x = Tensor::zeros(Shape({ 2, 3, 4 }));
    for (const char* bad : { "abc", "(2, x)", "(-1, -1)", "(-5, 2)", "(-4, 2)", "(-4, -1, -1)", "(-4, 0, 2)" }) {
        const std::string msg = messageOf<AttributeError>([&] { run1("Reshape", { { "shape", bad } }, x); });
        EXPECT_NE(msg.find("'shape'"), std::string::npos) << bad << ": " << msg;
    }
    EXPECT_NE(messageOf<AttributeError>([&] { run1("Reshape", {}, x); }).find("'shape'"), std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("Reshape", { { "shape", "(4, 6)" }, { "reverse", "maybe" } }, x);
    }).find("'reverse'"),
        std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("Reshape", { { "target_shape", "(-1, 4)" } }, x);
    }).find("'target_shape'"),
        std::string::npos);
}

// ---- expand_dims ---------------------------------------------------------------------------------

TEST(ShapeOpsExpandDims, MatchesNumPy)
{
    const Tensor x = fx("expand_dims_2x3_in");
    for (int axis : { 0, 1, 2, -1, -3 })
        EXPECT_TRUE(test::tensorsNear(run1("expand_dims", { { "axis", std::to_string(axis) } }, x),
            fx("expand_dims_axis" + std::to_string(axis) + "_out")))
            << "axis=" << axis;
}

TEST(ShapeOpsExpandDims, Errors)
{
    const Tensor x = Tensor::zeros(Shape({ 2, 3 }));
    const std::string msg = messageOf<ShapeError>([&] { run1("expand_dims", { { "axis", "3" } }, x); });
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_THROW(run1("expand_dims", { { "axis", "-4" } }, x), ShapeError);
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("expand_dims", { { "axis", "abc" } }, x);
    }).find("'axis'"),
        std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] { run1("expand_dims", {}, x); }).find("'axis'"), std::string::npos);
    EXPECT_THROW(run1("expand_dims", { { "axis", "0" } }, Tensor::zeros(Shape({ 1, 1, 1, 1, 1, 1 }))), ShapeError);
}

// ---- squeeze -------------------------------------------------------------------------------------

TEST(ShapeOpsSqueeze, MatchesNumPy)
{
    const Tensor x = fx("squeeze_1x3x1x2_in");
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", {}, x), fx("squeeze_all_out")));
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", { { "axis", "None" } }, x), fx("squeeze_all_out")));
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", { { "axis", "2" } }, x), fx("squeeze_axis2_out")));
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", { { "axis", "(0, 2)" } }, x), fx("squeeze_axis0_2_out")));
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", { { "axis", "(-4,)" } }, x), fx("squeeze_axis_neg4_out")));
    // MXNet keeps one dimension.
    EXPECT_TRUE(test::tensorsNear(run1("squeeze", {}, fx("squeeze_ones_in")), fx("squeeze_ones_out")));
}

TEST(ShapeOpsSqueeze, Errors)
{
    const Tensor x = Tensor::zeros(Shape({ 1, 3, 1, 2 }));
    const std::string msg = messageOf<ShapeError>([&] { run1("squeeze", { { "axis", "1" } }, x); });
    EXPECT_NE(msg.find("(1, 3, 1, 2)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3"), std::string::npos) << msg;
    EXPECT_THROW(run1("squeeze", { { "axis", "4" } }, x), ShapeError);
    EXPECT_THROW(run1("squeeze", { { "axis", "(0, -4)" } }, x), ShapeError); // the same axis twice
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("squeeze", { { "axis", "x" } }, x);
    }).find("'axis'"),
        std::string::npos);
}

// ---- _copy ---------------------------------------------------------------------------------------

TEST(ShapeOpsCopy, IsAnIndependentCopy)
{
    const Tensor x = fx("copy_in");
    for (const char* name : { "_copy", "identity" }) {
        const Tensor y = run1(name, {}, x);
        EXPECT_TRUE(test::tensorsNear(y, fx("copy_out"))) << name;
        EXPECT_FALSE(y.sharesStorageWith(x)) << name;
    }
}

// ---- transpose -----------------------------------------------------------------------------------

TEST(ShapeOpsTranspose, MatchesNumPy)
{
    const std::vector<std::pair<std::string, std::string>> cases {
        { "transpose_default", "" },
        { "transpose_default", "()" },
        { "transpose_102", "(1, 0, 2)" },
        { "transpose_021", "(0, 2, 1)" },
        { "transpose_2d", "(1, 0)" },
        { "transpose_0231", "(0, 2, 3, 1)" },
        { "transpose_6d", "(5, 3, 0, 2, 4, 1)" },
        { "transpose_tiles_a", "(0, 2, 1)" },
        { "transpose_tiles_b", "(0, -1, 1)" },
        { "transpose_1d", "" },
    };
    for (const auto& [name, axes] : cases) {
        AttrMap attrs;
        if (!axes.empty()) attrs["axes"] = axes;
        EXPECT_TRUE(test::tensorsNear(run1("transpose", attrs, fx(name + "_in")), fx(name + "_out")))
            << name << " axes=" << axes;
    }
}

TEST(ShapeOpsTranspose, Errors)
{
    const Tensor x = Tensor::zeros(Shape({ 2, 3, 4 }));
    std::string msg = messageOf<ShapeError>([&] { run1("transpose", { { "axes", "(1, 0)" } }, x); });
    EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(1, 0)"), std::string::npos) << msg;
    EXPECT_THROW(run1("transpose", { { "axes", "(0, 0, 1)" } }, x), ShapeError);
    EXPECT_THROW(run1("transpose", { { "axes", "(0, 1, 3)" } }, x), ShapeError);
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("transpose", { { "axes", "(1, a)" } }, x);
    }).find("'axes'"),
        std::string::npos);
}

struct TransposeCase {
    Shape shape;
    std::string axes;
};

class ShapeOpsTransposeDnnl : public ::testing::TestWithParam<TransposeCase> { };

TEST_P(ShapeOpsTransposeDnnl, MatchesReference)
{
    const TransposeCase& c = GetParam();
    AttrMap attrs;
    if (!c.axes.empty()) attrs["axes"] = c.axes;
    Generator gen(7);
    const Tensor x = Tensor::uniform(c.shape, -1, 1, &gen);
    const Tensor ref = run1("transpose", attrs, x, KernelKind::Reference);
    const Tensor dnnl = run1("transpose", attrs, x, KernelKind::Dnnl);
    EXPECT_TRUE(test::tensorsNear(dnnl, ref, 0, 0));

    const OpDef& def = OpRegistry::instance().get("transpose");
    const ParamsPtr params = def.parse(attrs);
    const std::vector<Shape> in { c.shape };
    const std::vector<Shape> out { ref.shape() };
    EXPECT_EQ(def.makeKernel(*params, in, out, KernelKind::Dnnl)->backend(), std::string("dnnl"));
    EXPECT_EQ(def.makeKernel(*params, in, out, KernelKind::Reference)->backend(), std::string("reference"));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ShapeOpsTransposeDnnl,
    ::testing::Values(TransposeCase { { 7, 5 }, "" }, TransposeCase { { 2, 3, 4 }, "" },
        TransposeCase { { 2, 3, 4 }, "(1, 0, 2)" }, TransposeCase { { 2, 3, 4 }, "(0, 2, 1)" },
        TransposeCase { { 8, 16, 14, 14 }, "(0, 2, 3, 1)" }, TransposeCase { { 8, 14, 14, 16 }, "(0, 3, 1, 2)" },
        TransposeCase { { 2, 1, 3, 2, 1, 2 }, "(5, 3, 0, 2, 4, 1)" }, TransposeCase { { 3, 1, 4 }, "(1, 0, 2)" },
        TransposeCase { { 130, 70 }, "(1, 0)" }, TransposeCase { { 5 }, "" }));

// ---- Concat --------------------------------------------------------------------------------------

TEST(ShapeOpsConcat, MatchesNumPy)
{
    struct Case {
        std::string name;
        int n;
        std::string dim;
    };
    const std::vector<Case> cases {
        { "concat_dim1", 3, "" },
        { "concat_dim0", 2, "0" },
        { "concat_dim_neg1", 2, "-1" },
        { "concat_single", 1, "1" },
        { "concat_1d", 2, "0" },
        { "concat_doc_dim0", 3, "0" },
        { "concat_doc_dim1", 2, "1" },
    };
    for (const Case& c : cases) {
        AttrMap attrs { { "num_args", std::to_string(c.n) } };
        if (!c.dim.empty()) attrs["dim"] = c.dim;
        const std::vector<Tensor> in
            = c.n == 1 ? std::vector<Tensor> { fx(c.name + "_in") } : fxList(c.name, "in", c.n);
        for (const char* op : { "Concat", "concat" }) {
            const auto out = invokeOp(op, attrs, in, KernelKind::Reference);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(test::tensorsNear(out[0], fx(c.name + "_out"))) << c.name;
        }
    }
}

TEST(ShapeOpsConcat, ShapeInference)
{
    // An unknown input gets the common shape; its size along `dim` stays unknown.
    std::vector<Shape> in { Shape({ 2, 3, 4 }), Shape(), Shape({ 2, 5, 0 }) };
    const auto out = inferOpShapes("Concat", { { "num_args", "3" }, { "dim", "1" } }, in);
    EXPECT_EQ(in[1], Shape({ 2, 0, 4 }));
    EXPECT_EQ(in[2], Shape({ 2, 5, 4 }));
    EXPECT_EQ(out.at(0), Shape({ 2, 0, 4 }));
    std::vector<Shape> none { Shape(), Shape() };
    EXPECT_THROW(inferOpShapes("Concat", { { "num_args", "2" } }, none), ShapeError);
}

TEST(ShapeOpsConcat, Errors)
{
    const std::vector<Tensor> in { Tensor::zeros(Shape({ 2, 3, 4 })), Tensor::zeros(Shape({ 2, 1, 5 })) };
    const std::string msg = messageOf<ShapeError>([&] { invokeOp("Concat", { { "num_args", "2" } }, in); });
    EXPECT_NE(msg.find("expected (2, 1, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got (2, 1, 5)"), std::string::npos) << msg;
    EXPECT_THROW(invokeOp("Concat", { { "num_args", "2" }, { "dim", "3" } }, in), ShapeError);
    EXPECT_THROW(invokeOp("Concat", { { "num_args", "3" } }, in), UsageError); // wrong number of inputs
    for (const char* bad : { "x", "0", "-2" })
        EXPECT_NE(messageOf<AttributeError>([&] {
            invokeOp("Concat", { { "num_args", bad } }, in);
        }).find("'num_args'"),
            std::string::npos)
            << bad;
    EXPECT_NE(messageOf<AttributeError>([&] { invokeOp("Concat", {}, in); }).find("'num_args'"), std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        invokeOp("Concat", { { "num_args", "2" }, { "dim", "one" } }, in);
    }).find("'dim'"),
        std::string::npos);
}

struct ConcatCase {
    std::vector<Shape> inputs;
    int dim;
};

class ShapeOpsConcatDnnl : public ::testing::TestWithParam<ConcatCase> { };

TEST_P(ShapeOpsConcatDnnl, MatchesReference)
{
    const ConcatCase& c = GetParam();
    const AttrMap attrs { { "num_args", std::to_string(c.inputs.size()) }, { "dim", std::to_string(c.dim) } };
    Generator gen(11);
    std::vector<Tensor> in;
    for (const Shape& s : c.inputs)
        in.push_back(Tensor::uniform(s, -1, 1, &gen));
    const Tensor ref = invokeOp("Concat", attrs, in, KernelKind::Reference).at(0);
    const Tensor dnnl = invokeOp("Concat", attrs, in, KernelKind::Dnnl).at(0);
    EXPECT_TRUE(test::tensorsNear(dnnl, ref, 0, 0));

    const OpDef& def = OpRegistry::instance().get("Concat");
    const ParamsPtr params = def.parse(attrs);
    const std::vector<Shape> out { ref.shape() };
    EXPECT_EQ(def.makeKernel(*params, c.inputs, out, KernelKind::Dnnl)->backend(), std::string("dnnl"));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ShapeOpsConcatDnnl,
    ::testing::Values(ConcatCase { { { 2, 3 }, { 2, 5 } }, 1 }, ConcatCase { { { 2, 3 }, { 4, 3 } }, 0 },
        ConcatCase { { { 2, 3, 4 }, { 2, 1, 4 }, { 2, 2, 4 } }, 1 },
        ConcatCase { { { 8, 16, 14, 14 }, { 8, 32, 14, 14 } }, 1 }, ConcatCase { { { 2, 3, 4 }, { 2, 3, 7 } }, -1 },
        ConcatCase { { { 3 }, { 4 }, { 5 } }, 0 }, ConcatCase { { { 2, 2, 2, 2, 2, 3 }, { 2, 2, 2, 2, 2, 1 } }, 5 }));

// ---- SliceChannel --------------------------------------------------------------------------------

TEST(ShapeOpsSliceChannel, MatchesNumPy)
{
    struct Case {
        std::string name;
        AttrMap attrs;
        int n;
    };
    const std::vector<Case> cases {
        { "split_axis1", { { "num_outputs", "3" } }, 3 },
        { "split_axis_neg1", { { "num_outputs", "2" }, { "axis", "-1" } }, 2 },
        { "split_squeeze", { { "num_outputs", "3" }, { "axis", "1" }, { "squeeze_axis", "True" } }, 3 },
        { "split_axis0", { { "num_outputs", "2" }, { "axis", "0" }, { "squeeze_axis", "0" } }, 2 },
        { "split_one", { { "num_outputs", "1" } }, 1 },
    };
    for (const Case& c : cases) {
        for (const char* op : { "SliceChannel", "split" }) {
            const auto out = invokeOp(op, c.attrs, { fx(c.name + "_in") }, KernelKind::Reference);
            ASSERT_EQ(static_cast<int>(out.size()), c.n) << c.name;
            const std::vector<Tensor> expected
                = c.n == 1 ? std::vector<Tensor> { fx(c.name + "_out") } : fxList(c.name, "out", c.n);
            for (int i = 0; i < c.n; ++i)
                EXPECT_TRUE(test::tensorsNear(out[static_cast<size_t>(i)], expected[static_cast<size_t>(i)]))
                    << c.name << " output " << i;
        }
    }
}

TEST(ShapeOpsSliceChannel, Errors)
{
    const Tensor x = Tensor::zeros(Shape({ 2, 5, 4 }));
    std::string msg = messageOf<ShapeError>([&] { invokeOp("SliceChannel", { { "num_outputs", "2" } }, { x }); });
    EXPECT_NE(msg.find("(2, 5, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("num_outputs=2"), std::string::npos) << msg;
    msg = messageOf<ShapeError>([&] {
        invokeOp("SliceChannel", { { "num_outputs", "2" }, { "axis", "2" }, { "squeeze_axis", "1" } }, { x });
    });
    EXPECT_NE(msg.find("(2, 5, 4)"), std::string::npos) << msg;
    EXPECT_THROW(invokeOp("SliceChannel", { { "num_outputs", "1" }, { "axis", "3" } }, { x }), ShapeError);
    EXPECT_THROW(invokeOp("SliceChannel", { { "num_outputs", "1" }, { "axis", "-4" } }, { x }), ShapeError);
    EXPECT_NE(messageOf<AttributeError>([&] { invokeOp("SliceChannel", {}, { x }); }).find("'num_outputs'"),
        std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        invokeOp("split", { { "num_outputs", "two" } }, { x });
    }).find("'num_outputs'"),
        std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        invokeOp("SliceChannel", { { "num_outputs", "5" }, { "squeeze_axis", "yes" } }, { x });
    }).find("'squeeze_axis'"),
        std::string::npos);
}

// ---- slice_axis ----------------------------------------------------------------------------------

TEST(ShapeOpsSliceAxis, MatchesNumPy)
{
    const Tensor x = fx("slice_doc_in");
    auto slice = [](const Tensor& t, const char* axis, const char* begin, const char* end) {
        return run1("slice_axis", { { "axis", axis }, { "begin", begin }, { "end", end } }, t);
    };
    EXPECT_TRUE(test::tensorsNear(slice(x, "0", "1", "3"), fx("slice_doc_axis0_out")));
    EXPECT_TRUE(test::tensorsNear(slice(x, "1", "0", "2"), fx("slice_doc_axis1_out")));
    EXPECT_TRUE(test::tensorsNear(slice(x, "1", "-3", "-1"), fx("slice_doc_negative_out")));
    EXPECT_TRUE(test::tensorsNear(slice(x, "1", "1", "None"), fx("slice_doc_end_none_out")));
    const Tensor y = fx("slice_3d_in");
    EXPECT_TRUE(test::tensorsNear(slice(y, "1", "1", "4"), fx("slice_3d_out")));
    EXPECT_TRUE(test::tensorsNear(slice(y, "-1", "-2", "None"), fx("slice_3d_last_out")));
}

TEST(ShapeOpsSliceAxis, Errors)
{
    const Tensor x = Tensor::zeros(Shape({ 3, 4 }));
    auto slice = [&](const char* axis, const char* begin, const char* end) {
        run1("slice_axis", { { "axis", axis }, { "begin", begin }, { "end", end } }, x);
    };
    const std::string msg = messageOf<ShapeError>([&] { slice("1", "2", "5"); });
    EXPECT_NE(msg.find("(3, 4)"), std::string::npos) << msg;
    EXPECT_THROW(slice("1", "2", "2"), ShapeError); // empty
    EXPECT_THROW(slice("1", "3", "1"), ShapeError); // reversed
    EXPECT_THROW(slice("1", "-5", "2"), ShapeError); // before the start
    EXPECT_THROW(slice("2", "0", "1"), ShapeError); // no such axis
    EXPECT_NE(messageOf<AttributeError>([&] { slice("1", "zero", "2"); }).find("'begin'"), std::string::npos);
    EXPECT_NE(messageOf<AttributeError>([&] {
        run1("slice_axis", { { "axis", "1" }, { "begin", "0" } }, x);
    }).find("'end'"),
        std::string::npos);
}

// ---- slot names (MXNet 1.9's FListInputNames / FListOutputNames) -----------------------------------

TEST(ShapeOpsSlots, MatchMXNet)
{
    // Flatten, Reshape, expand_dims, _copy, transpose and slice_axis register no names.
    EXPECT_EQ(inputSlots("Flatten", {}), Strings { "input0" });
    EXPECT_EQ(outputSlots("Flatten", {}), Strings { "0" });
    EXPECT_EQ(inputSlots("Reshape", { { "shape", "(-1,)" } }), Strings { "input0" });
    EXPECT_EQ(outputSlots("Reshape", { { "shape", "(-1,)" } }), Strings { "0" });
    EXPECT_EQ(inputSlots("expand_dims", { { "axis", "0" } }), Strings { "input0" });
    EXPECT_EQ(outputSlots("expand_dims", { { "axis", "0" } }), Strings { "0" });
    EXPECT_EQ(inputSlots("_copy", {}), Strings { "input0" });
    EXPECT_EQ(outputSlots("identity", {}), Strings { "0" });
    EXPECT_EQ(inputSlots("transpose", {}), Strings { "input0" });
    EXPECT_EQ(outputSlots("transpose", {}), Strings { "0" });
    const AttrMap sliceAttrs { { "axis", "0" }, { "begin", "0" }, { "end", "None" } };
    EXPECT_EQ(inputSlots("slice_axis", sliceAttrs), Strings { "input0" });
    EXPECT_EQ(outputSlots("slice_axis", sliceAttrs), Strings { "0" });
    // squeeze registers `data`.
    EXPECT_EQ(inputSlots("squeeze", {}), Strings { "data" });
    EXPECT_EQ(outputSlots("squeeze", {}), Strings { "0" });
    // Concat: arg0… and output.
    EXPECT_EQ(inputSlots("Concat", { { "num_args", "3" } }), (Strings { "arg0", "arg1", "arg2" }));
    EXPECT_EQ(outputSlots("concat", { { "num_args", "3" } }), Strings { "output" });
    // SliceChannel is a legacy OperatorProperty: ListArguments `data`, ListOutputs output<i>.
    EXPECT_EQ(inputSlots("SliceChannel", { { "num_outputs", "3" } }), Strings { "data" });
    EXPECT_EQ(outputSlots("split", { { "num_outputs", "3" } }), (Strings { "output0", "output1", "output2" }));
}

TEST(ShapeOpsSlots, CanonicalNamesAndAliases)
{
    const auto& reg = OpRegistry::instance();
    EXPECT_EQ(reg.get("flatten").name, "Flatten");
    EXPECT_EQ(reg.get("reshape").name, "Reshape");
    EXPECT_EQ(reg.get("identity").name, "_copy");
    EXPECT_EQ(reg.get("concat").name, "Concat");
    EXPECT_EQ(reg.get("split").name, "SliceChannel");
    for (const char* name : { "expand_dims", "squeeze", "transpose", "slice_axis" })
        EXPECT_EQ(reg.get(name).name, name);
}

TEST(ShapeOpsDnnl, AutoPicksOneDnnlWhereItPays)
{
    auto backend = [](const std::string& op, const AttrMap& attrs, std::vector<Shape> in) {
        const OpDef& def = OpRegistry::instance().get(op);
        const ParamsPtr params = def.parse(attrs);
        const std::vector<Shape> out = inferOpShapes(op, attrs, in);
        return std::string(def.makeKernel(*params, in, out, KernelKind::Auto)->backend());
    };
    EXPECT_EQ(backend("transpose", {}, { Shape({ 2, 3, 4 }) }), "reference");
    EXPECT_EQ(backend("transpose", { { "axes", "(0, 2, 3, 1)" } }, { Shape({ 8, 16, 14, 14 }) }), "dnnl");
    // A memcpy per block: oneDNN's concat never pays.
    EXPECT_EQ(backend("Concat", { { "num_args", "2" } }, { Shape({ 8, 16, 14, 14 }), Shape({ 8, 16, 14, 14 }) }),
        "reference");
}
