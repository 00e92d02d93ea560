#include "common/op_test_util.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/nn/channels_last.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace opscope;

namespace {

Tensor convFixture(const std::string& name)
{
    return readNpy(test::fixture("conv/" + name + ".npy"));
}

std::unique_ptr<Kernel> convKernel(const AttrMap& attrs, std::vector<Shape> in, KernelKind kind)
{
    return test::opKernel("Convolution", attrs, std::move(in), kind);
}

std::string convShapeError(const AttrMap& attrs, std::vector<Shape> in)
{
    try {
        inferOpShapes("Convolution", attrs, in);
    } catch (const ShapeError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ShapeError";
    return {};
}

std::string convAttributeError(const AttrMap& attrs)
{
    try {
        OpRegistry::instance().get("Convolution").parse(attrs);
    } catch (const AttributeError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no AttributeError";
    return {};
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

// Expected values from torch.nn.functional.conv1d/conv2d (tests/fixtures/make_fc_conv_fixtures.py).
TEST(Convolution, MatchesPyTorchForEveryAttribute)
{
    struct Case {
        const char* name;
        AttrMap attrs;
        bool bias;
    };
    const std::vector<Case> cases = {
        { "c2d_basic", { { "kernel", "(3, 3)" }, { "num_filter", "4" } }, true },
        { "c2d_stride_pad",
            { { "kernel", "(3, 2)" }, { "stride", "(2, 3)" }, { "pad", "(1, 2)" }, { "num_filter", "3" },
                { "layout", "NCHW" } },
            true },
        { "c2d_dilate", { { "kernel", "(3, 3)" }, { "dilate", "(2, 3)" }, { "pad", "(2, 1)" }, { "num_filter", "3" } },
            true },
        { "c2d_group",
            { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "6" }, { "num_group", "2" },
                { "workspace", "1024" }, { "cudnn_tune", "None" }, { "cudnn_off", "False" } },
            true },
        { "c2d_depthwise_no_bias",
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "num_filter", "3" },
                { "num_group", "3" }, { "no_bias", "True" } },
            false },
        { "c2d_1x1", { { "kernel", "(1, 1)" }, { "num_filter", "3" }, { "layout", "None" } }, true },
        { "c1d_basic", { { "kernel", "(3,)" }, { "num_filter", "4" } }, true },
        { "c1d_all",
            { { "kernel", "3" }, { "stride", "(2,)" }, { "pad", "(2,)" }, { "dilate", "(2,)" }, { "num_filter", "6" },
                { "num_group", "2" }, { "layout", "NCW" } },
            true },
        { "c1d_1x1_no_bias", { { "kernel", "(1,)" }, { "num_filter", "3" }, { "no_bias", "True" } }, false },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const std::string n = c.name;
        std::vector<Tensor> inputs = { convFixture(n + "_data"), convFixture(n + "_weight") };
        if (c.bias) inputs.push_back(convFixture(n + "_bias"));
        const Tensor expected = convFixture(n + "_out");
        for (KernelKind kind : { KernelKind::Reference, KernelKind::Dnnl }) {
            const std::vector<Tensor> out = invokeOp("Convolution", c.attrs, inputs, kind);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(test::tensorsNear(out[0], expected, 1e-5f, 1e-5f));
        }
    }
}

TEST(Convolution, InfersWeightBiasAndOutputShapes)
{
    // MXNet model files carry weights of shape (10, 0, 5, 5) until the data is known.
    std::vector<Shape> in = { Shape({ 2, 3, 28, 28 }), Shape({ 10, 0, 5, 5 }), Shape() };
    std::vector<Shape> out = inferOpShapes("Convolution", { { "kernel", "(5, 5)" }, { "num_filter", "10" } }, in);
    EXPECT_EQ(in[1], Shape({ 10, 3, 5, 5 }));
    EXPECT_EQ(in[2], Shape({ 10 }));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], Shape({ 2, 10, 24, 24 }));

    // floor((x + 2p - d(k-1) - 1) / s) + 1 per axis, with groups dividing the weight's channels.
    in = { Shape({ 1, 8, 17, 10 }), Shape(), Shape() };
    out = inferOpShapes("Convolution",
        { { "kernel", "(3, 4)" }, { "stride", "(2, 3)" }, { "dilate", "(2, 1)" }, { "pad", "(1, 2)" },
            { "num_filter", "6" }, { "num_group", "2" } },
        in);
    EXPECT_EQ(in[1], Shape({ 6, 4, 3, 4 }));
    EXPECT_EQ(out[0], Shape({ 1, 6, 8, 4 }));

    in = { Shape({ 4, 3, 100 }), Shape() };
    out = inferOpShapes("Convolution",
        { { "kernel", "(7,)" }, { "stride", "(3,)" }, { "num_filter", "5" }, { "no_bias", "True" } }, in);
    EXPECT_EQ(in[1], Shape({ 5, 3, 7 }));
    EXPECT_EQ(out[0], Shape({ 4, 5, 32 }));

    // Unknown batch and spatial sizes stay unknown.
    in = { Shape({ 0, 3, 0, 9 }), Shape(), Shape() };
    out = inferOpShapes("Convolution", { { "kernel", "(3, 3)" }, { "num_filter", "2" } }, in);
    EXPECT_EQ(out[0], Shape({ 0, 2, 0, 7 }));
}

TEST(Convolution, WrongInputShapesNameBothShapes)
{
    const AttrMap attrs = { { "kernel", "(5, 5)" }, { "num_filter", "10" } };
    std::string msg = convShapeError(attrs, { Shape({ 2, 3, 28, 28 }), Shape({ 10, 4, 5, 5 }), Shape() });
    EXPECT_TRUE(contains(msg, "weight")) << msg;
    EXPECT_TRUE(contains(msg, "(10, 3, 5, 5)")) << msg;
    EXPECT_TRUE(contains(msg, "(10, 4, 5, 5)")) << msg;

    msg = convShapeError(attrs, { Shape({ 2, 3, 28, 28 }), Shape(), Shape({ 5 }) });
    EXPECT_TRUE(contains(msg, "bias")) << msg;
    EXPECT_TRUE(contains(msg, "(10,)")) << msg;
    EXPECT_TRUE(contains(msg, "(5,)")) << msg;

    msg = convShapeError(attrs, { Shape({ 2, 3, 28 }), Shape(), Shape() });
    EXPECT_TRUE(contains(msg, "data")) << msg;
    EXPECT_TRUE(contains(msg, "(2, 3, 28)")) << msg;

    msg = convShapeError(attrs, { Shape({ 1, 3, 4, 28 }), Shape(), Shape() });
    EXPECT_TRUE(contains(msg, "(1, 3, 4, 28)")) << msg;
    EXPECT_TRUE(contains(msg, "(5, 5)")) << msg;

    msg = convShapeError({ { "kernel", "(3, 3)" }, { "num_filter", "4" }, { "num_group", "2" } },
        { Shape({ 1, 3, 8, 8 }), Shape(), Shape() });
    EXPECT_TRUE(contains(msg, "(1, 3, 8, 8)")) << msg;
    EXPECT_TRUE(contains(msg, "num_group")) << msg;
}

TEST(Convolution, BadAttributesNameTheAttribute)
{
    EXPECT_TRUE(contains(convAttributeError({ { "kernel", "abc" }, { "num_filter", "2" } }), "kernel"));
    EXPECT_TRUE(contains(convAttributeError({ { "num_filter", "2" } }), "kernel"));
    EXPECT_TRUE(contains(convAttributeError({ { "kernel", "(3, 3, 3)" }, { "num_filter", "2" } }), "kernel"));
    EXPECT_TRUE(contains(convAttributeError({ { "kernel", "(3, 0)" }, { "num_filter", "2" } }), "kernel"));
    EXPECT_TRUE(contains(convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "abc" } }), "num_filter"));
    EXPECT_TRUE(contains(convAttributeError({ { "kernel", "(3, 3)" } }), "num_filter"));
    EXPECT_TRUE(contains(
        convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "stride", "(2,)" } }), "stride"));
    EXPECT_TRUE(contains(
        convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "stride", "(0, 1)" } }), "stride"));
    EXPECT_TRUE(
        contains(convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "dilate", "x" } }), "dilate"));
    EXPECT_TRUE(
        contains(convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "pad", "(-1, 0)" } }), "pad"));
    EXPECT_TRUE(contains(
        convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "3" }, { "num_group", "2" } }), "num_group"));
    EXPECT_TRUE(contains(
        convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "layout", "NHWC" } }), "layout"));
    EXPECT_TRUE(
        contains(convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "layout", "NCW" } }), "layout"));
    EXPECT_TRUE(
        contains(convAttributeError({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "no_bias", "2" } }), "no_bias"));
}

TEST(Convolution, SlotNamesAndAliasesAreMXNets)
{
    const OpRegistry& reg = OpRegistry::instance();
    const OpDef& def = reg.get("Convolution");
    const ParamsPtr withBias = def.parse({ { "kernel", "(3, 3)" }, { "num_filter", "2" } });
    const ParamsPtr noBias = def.parse({ { "kernel", "(3, 3)" }, { "num_filter", "2" }, { "no_bias", "True" } });
    EXPECT_EQ(def.inputSlotNames(*withBias), (std::vector<std::string> { "data", "weight", "bias" }));
    EXPECT_EQ(def.inputSlotNames(*noBias), (std::vector<std::string> { "data", "weight" }));
    EXPECT_EQ(def.outputSlotNames(*withBias), (std::vector<std::string> { "output" }));
    EXPECT_EQ(def.numInputs(*noBias), 2);
    EXPECT_EQ(reg.find("_npx_convolution"), &def);
}

TEST(Convolution, TinyConvolutionsStayOnEigen)
{
    const AttrMap attrs = { { "kernel", "(3, 3)" }, { "num_filter", "2" } };
    EXPECT_STREQ(
        convKernel(attrs, { Shape({ 1, 1, 5, 5 }), Shape(), Shape() }, KernelKind::Auto)->backend(), "reference");
    EXPECT_STREQ(
        convKernel(attrs, { Shape({ 1, 16, 32, 32 }), Shape(), Shape() }, KernelKind::Auto)->backend(), "dnnl");
}

// The oneDNN kernel keeps reordered weights between runs: new weight values (or new data) in the
// same buffers must still be used.
TEST(Convolution, DnnlKernelSeesChangedWeightsAndData)
{
    const AttrMap attrs = { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "32" } };
    const std::vector<Shape> inShapes = { Shape({ 1, 16, 12, 12 }), Shape({ 32, 16, 3, 3 }), Shape({ 32 }) };
    auto dnnl = convKernel(attrs, inShapes, KernelKind::Dnnl);
    auto ref = convKernel(attrs, inShapes, KernelKind::Reference);
    ASSERT_STREQ(dnnl->backend(), "dnnl");
    Generator gen(5);
    std::vector<Tensor> inputs;
    for (const Shape& s : inShapes)
        inputs.push_back(Tensor::uniform(s, -1, 1, &gen));
    const Shape outShape({ 1, 32, 12, 12 });
    Tensor a(outShape), b(outShape);
    const std::vector<const Tensor*> in = { &inputs[0], &inputs[1], &inputs[2] };
    RunContext ctx;
    for (int round = 0; round < 4; ++round) {
        SCOPED_TRACE(round);
        if (round == 1) inputs[1].at(5) += 1.0f; // one weight changes
        if (round == 2) inputs[1].copyFrom(Tensor::uniform(inShapes[1], -1, 1, &gen).view());
        if (round == 3) {
            inputs[0].copyFrom(Tensor::uniform(inShapes[0], -1, 1, &gen).view());
            inputs[2].fill(0.5f);
        }
        Tensor* outA[] = { &a };
        Tensor* outB[] = { &b };
        dnnl->run(in, outA, ctx);
        ref->run(in, outB, ctx);
        EXPECT_TRUE(test::tensorsNear(a, b, 1e-4f, 1e-4f));
    }
}

// oneDNN kernel against the reference kernel.
struct ConvDnnlCase {
    Shape data;
    AttrMap attrs;
};

class ConvolutionDnnl : public ::testing::TestWithParam<ConvDnnlCase> { };

TEST_P(ConvolutionDnnl, MatchesReference)
{
    const ConvDnnlCase& c = GetParam();
    const OpDef& def = OpRegistry::instance().get("Convolution");
    const ParamsPtr params = def.parse(c.attrs);
    std::vector<Shape> shapes(static_cast<size_t>(def.numInputs(*params)));
    shapes[0] = c.data;
    const std::vector<Shape> outShapes = inferOpShapes("Convolution", c.attrs, shapes);
    EXPECT_EQ(def.makeKernel(*params, shapes, outShapes, KernelKind::Dnnl)->backend(), std::string("dnnl"));

    Generator gen(static_cast<uint64_t>(c.data.size()));
    std::vector<Tensor> inputs;
    for (const Shape& s : shapes)
        inputs.push_back(Tensor::uniform(s, -1, 1, &gen));
    const Tensor ref = invokeOp("Convolution", c.attrs, inputs, KernelKind::Reference)[0];
    const Tensor dnnl = invokeOp("Convolution", c.attrs, inputs, KernelKind::Dnnl)[0];
    EXPECT_EQ(ref.shape(), outShapes[0]);
    EXPECT_TRUE(test::tensorsNear(dnnl, ref, 2e-4f, 1e-4f));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvolutionDnnl,
    ::testing::Values(
        // ResNet-18 stem and blocks, spatially reduced
        ConvDnnlCase { Shape({ 1, 3, 32, 32 }),
            { { "kernel", "(7, 7)" }, { "stride", "(2, 2)" }, { "pad", "(3, 3)" }, { "num_filter", "64" },
                { "no_bias", "True" } } },
        ConvDnnlCase {
            Shape({ 2, 64, 14, 14 }), { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "64" } } },
        ConvDnnlCase { Shape({ 1, 64, 14, 14 }),
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "num_filter", "128" } } },
        ConvDnnlCase { Shape({ 1, 64, 14, 14 }),
            { { "kernel", "(1, 1)" }, { "stride", "(2, 2)" }, { "num_filter", "128" }, { "no_bias", "True" } } },
        ConvDnnlCase { Shape({ 1, 32, 9, 9 }), { { "kernel", "(1, 1)" }, { "num_filter", "48" } } },
        // channels that do not fill a SIMD block, odd sizes, rectangular kernels
        ConvDnnlCase { Shape({ 3, 5, 11, 13 }),
            { { "kernel", "(3, 2)" }, { "stride", "(2, 1)" }, { "pad", "(0, 1)" }, { "num_filter", "7" } } },
        ConvDnnlCase { Shape({ 1, 6, 15, 15 }),
            { { "kernel", "(3, 3)" }, { "dilate", "(2, 2)" }, { "pad", "(2, 2)" }, { "num_filter", "10" } } },
        // groups: grouped and depthwise
        ConvDnnlCase { Shape({ 2, 16, 10, 10 }),
            { { "kernel", "(3, 3)" }, { "pad", "(1, 1)" }, { "num_filter", "32" }, { "num_group", "4" } } },
        ConvDnnlCase { Shape({ 1, 32, 12, 12 }),
            { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" }, { "num_filter", "32" },
                { "num_group", "32" }, { "no_bias", "True" } } },
        // 1-D
        ConvDnnlCase { Shape({ 2, 8, 50 }), { { "kernel", "(5,)" }, { "pad", "(2,)" }, { "num_filter", "16" } } },
        ConvDnnlCase { Shape({ 1, 12, 40 }),
            { { "kernel", "(3,)" }, { "stride", "(2,)" }, { "dilate", "(3,)" }, { "pad", "(1,)" },
                { "num_filter", "6" }, { "num_group", "3" }, { "no_bias", "True" } } },
        ConvDnnlCase { Shape({ 3, 4, 9 }), { { "kernel", "(1,)" }, { "num_filter", "5" } } }));

// The oneDNN kernel's own NCHW <-> NHWC transposition, on sizes that are not multiples of its
// SIMD blocks and tiles.
TEST(Convolution, ChannelsLastTranspositionsAreExact)
{
    for (const auto& [batch, channels, positions] : std::vector<std::tuple<int64_t, int64_t, int64_t>> {
             { 1, 3, 50 }, { 2, 13, 37 }, { 3, 64, 49 }, { 1, 40, 33 }, { 2, 1, 9 } }) {
        SCOPED_TRACE(std::to_string(channels) + " x " + std::to_string(positions));
        const int64_t size = batch * channels * positions;
        std::vector<float> first(static_cast<size_t>(size)), last(first.size()), back(first.size());
        for (int64_t i = 0; i < size; ++i)
            first[static_cast<size_t>(i)] = static_cast<float>(i);
        toChannelsLast(first.data(), last.data(), batch, channels, positions);
        for (int64_t n = 0; n < batch; ++n)
            for (int64_t c = 0; c < channels; ++c)
                for (int64_t p = 0; p < positions; ++p)
                    ASSERT_EQ(last[static_cast<size_t>((n * positions + p) * channels + c)],
                        first[static_cast<size_t>((n * channels + c) * positions + p)]);
        toChannelsFirst(last.data(), back.data(), batch, channels, positions);
        EXPECT_EQ(back, first);
    }
}
