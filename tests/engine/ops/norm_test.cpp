// BatchNorm and LayerNorm: reference kernels against PyTorch/NumPy fixtures
// (tests/fixtures/make_norm_fixtures.py), oneDNN kernels against the reference kernels, shape and
// attribute errors, slot names.

#include "common/op_test_util.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace opscope;

namespace {

Tensor fx(const std::string& name)
{
    return readNpy(test::fixture("norm/" + name + ".npy"));
}

std::vector<Tensor> invokeIn(
    const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, KernelKind kind, bool training)
{
    RunContext ctx;
    ctx.training = training;
    return invokeOp(op, attrs, inputs, kind, &ctx);
}

std::string shapeErrorOf(const std::string& op, const AttrMap& attrs, std::vector<Shape> shapes)
{
    try {
        inferOpShapes(op, attrs, shapes);
    } catch (const ShapeError& e) {
        return e.what();
    }
    return "no ShapeError";
}

std::string attributeErrorOf(const std::string& op, const AttrMap& attrs)
{
    try {
        OpRegistry::instance().get(op).parse(attrs);
    } catch (const AttributeError& e) {
        return e.what();
    }
    return "no AttributeError";
}

/// "2x3x4x5" for test names.
std::string dimsName(const Shape& s)
{
    std::string out;
    for (int i = 0; i < s.ndim(); ++i) {
        if (i > 0) out += 'x';
        out += std::to_string(s[i]);
    }
    return out;
}

std::string axisName(int axis)
{
    return axis < 0 ? "axisM" + std::to_string(-axis) : "axis" + std::to_string(axis);
}

/// The kernel invokeOp would prepare for these inputs, of the requested kind.
std::string backendOf(const std::string& op, const AttrMap& attrs, std::vector<Shape> inShapes, KernelKind kind)
{
    return test::opKernel(op, attrs, std::move(inShapes), kind)->backend();
}

// ---------------------------------------------------------------------------------------------
// BatchNorm

struct BatchNormFixture {
    const char* name;
    AttrMap attrs;
    bool training;
};

class BatchNormFixtureTest : public ::testing::TestWithParam<BatchNormFixture> { };

TEST_P(BatchNormFixtureTest, ReferenceMatchesTorch)
{
    const BatchNormFixture& c = GetParam();
    const std::string n = c.name;
    Tensor movingMean = fx(n + "_mm");
    Tensor movingVar = fx(n + "_mv");
    const auto out = invokeIn("BatchNorm", c.attrs,
        { fx(n + "_x"), fx(n + "_gamma"), fx(n + "_beta"), movingMean, movingVar }, KernelKind::Reference, c.training);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(test::tensorsNear(out[0], fx(n + "_out"), 1e-5f, 1e-4f)) << "output";
    EXPECT_TRUE(test::tensorsNear(out[1], fx(n + "_mean"), 1e-5f, 1e-4f)) << "mean";
    EXPECT_TRUE(test::tensorsNear(out[2], fx(n + "_invstd"), 1e-5f, 1e-4f)) << "var (inverse std)";
    // The auxiliary states are updated in place in training, untouched otherwise.
    EXPECT_TRUE(test::tensorsNear(movingMean, fx(n + "_new_mm"), 1e-6f, 1e-5f)) << "moving_mean";
    EXPECT_TRUE(test::tensorsNear(movingVar, fx(n + "_new_mv"), 1e-6f, 1e-5f)) << "moving_var";
}

TEST_P(BatchNormFixtureTest, DnnlMatchesTorch)
{
    const BatchNormFixture& c = GetParam();
    const std::string n = c.name;
    Tensor movingMean = fx(n + "_mm");
    Tensor movingVar = fx(n + "_mv");
    const auto out = invokeIn("BatchNorm", c.attrs,
        { fx(n + "_x"), fx(n + "_gamma"), fx(n + "_beta"), movingMean, movingVar }, KernelKind::Dnnl, c.training);
    EXPECT_TRUE(test::tensorsNear(out[0], fx(n + "_out"), 1e-5f, 1e-4f)) << "output";
    EXPECT_TRUE(test::tensorsNear(out[1], fx(n + "_mean"), 1e-5f, 1e-4f)) << "mean";
    EXPECT_TRUE(test::tensorsNear(out[2], fx(n + "_invstd"), 1e-5f, 1e-4f)) << "var (inverse std)";
    EXPECT_TRUE(test::tensorsNear(movingMean, fx(n + "_new_mm"), 1e-6f, 1e-5f)) << "moving_mean";
    EXPECT_TRUE(test::tensorsNear(movingVar, fx(n + "_new_mv"), 1e-6f, 1e-5f)) << "moving_var";
}

INSTANTIATE_TEST_SUITE_P(BatchNormFixtures, BatchNormFixtureTest,
    ::testing::Values(BatchNormFixture { "bn_infer", {}, false },
        BatchNormFixture { "bn_infer_gamma", { { "fix_gamma", "False" } }, false },
        BatchNormFixture { "bn_infer_2d", { { "fix_gamma", "False" }, { "eps", "1e-5" } }, false },
        // use_global_stats: moving statistics even in training, and no update.
        BatchNormFixture { "bn_infer_gamma", { { "fix_gamma", "False" }, { "use_global_stats", "True" } }, true },
        BatchNormFixture { "bn_infer_axis2", { { "fix_gamma", "False" }, { "axis", "2" } }, false },
        BatchNormFixture { "bn_train", { { "fix_gamma", "False" } }, true },
        BatchNormFixture { "bn_train_fixgamma", { { "eps", "0.002" }, { "momentum", "0.8" } }, true },
        BatchNormFixture {
            "bn_train_lastaxis", { { "fix_gamma", "False" }, { "axis", "-1" }, { "output_mean_var", "True" } }, true }),
    [](const ::testing::TestParamInfo<BatchNormFixture>& info) {
        return std::string(info.param.name) + (info.param.training ? "_training" : "_inference");
    });

TEST(BatchNormOp, TrainingTwiceCompoundsTheMovingAverage)
{
    // Two training steps on the same batch: moving = m^2 * moving0 + (1 - m^2) * batch.
    Tensor movingMean = fx("bn_train_mm").copy();
    Tensor movingVar = fx("bn_train_mv").copy();
    const std::vector<Tensor> in { fx("bn_train_x"), fx("bn_train_gamma"), fx("bn_train_beta"), movingMean, movingVar };
    invokeIn("BatchNorm", { { "fix_gamma", "False" } }, in, KernelKind::Reference, true);
    invokeIn("BatchNorm", { { "fix_gamma", "False" } }, in, KernelKind::Reference, true);
    const Tensor mm0 = fx("bn_train_mm");
    const Tensor once = fx("bn_train_new_mm");
    for (int64_t c = 0; c < mm0.size(); ++c) {
        const float batch = (once.at(c) - 0.9f * mm0.at(c)) / 0.1f;
        EXPECT_NEAR(movingMean.at(c), 0.81f * mm0.at(c) + 0.19f * batch, 1e-5f);
    }
}

TEST(BatchNormOp, FixGammaIgnoresGammaAndLeavesItUntouched)
{
    Tensor gamma = Tensor::full(Shape({ 3 }), 5.0f);
    const auto out = invokeIn("BatchNorm", {},
        { fx("bn_infer_x"), gamma, fx("bn_infer_beta"), fx("bn_infer_mm"), fx("bn_infer_mv") }, KernelKind::Reference,
        false);
    EXPECT_TRUE(test::tensorsNear(out[0], fx("bn_infer_out")));
    EXPECT_EQ(gamma.at(0), 5.0f);
}

TEST(BatchNormOp, InfersParameterShapesFromTheChannelAxis)
{
    std::vector<Shape> in { Shape({ 2, 3, 4, 5 }), Shape(), Shape(), Shape(), Shape() };
    auto out = inferOpShapes("BatchNorm", {}, in);
    for (int i = 1; i < 5; ++i)
        EXPECT_EQ(in[static_cast<size_t>(i)], Shape({ 3 }));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0], Shape({ 2, 3, 4, 5 }));
    EXPECT_EQ(out[1], Shape({ 3 }));
    EXPECT_EQ(out[2], Shape({ 3 }));
    std::vector<Shape> last { Shape({ 2, 3, 4, 5 }), Shape(), Shape(), Shape(), Shape() };
    inferOpShapes("BatchNorm", { { "axis", "-1" } }, last);
    EXPECT_EQ(last[1], Shape({ 5 }));
    EXPECT_EQ(last[4], Shape({ 5 }));
    // An unknown channel dimension is completed from a known parameter.
    std::vector<Shape> partial { Shape({ 2, 0, 4 }), Shape(), Shape({ 6 }), Shape(), Shape() };
    out = inferOpShapes("BatchNorm", {}, partial);
    EXPECT_EQ(partial[0], Shape({ 2, 6, 4 }));
    EXPECT_EQ(partial[1], Shape({ 6 }));
    EXPECT_EQ(out[0], Shape({ 2, 6, 4 }));
    EXPECT_EQ(out[2], Shape({ 6 }));
}

TEST(BatchNormOp, ShapeErrorsNameBothShapes)
{
    const std::string gamma
        = shapeErrorOf("BatchNorm", {}, { Shape({ 2, 3, 4, 5 }), Shape({ 4 }), Shape(), Shape(), Shape() });
    EXPECT_NE(gamma.find("gamma"), std::string::npos) << gamma;
    EXPECT_NE(gamma.find("(3,)"), std::string::npos) << gamma;
    EXPECT_NE(gamma.find("(4,)"), std::string::npos) << gamma;
    const std::string var
        = shapeErrorOf("BatchNorm", {}, { Shape({ 2, 3, 4, 5 }), Shape(), Shape(), Shape(), Shape({ 3, 1 }) });
    EXPECT_NE(var.find("moving_var"), std::string::npos) << var;
    EXPECT_NE(var.find("(3, 1)"), std::string::npos) << var;
    const std::string axis
        = shapeErrorOf("BatchNorm", { { "axis", "4" } }, { Shape({ 2, 3, 4, 5 }), Shape(), Shape(), Shape(), Shape() });
    EXPECT_NE(axis.find("(2, 3, 4, 5)"), std::string::npos) << axis;
    EXPECT_NE(axis.find("'axis'"), std::string::npos) << axis;
}

TEST(BatchNormOp, BadAttributesNameTheAttribute)
{
    EXPECT_NE(attributeErrorOf("BatchNorm", { { "eps", "abc" } }).find("'eps'"), std::string::npos);
    EXPECT_NE(attributeErrorOf("BatchNorm", { { "axis", "abc" } }).find("'axis'"), std::string::npos);
    EXPECT_NE(attributeErrorOf("BatchNorm", { { "fix_gamma", "maybe" } }).find("'fix_gamma'"), std::string::npos);
    EXPECT_NE(attributeErrorOf("BatchNorm", { { "momentum", "x" } }).find("'momentum'"), std::string::npos);
    EXPECT_NE(
        attributeErrorOf("BatchNorm", { { "min_calib_range", "low" } }).find("'min_calib_range'"), std::string::npos);
    // Ignored attributes are accepted in MXNet's spelling.
    EXPECT_EQ(
        attributeErrorOf("BatchNorm", { { "cudnn_off", "True" }, { "min_calib_range", "None" } }), "no AttributeError");
}

TEST(BatchNormOp, SlotNamesAndHiddenOutputsAreMXNets)
{
    const OpDef& def = OpRegistry::instance().get("BatchNorm");
    ParamsPtr p = def.parse({});
    EXPECT_EQ(
        def.inputSlotNames(*p), (std::vector<std::string> { "data", "gamma", "beta", "moving_mean", "moving_var" }));
    EXPECT_EQ(def.outputSlotNames(*p), (std::vector<std::string> { "output", "mean", "var" }));
    EXPECT_EQ(def.visibleOutputs(*p), 1);
    EXPECT_EQ(def.visibleOutputs(*def.parse({ { "output_mean_var", "True" } })), 3);
    ASSERT_TRUE(def.auxInputs);
    EXPECT_EQ(def.auxInputs(*p), (std::vector<int> { 3, 4 }));
    EXPECT_EQ(&OpRegistry::instance().get("_npx_batch_norm"), &def);
}

// oneDNN against the reference kernel over shapes, axes, flags and modes.
struct BatchNormConfig {
    Shape data;
    int axis;
    bool fixGamma;
    bool useGlobalStats;
    bool training;
};

class BatchNormDnnlTest : public ::testing::TestWithParam<BatchNormConfig> { };

TEST_P(BatchNormDnnlTest, MatchesReference)
{
    const BatchNormConfig& c = GetParam();
    const AttrMap attrs { { "axis", std::to_string(c.axis) }, { "fix_gamma", c.fixGamma ? "True" : "False" },
        { "use_global_stats", c.useGlobalStats ? "True" : "False" }, { "momentum", "0.75" }, { "eps", "1e-4" } };
    const int ax = c.axis < 0 ? c.axis + c.data.ndim() : c.axis;
    const Shape channel({ c.data[ax] });
    Generator gen(7);
    const Tensor x = Tensor::normal(c.data, 1.0f, 3.0f, &gen);
    const Tensor gamma = Tensor::uniform(channel, 0.5f, 2.0f, &gen);
    const Tensor beta = Tensor::normal(channel, 0.0f, 1.0f, &gen);
    const Tensor mm = Tensor::normal(channel, 0.0f, 1.0f, &gen);
    const Tensor mv = Tensor::uniform(channel, 0.5f, 2.0f, &gen);

    Tensor refMm = mm.copy(), refMv = mv.copy(), dnnlMm = mm.copy(), dnnlMv = mv.copy();
    const auto ref = invokeIn("BatchNorm", attrs, { x, gamma, beta, refMm, refMv }, KernelKind::Reference, c.training);
    const auto dnn = invokeIn("BatchNorm", attrs, { x, gamma, beta, dnnlMm, dnnlMv }, KernelKind::Dnnl, c.training);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(test::tensorsNear(dnn[i], ref[i], 1e-4f, 1e-4f)) << "output " << i;
    EXPECT_TRUE(test::tensorsNear(dnnlMm, refMm, 1e-5f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(dnnlMv, refMv, 1e-5f, 1e-4f));
    if (c.training && !c.useGlobalStats)
        EXPECT_FALSE(test::tensorsNear(refMm, mm)) << "training must move the moving mean";
    else
        EXPECT_TRUE(test::tensorsNear(refMm, mm, 0.0f, 0.0f));

    std::vector<Shape> inShapes { c.data, Shape(), Shape(), Shape(), Shape() };
    EXPECT_EQ(backendOf("BatchNorm", attrs, inShapes, KernelKind::Dnnl), std::string("dnnl"));
}

std::vector<BatchNormConfig> batchNormConfigs()
{
    std::vector<BatchNormConfig> out;
    const std::vector<std::pair<Shape, int>> shapes { { Shape({ 2, 3, 4, 5 }), 1 }, { Shape({ 16, 8 }), 1 },
        { Shape({ 2, 4, 3, 5, 6 }), 1 }, { Shape({ 4, 6, 5 }), -1 }, { Shape({ 3, 4, 5, 6 }), 2 },
        { Shape({ 2, 32, 9, 9 }), 1 }, { Shape({ 5, 7 }), 0 } };
    for (const auto& [shape, axis] : shapes)
        for (bool fixGamma : { false, true })
            for (bool global : { false, true })
                for (bool training : { false, true })
                    out.push_back({ shape, axis, fixGamma, global, training });
    return out;
}

INSTANTIATE_TEST_SUITE_P(BatchNormConfigs, BatchNormDnnlTest, ::testing::ValuesIn(batchNormConfigs()),
    [](const ::testing::TestParamInfo<BatchNormConfig>& info) {
        const BatchNormConfig& c = info.param;
        return dimsName(c.data) + "_" + axisName(c.axis) + (c.fixGamma ? "_fixgamma" : "_gamma")
            + (c.useGlobalStats ? "_global" : "_batch") + (c.training ? "_training" : "_inference");
    });

TEST(BatchNormOp, AutoPicksDnnlWhereItPays)
{
    std::vector<Shape> tiny { Shape({ 2, 3 }), Shape(), Shape(), Shape(), Shape() };
    EXPECT_EQ(backendOf("BatchNorm", {}, tiny, KernelKind::Auto), std::string("reference"));
    std::vector<Shape> features { Shape({ 512, 256 }), Shape(), Shape(), Shape(), Shape() };
    EXPECT_EQ(backendOf("BatchNorm", {}, features, KernelKind::Auto), std::string("dnnl"));
    std::vector<Shape> channelLast { Shape({ 8, 16, 16, 64 }), Shape(), Shape(), Shape(), Shape() };
    EXPECT_EQ(backendOf("BatchNorm", { { "axis", "-1" } }, channelLast, KernelKind::Auto), std::string("dnnl"));
    // Plain NCHW: oneDNN's generic kernel loses to the Eigen one; forcing it still works.
    std::vector<Shape> nchw { Shape({ 8, 64, 16, 16 }), Shape(), Shape(), Shape(), Shape() };
    EXPECT_EQ(backendOf("BatchNorm", {}, nchw, KernelKind::Auto), std::string("reference"));
    EXPECT_EQ(backendOf("BatchNorm", {}, nchw, KernelKind::Dnnl), std::string("dnnl"));
}

// ---------------------------------------------------------------------------------------------
// LayerNorm

struct LayerNormFixture {
    const char* name;
    AttrMap attrs;
};

class LayerNormFixtureTest : public ::testing::TestWithParam<LayerNormFixture> { };

TEST_P(LayerNormFixtureTest, ReferenceAndDnnlMatchTorch)
{
    const LayerNormFixture& c = GetParam();
    const std::string n = c.name;
    for (KernelKind kind : { KernelKind::Reference, KernelKind::Dnnl }) {
        const auto out
            = invokeIn("LayerNorm", c.attrs, { fx(n + "_x"), fx(n + "_gamma"), fx(n + "_beta") }, kind, false);
        ASSERT_EQ(out.size(), 3u);
        EXPECT_TRUE(test::tensorsNear(out[0], fx(n + "_out"), 1e-5f, 1e-4f)) << "output, kind " << int(kind);
        EXPECT_TRUE(test::tensorsNear(out[1], fx(n + "_mean"), 1e-5f, 1e-4f)) << "mean, kind " << int(kind);
        EXPECT_TRUE(test::tensorsNear(out[2], fx(n + "_std"), 1e-5f, 1e-4f)) << "std, kind " << int(kind);
    }
}

INSTANTIATE_TEST_SUITE_P(LayerNormFixtures, LayerNormFixtureTest,
    ::testing::Values(LayerNormFixture { "ln_last", {} }, LayerNormFixture { "ln_axis1", { { "axis", "1" } } },
        LayerNormFixture { "ln_eps", { { "axis", "1" }, { "eps", "0.01" }, { "output_mean_var", "True" } } },
        LayerNormFixture { "ln_axis0", { { "axis", "-2" } } }),
    [](const ::testing::TestParamInfo<LayerNormFixture>& info) { return std::string(info.param.name); });

TEST(LayerNormOp, InfersShapes)
{
    std::vector<Shape> in { Shape({ 2, 4, 5 }), Shape(), Shape() };
    auto out = inferOpShapes("LayerNorm", { { "axis", "1" } }, in);
    EXPECT_EQ(in[1], Shape({ 4 }));
    EXPECT_EQ(in[2], Shape({ 4 }));
    EXPECT_EQ(out[0], Shape({ 2, 4, 5 }));
    EXPECT_EQ(out[1], Shape({ 2, 1, 5 }));
    EXPECT_EQ(out[2], Shape({ 2, 1, 5 }));
    std::vector<Shape> last { Shape({ 2, 4, 5 }), Shape(), Shape() };
    out = inferOpShapes("LayerNorm", {}, last);
    EXPECT_EQ(last[1], Shape({ 5 }));
    EXPECT_EQ(out[1], Shape({ 2, 4, 1 }));
}

TEST(LayerNormOp, ShapeErrorsNameBothShapes)
{
    const std::string beta = shapeErrorOf("LayerNorm", {}, { Shape({ 2, 4, 5 }), Shape({ 5 }), Shape({ 4 }) });
    EXPECT_NE(beta.find("beta"), std::string::npos) << beta;
    EXPECT_NE(beta.find("(5,)"), std::string::npos) << beta;
    EXPECT_NE(beta.find("(4,)"), std::string::npos) << beta;
    const std::string axis = shapeErrorOf("LayerNorm", { { "axis", "-4" } }, { Shape({ 2, 4, 5 }), Shape(), Shape() });
    EXPECT_NE(axis.find("(2, 4, 5)"), std::string::npos) << axis;
}

TEST(LayerNormOp, BadAttributesNameTheAttribute)
{
    EXPECT_NE(attributeErrorOf("LayerNorm", { { "axis", "abc" } }).find("'axis'"), std::string::npos);
    EXPECT_NE(attributeErrorOf("LayerNorm", { { "eps", "tiny" } }).find("'eps'"), std::string::npos);
    EXPECT_NE(
        attributeErrorOf("LayerNorm", { { "output_mean_var", "2" } }).find("'output_mean_var'"), std::string::npos);
}

TEST(LayerNormOp, SlotNamesAreMXNets)
{
    const OpDef& def = OpRegistry::instance().get("LayerNorm");
    ParamsPtr p = def.parse({});
    EXPECT_EQ(def.inputSlotNames(*p), (std::vector<std::string> { "data", "gamma", "beta" }));
    EXPECT_EQ(def.outputSlotNames(*p), (std::vector<std::string> { "output", "mean", "std" }));
    EXPECT_EQ(def.visibleOutputs(*p), 1);
    EXPECT_EQ(def.visibleOutputs(*def.parse({ { "output_mean_var", "1" } })), 3);
    EXPECT_EQ(&OpRegistry::instance().get("_npx_layer_norm"), &def);
}

struct LayerNormConfig {
    Shape data;
    int axis;
};

class LayerNormDnnlTest : public ::testing::TestWithParam<LayerNormConfig> { };

TEST_P(LayerNormDnnlTest, MatchesReference)
{
    const LayerNormConfig& c = GetParam();
    const AttrMap attrs { { "axis", std::to_string(c.axis) }, { "eps", "1e-4" } };
    const int ax = c.axis < 0 ? c.axis + c.data.ndim() : c.axis;
    const Shape channel({ c.data[ax] });
    Generator gen(11);
    const Tensor x = Tensor::normal(c.data, -1.0f, 2.0f, &gen);
    const Tensor gamma = Tensor::uniform(channel, 0.5f, 2.0f, &gen);
    const Tensor beta = Tensor::normal(channel, 0.0f, 1.0f, &gen);
    const auto ref = invokeIn("LayerNorm", attrs, { x, gamma, beta }, KernelKind::Reference, false);
    const auto dnn = invokeIn("LayerNorm", attrs, { x, gamma, beta }, KernelKind::Dnnl, false);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(test::tensorsNear(dnn[i], ref[i], 1e-4f, 1e-4f)) << "output " << i;
    std::vector<Shape> inShapes { c.data, Shape(), Shape() };
    // oneDNN normalises over the last axis only; other axes fall back to the reference kernel.
    const bool last = ax == c.data.ndim() - 1;
    EXPECT_EQ(backendOf("LayerNorm", attrs, inShapes, KernelKind::Dnnl), std::string(last ? "dnnl" : "reference"));
}

INSTANTIATE_TEST_SUITE_P(LayerNormConfigs, LayerNormDnnlTest,
    ::testing::Values(LayerNormConfig { Shape({ 2, 3, 8 }), -1 }, LayerNormConfig { Shape({ 16, 64 }), 1 },
        LayerNormConfig { Shape({ 2, 3, 4, 33 }), 3 }, LayerNormConfig { Shape({ 10 }), 0 },
        LayerNormConfig { Shape({ 4, 2, 3, 2, 768 }), -1 }, LayerNormConfig { Shape({ 3, 7, 5 }), 1 }),
    [](const ::testing::TestParamInfo<LayerNormConfig>& info) {
        return dimsName(info.param.data) + "_" + axisName(info.param.axis);
    });

} // namespace
