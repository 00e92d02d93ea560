#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <functional>
#include "common/op_test_util.h"
#include <gtest/gtest.h>

using namespace opscope;

namespace {

Tensor fixtureTensor(const std::string& name)
{
    return readNpy(test::fixture("pool/" + name + ".npy"));
}

using test::dnnlBackend;
using test::errorOf;

// ---- Reference kernel against PyTorch / MXNet's rules (tests/fixtures/make_pool_act_softmax_fixtures.py)

struct PoolFixtureCase {
    const char* name;
    AttrMap attrs;
};

std::ostream& operator<<(std::ostream& os, const PoolFixtureCase& c)
{
    return os << c.name;
}

class PoolingFixture : public ::testing::TestWithParam<PoolFixtureCase> { };

TEST_P(PoolingFixture, ReferenceMatchesIndependentValues)
{
    const PoolFixtureCase& c = GetParam();
    const Tensor x = fixtureTensor(std::string(c.name) + "_x");
    const Tensor y = fixtureTensor(std::string(c.name) + "_y");
    const Tensor out = invokeOp("Pooling", c.attrs, { x }, KernelKind::Reference)[0];
    EXPECT_TRUE(test::tensorsNear(out, y, 1e-5f, 1e-5f));
    // oneDNN where it applies (the reference kernel otherwise) gives the same values.
    const Tensor auto_ = invokeOp("Pooling", c.attrs, { x }, KernelKind::Dnnl)[0];
    EXPECT_TRUE(test::tensorsNear(auto_, y, 1e-5f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Pooling, PoolingFixture,
    ::testing::Values(PoolFixtureCase { "max2d_k3s2", { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" } } },
        PoolFixtureCase { "max2d_k3s2p1_full",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pooling_convention", "full" },
                { "layout", "NCHW" } } },
        PoolFixtureCase { "max2d_k2x3_s1x2_p1x0",
            { { "kernel", "(2, 3)" }, { "stride", "(1, 2)" }, { "pad", "(1, 0)" }, { "pool_type", "max" } } },
        PoolFixtureCase { "avg2d_k3s2p1_incl",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" } } },
        PoolFixtureCase { "avg2d_k3s2p1_excl",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
                { "count_include_pad", "False" } } },
        PoolFixtureCase { "avg2d_k3s2p1_full_incl",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" }, { "count_include_pad", "True" } } },
        PoolFixtureCase { "avg2d_k3s2p1_full_excl",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" }, { "count_include_pad", "False" } } },
        PoolFixtureCase { "sum2d_k2s2", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "sum" } } },
        PoolFixtureCase { "sum2d_k3s2p1_full",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "sum" },
                { "pooling_convention", "full" } } },
        PoolFixtureCase { "max1d_k3p1", { { "kernel", "(3,)" }, { "pad", "(1,)" }, { "layout", "NCW" } } },
        PoolFixtureCase { "avg1d_k2s2_full",
            { { "kernel", "(2,)" }, { "stride", "(2,)" }, { "pool_type", "avg" }, { "pooling_convention", "full" } } },
        PoolFixtureCase { "sum1d_k3s2", { { "kernel", "3" }, { "stride", "2" }, { "pool_type", "sum" } } },
        PoolFixtureCase { "avg3d_excl",
            { { "kernel", "(2, 2, 3)" }, { "stride", "(2, 2, 2)" }, { "pad", "(1, 0, 1)" }, { "pool_type", "avg" },
                { "count_include_pad", "False" } } },
        PoolFixtureCase { "global_max2d", { { "global_pool", "True" } } },
        PoolFixtureCase { "global_avg1d", { { "global_pool", "True" }, { "pool_type", "avg" } } },
        PoolFixtureCase {
            "global_sum2d", { { "global_pool", "True" }, { "pool_type", "sum" }, { "kernel", "(1, 1)" } } },
        PoolFixtureCase {
            "same_max1d", { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pooling_convention", "same" } } },
        PoolFixtureCase { "max2d_full_padded_window",
            { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" },
                { "pooling_convention", "full" } } }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PoolingOp, WindowWhollyInPaddingGivesMXNetValues)
{
    // MXNet's 'full' convention keeps a last window that starts in the right padding.
    const Tensor y = fixtureTensor("max2d_full_padded_window_y");
    ASSERT_EQ(y.shape(), Shape({ 1, 1, 4, 4 }));
    EXPECT_EQ(y.at(3), -FLT_MAX);
    const AttrMap avg = { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" },
        { "pooling_convention", "full" }, { "pool_type", "avg" } };
    const Tensor a = invokeOp("Pooling", avg, { Tensor::ones(Shape({ 1, 1, 5, 5 })) }, KernelKind::Reference)[0];
    EXPECT_EQ(a.at(3), 0.0f);
    EXPECT_EQ(a.at(0), 0.25f); // corner window: one value, divided by the 2x2 kernel (count_include_pad)
}

// ---- oneDNN kernel against the reference kernel ---------------------------------------------------

struct PoolDnnlCase {
    const char* name;
    Shape data;
    AttrMap attrs;
};

std::ostream& operator<<(std::ostream& os, const PoolDnnlCase& c)
{
    return os << c.name;
}

class PoolingDnnl : public ::testing::TestWithParam<PoolDnnlCase> { };

TEST_P(PoolingDnnl, MatchesReference)
{
    const PoolDnnlCase& c = GetParam();
    Generator gen(11);
    const Tensor x = Tensor::uniform(c.data, -3.0f, 3.0f, &gen);
    EXPECT_EQ(dnnlBackend("Pooling", c.attrs, { c.data }), std::string("dnnl"));
    const Tensor ref = invokeOp("Pooling", c.attrs, { x }, KernelKind::Reference)[0];
    const Tensor dnn = invokeOp("Pooling", c.attrs, { x }, KernelKind::Dnnl)[0];
    EXPECT_TRUE(test::tensorsNear(dnn, ref, 1e-5f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Pooling, PoolingDnnl,
    ::testing::Values(PoolDnnlCase { "max2d_valid", Shape({ 4, 8, 32, 32 }),
                          { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" } } },
        PoolDnnlCase { "max2d_full", Shape({ 2, 8, 31, 30 }),
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pooling_convention", "full" } } },
        PoolDnnlCase { "avg2d_include_pad", Shape({ 2, 16, 28, 28 }),
            { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" } } },
        PoolDnnlCase { "avg2d_exclude_pad_full", Shape({ 2, 8, 27, 27 }),
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" }, { "count_include_pad", "False" } } },
        PoolDnnlCase { "avg2d_no_pad_full", Shape({ 2, 8, 15, 15 }),
            { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" } } },
        PoolDnnlCase { "sum2d", Shape({ 2, 8, 16, 16 }),
            { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "sum" } } },
        PoolDnnlCase { "sum2d_pad_full", Shape({ 2, 8, 16, 16 }),
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "sum" },
                { "pooling_convention", "full" } } },
        PoolDnnlCase { "max1d", Shape({ 4, 16, 100 }),
            { { "kernel", "(5,)" }, { "stride", "(2,)" }, { "pad", "(2,)" }, { "layout", "NCW" } } },
        PoolDnnlCase { "avg1d_full_exclude", Shape({ 4, 16, 99 }),
            { { "kernel", "(4,)" }, { "stride", "(3,)" }, { "pad", "(1,)" }, { "pool_type", "avg" },
                { "pooling_convention", "full" }, { "count_include_pad", "False" } } },
        PoolDnnlCase { "avg3d", Shape({ 1, 4, 8, 10, 12 }),
            { { "kernel", "(2, 3, 3)" }, { "stride", "(2, 2, 2)" }, { "pad", "(0, 1, 1)" }, { "pool_type", "avg" } } },
        PoolDnnlCase { "global_max", Shape({ 4, 32, 7, 7 }), { { "global_pool", "True" } } },
        PoolDnnlCase { "global_avg", Shape({ 4, 32, 7, 7 }), { { "global_pool", "True" }, { "pool_type", "avg" } } },
        PoolDnnlCase { "global_avg1d", Shape({ 4, 32, 50 }), { { "global_pool", "True" }, { "pool_type", "avg" } } }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PoolingOp, DnnlFallsBackWhereMXNetDividesDifferently)
{
    // count_include_pad with 'full' extra right padding: MXNet's divisor stops at data + pad.
    const AttrMap attrs = { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "pool_type", "avg" },
        { "pooling_convention", "full" } };
    EXPECT_EQ(dnnlBackend("Pooling", attrs, { Shape({ 2, 8, 16, 16 }) }), std::string("reference"));
    Generator gen(3);
    const Tensor x = Tensor::uniform(Shape({ 2, 8, 16, 16 }), -1, 1, &gen);
    EXPECT_TRUE(test::tensorsNear(invokeOp("Pooling", attrs, { x }, KernelKind::Dnnl)[0],
        invokeOp("Pooling", attrs, { x }, KernelKind::Reference)[0], 0, 0));
}

TEST(PoolingOp, DnnlPaysOnlyForLargeWork)
{
    const OpDef& def = OpRegistry::instance().get("Pooling");
    const ParamsPtr p = def.parse({ { "kernel", "(2, 2)" }, { "stride", "(2, 2)" } });
    const std::vector<Shape> small = { Shape({ 1, 2, 4, 4 }) }, smallOut = { Shape({ 1, 2, 2, 2 }) };
    const std::vector<Shape> large = { Shape({ 8, 64, 56, 56 }) }, largeOut = { Shape({ 8, 64, 28, 28 }) };
    EXPECT_FALSE(def.dnnlPays(*p, small, smallOut));
    EXPECT_TRUE(def.dnnlPays(*p, large, largeOut));
    EXPECT_EQ(def.makeKernel(*p, small, smallOut, KernelKind::Auto)->backend(), std::string("reference"));
    EXPECT_EQ(def.makeKernel(*p, large, largeOut, KernelKind::Auto)->backend(), std::string("dnnl"));
}

// ---- Shapes, attributes, slot names ---------------------------------------------------------------

TEST(PoolingOp, OutputShapesFollowMXNetConventions)
{
    auto outShape = [](const AttrMap& attrs, Shape data) {
        std::vector<Shape> in = { data };
        return inferOpShapes("Pooling", attrs, in)[0];
    };
    const AttrMap k3s2 = { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" } };
    EXPECT_EQ(outShape(k3s2, Shape({ 1, 3, 8, 8 })), Shape({ 1, 3, 3, 3 })); // floor((8-3)/2)+1
    AttrMap full = k3s2;
    full["pooling_convention"] = "full";
    EXPECT_EQ(outShape(full, Shape({ 1, 3, 8, 8 })), Shape({ 1, 3, 4, 4 })); // ceil((8-3)/2)+1
    EXPECT_EQ(
        outShape({ { "kernel", "(3,)" }, { "stride", "(2,)" }, { "pooling_convention", "same" } }, Shape({ 2, 4, 7 })),
        Shape({ 2, 4, 4 })); // ceil(7/2)
    EXPECT_EQ(outShape({ { "global_pool", "True" } }, Shape({ 2, 5, 7, 9 })), Shape({ 2, 5, 1, 1 }));
    EXPECT_EQ(outShape({ { "global_pool", "True" }, { "kernel", "(2, 2)" } }, Shape({ 2, 5, 7 })), Shape({ 2, 5, 1 }));
    // Gluon's GlobalAvgPool1D and AvgPool1D attributes.
    EXPECT_EQ(outShape({ { "global_pool", "True" }, { "kernel", "(1,)" }, { "stride", "(1,)" }, { "pad", "(0,)" },
                           { "pool_type", "avg" }, { "layout", "NCW" } },
                  Shape({ 2, 3, 4 })),
        Shape({ 2, 3, 1 }));
    EXPECT_EQ(outShape({ { "kernel", "(2,)" }, { "stride", "(2,)" }, { "pad", "(0,)" }, { "pool_type", "avg" },
                           { "pooling_convention", "valid" }, { "global_pool", "False" },
                           { "count_include_pad", "True" }, { "layout", "NCW" } },
                  Shape({ 2, 3, 4 })),
        Shape({ 2, 3, 2 }));
    EXPECT_EQ(outShape({ { "kernel", "(2, 2)" }, { "pad", "(1, 1)" }, { "cudnn_off", "True" }, { "p_value", "None" } },
                  Shape({ 1, 1, 3, 3 })),
        Shape({ 1, 1, 4, 4 }));
}

TEST(PoolingOp, WrongDataShapesThrowShapeErrorNamingBothShapes)
{
    auto shapeError = [](const AttrMap& attrs, Shape data) {
        return errorOf<ShapeError>([&] {
            std::vector<Shape> in = { data };
            inferOpShapes("Pooling", attrs, in);
        });
    };
    std::string msg = shapeError({ { "kernel", "(3,)" } }, Shape({ 1, 2, 5, 5 }));
    EXPECT_NE(msg.find("(3,)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(1, 2, 5, 5)"), std::string::npos) << msg;
    msg = shapeError({ { "kernel", "(4, 4)" } }, Shape({ 1, 2, 3, 3 }));
    EXPECT_NE(msg.find("(4, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(1, 2, 3, 3)"), std::string::npos) << msg;
    msg = shapeError({ { "kernel", "(2, 2)" }, { "layout", "NCW" } }, Shape({ 1, 2, 3, 3 }));
    EXPECT_NE(msg.find("NCW"), std::string::npos) << msg;
    msg = shapeError({ { "global_pool", "True" } }, Shape({ 4, 5 }));
    EXPECT_NE(msg.find("(4, 5)"), std::string::npos) << msg;
    // Through invokeOp the message also names the operator.
    msg = errorOf<ShapeError>([] {
        invokeOp("Pooling", { { "kernel", "(9, 9)" } }, { Tensor::zeros(Shape({ 1, 1, 4, 4 })) });
    });
    EXPECT_NE(msg.find("Pooling"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(9, 9)"), std::string::npos) << msg;
}

TEST(PoolingOp, BadAttributesThrowAttributeErrorNamingTheAttribute)
{
    auto attrError = [](const AttrMap& attrs) {
        return errorOf<AttributeError>([&] { OpRegistry::instance().get("Pooling").parse(attrs); });
    };
    EXPECT_NE(attrError({ { "kernel", "abc" } }).find("'kernel'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 0)" } }).find("'kernel'"), std::string::npos);
    EXPECT_NE(attrError({}).find("'kernel'"), std::string::npos); // required unless global_pool
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "pool_type", "median" } }).find("'pool_type'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "pool_type", "lp" } }).find("'pool_type'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "stride", "(2,)" } }).find("'stride'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "pad", "(1, 1, 1)" } }).find("'pad'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "pooling_convention", "ceil" } }).find("'pooling_convention'"),
        std::string::npos);
    EXPECT_NE(
        attrError({ { "kernel", "(2, 2)" }, { "global_pool", "maybe" } }).find("'global_pool'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "count_include_pad", "2" } }).find("'count_include_pad'"),
        std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2, 2)" }, { "layout", "NHWC" } }).find("'layout'"), std::string::npos);
    EXPECT_NE(attrError({ { "kernel", "(2,)" }, { "pad", "(1,)" }, { "pooling_convention", "same" } }).find("'pad'"),
        std::string::npos);
    // MXNet's defaults and spellings parse.
    EXPECT_NO_THROW(OpRegistry::instance().get("Pooling").parse({ { "kernel", "(2, 2)" },
        { "count_include_pad", "None" }, { "layout", "None" }, { "p_value", "None" }, { "cudnn_off", "False" } }));
}

TEST(PoolingOp, SlotNamesAreMXNets)
{
    const OpDef& def = OpRegistry::instance().get("Pooling");
    const ParamsPtr p = def.parse({ { "kernel", "(2, 2)" }, { "pool_type", "max" } });
    EXPECT_EQ(def.inputSlotNames(*p), (std::vector<std::string> { "data" }));
    EXPECT_EQ(def.outputSlotNames(*p), (std::vector<std::string> { "output" }));
    EXPECT_EQ(def.visibleOutputs(*p), 1);
}

} // namespace

// A NaN in a max-pooling window is its maximum (NumPy's max, PyTorch's max_pool2d), with oneDNN as
// with the reference kernel, so a NaN watchpoint stops where the NaN began, not downstream.
TEST(PoolingNan, MaxPoolingPropagatesNan)
{
    const AttrMap attrs { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" } };
    // 64 channels of 8x8, big enough for oneDNN; one window all NaN, one with a single NaN.
    Tensor x = Tensor::uniform(Shape({ 2, 64, 8, 8 }), -1, 1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int k : { 0, 1, 8, 9 })
        x.at(k) = nan; // channel 0, window (0, 0): all four
    x.at(64 * 64 + 64 + 2 * 8 + 5) = nan; // batch 1, channel 1, window (1, 2): one of four
    ASSERT_EQ(test::dnnlBackend("Pooling", attrs, { x.shape() }), "dnnl");
    for (KernelKind kind : { KernelKind::Reference, KernelKind::Dnnl }) {
        const Tensor y = invokeOp("Pooling", attrs, { x }, kind)[0];
        ASSERT_EQ(y.shape(), Shape({ 2, 64, 4, 4 }));
        int nans = 0;
        for (float v : y.values())
            nans += std::isnan(v);
        EXPECT_EQ(nans, 2) << (kind == KernelKind::Dnnl ? "dnnl" : "reference");
        EXPECT_TRUE(std::isnan(y.at(0)));
        EXPECT_TRUE(std::isnan(y.at(64 * 16 + 16 + 1 * 4 + 2)));
        EXPECT_FALSE(std::isnan(y.at(1)));
    }
}
