#include "common/op_test_util.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace opscope;

namespace {

Tensor fcFixture(const std::string& name)
{
    return readNpy(test::fixture("fc/" + name + ".npy"));
}

// The kernel makeKernel picks for these attributes and input shapes.
std::string fcBackend(const AttrMap& attrs, std::vector<Shape> in, KernelKind kind)
{
    return test::opKernel("FullyConnected", attrs, std::move(in), kind)->backend();
}

// Returns the ShapeError's message (empty, with a failure, when none is thrown).
std::string fcShapeError(const AttrMap& attrs, std::vector<Shape> in)
{
    try {
        inferOpShapes("FullyConnected", attrs, in);
    } catch (const ShapeError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ShapeError";
    return {};
}

std::string fcAttributeError(const AttrMap& attrs)
{
    try {
        OpRegistry::instance().get("FullyConnected").parse(attrs);
    } catch (const AttributeError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no AttributeError";
    return {};
}

} // namespace

// Expected values from torch.nn.functional.linear (tests/fixtures/make_fc_conv_fixtures.py).
TEST(FullyConnected, MatchesPyTorchForEveryAttribute)
{
    struct Case {
        const char* name;
        AttrMap attrs;
        bool bias;
    };
    const std::vector<Case> cases = {
        { "flatten", { { "num_hidden", "5" } }, true },
        { "no_flatten", { { "num_hidden", "5" }, { "flatten", "False" } }, true },
        { "no_bias", { { "num_hidden", "4" }, { "no_bias", "True" } }, false },
        { "flatten_4d_no_bias", { { "num_hidden", "3" }, { "no_bias", "1" }, { "flatten", "True" } }, false },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const std::string n = c.name;
        std::vector<Tensor> inputs = { fcFixture(n + "_data"), fcFixture(n + "_weight") };
        if (c.bias) inputs.push_back(fcFixture(n + "_bias"));
        const Tensor expected = fcFixture(n + "_out");
        for (KernelKind kind : { KernelKind::Reference, KernelKind::Dnnl }) {
            const std::vector<Tensor> out = invokeOp("FullyConnected", c.attrs, inputs, kind);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(test::tensorsNear(out[0], expected, 1e-5f, 1e-5f));
        }
    }
}

TEST(FullyConnected, InfersWeightBiasAndOutputShapes)
{
    std::vector<Shape> in = { Shape({ 3, 4, 5 }), Shape({ 2, 0 }), Shape() };
    std::vector<Shape> out = inferOpShapes("FullyConnected", { { "num_hidden", "2" } }, in);
    EXPECT_EQ(in[1], Shape({ 2, 20 }));
    EXPECT_EQ(in[2], Shape({ 2 }));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], Shape({ 3, 2 }));

    in = { Shape({ 3, 4, 5 }), Shape(), Shape() };
    out = inferOpShapes("FullyConnected", { { "num_hidden", "2" }, { "flatten", "False" } }, in);
    EXPECT_EQ(in[1], Shape({ 2, 5 }));
    EXPECT_EQ(out[0], Shape({ 3, 4, 2 }));

    // MXNet also accepts a (num_hidden, 1) bias.
    in = { Shape({ 3, 4 }), Shape(), Shape({ 2, 1 }) };
    out = inferOpShapes("FullyConnected", { { "num_hidden", "2" } }, in);
    EXPECT_EQ(in[2], Shape({ 2, 1 }));
    EXPECT_EQ(out[0], Shape({ 3, 2 }));

    // An unknown batch stays unknown; the weight does not depend on it.
    in = { Shape({ 0, 6 }), Shape() };
    out = inferOpShapes("FullyConnected", { { "num_hidden", "4" }, { "no_bias", "True" } }, in);
    EXPECT_EQ(in[1], Shape({ 4, 6 }));
    EXPECT_EQ(out[0], Shape({ 0, 4 }));
}

TEST(FullyConnected, WrongInputShapesNameBothShapes)
{
    std::string msg = fcShapeError({ { "num_hidden", "2" } }, { Shape({ 3, 4, 5 }), Shape({ 2, 7 }), Shape() });
    EXPECT_NE(msg.find("weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 20)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 7)"), std::string::npos) << msg;

    msg = fcShapeError({ { "num_hidden", "2" } }, { Shape({ 3, 4 }), Shape(), Shape({ 3 }) });
    EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2,)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3,)"), std::string::npos) << msg;

    msg = fcShapeError(
        { { "num_hidden", "2" }, { "flatten", "False" } }, { Shape({ 3, 4, 5 }), Shape({ 2, 20 }), Shape() });
    EXPECT_NE(msg.find("(2, 5)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 20)"), std::string::npos) << msg;

    // invokeOp reports a given tensor that contradicts the inferred shape.
    const std::vector<Tensor> bad = { Tensor::zeros(Shape({ 2, 3 })), Tensor::zeros(Shape({ 4, 2 })) };
    EXPECT_THROW(invokeOp("FullyConnected", { { "num_hidden", "4" }, { "no_bias", "True" } }, bad), ShapeError);
}

TEST(FullyConnected, BadAttributesNameTheAttribute)
{
    EXPECT_NE(fcAttributeError({ { "num_hidden", "abc" } }).find("num_hidden"), std::string::npos);
    EXPECT_NE(fcAttributeError({}).find("num_hidden"), std::string::npos);
    EXPECT_NE(fcAttributeError({ { "num_hidden", "0" } }).find("num_hidden"), std::string::npos);
    EXPECT_NE(fcAttributeError({ { "num_hidden", "2" }, { "flatten", "maybe" } }).find("flatten"), std::string::npos);
    EXPECT_NE(fcAttributeError({ { "num_hidden", "2" }, { "no_bias", "yes" } }).find("no_bias"), std::string::npos);
}

TEST(FullyConnected, SlotNamesAndAliasesAreMXNets)
{
    const OpRegistry& reg = OpRegistry::instance();
    const OpDef& def = reg.get("FullyConnected");
    const ParamsPtr withBias = def.parse({ { "num_hidden", "2" } });
    const ParamsPtr noBias = def.parse({ { "num_hidden", "2" }, { "no_bias", "True" } });
    EXPECT_EQ(def.inputSlotNames(*withBias), (std::vector<std::string> { "data", "weight", "bias" }));
    EXPECT_EQ(def.inputSlotNames(*noBias), (std::vector<std::string> { "data", "weight" }));
    EXPECT_EQ(def.outputSlotNames(*withBias), (std::vector<std::string> { "output" }));
    EXPECT_EQ(def.numInputs(*noBias), 2);
    EXPECT_EQ(def.visibleOutputs(*withBias), 1);
    EXPECT_EQ(reg.find("_npx_fully_connected"), &def);
    EXPECT_EQ(reg.find("_sparse_FullyConnected"), &def);
}

TEST(FullyConnected, TinyProductsStayOnEigen)
{
    // 2x16 -> 16 is 1 kFLOP: oneDNN's call cost would dominate.
    const AttrMap attrs = { { "num_hidden", "16" } };
    EXPECT_EQ(fcBackend(attrs, { Shape({ 2, 16 }), Shape(), Shape() }, KernelKind::Auto), "reference");
    EXPECT_EQ(fcBackend(attrs, { Shape({ 2, 16 }), Shape(), Shape() }, KernelKind::Dnnl), "dnnl");
    EXPECT_EQ(
        fcBackend({ { "num_hidden", "256" } }, { Shape({ 64, 256 }), Shape(), Shape() }, KernelKind::Auto), "dnnl");
}

// oneDNN kernel against the reference kernel.
struct FcDnnlCase {
    Shape data;
    int64_t numHidden;
    bool flatten;
    bool noBias;
};

class FullyConnectedDnnl : public ::testing::TestWithParam<FcDnnlCase> { };

TEST_P(FullyConnectedDnnl, MatchesReference)
{
    const FcDnnlCase& c = GetParam();
    const AttrMap attrs = { { "num_hidden", std::to_string(c.numHidden) }, { "flatten", c.flatten ? "True" : "False" },
        { "no_bias", c.noBias ? "True" : "False" } };
    std::vector<Shape> shapes = { c.data, Shape(), Shape() };
    if (c.noBias) shapes.pop_back();
    const std::vector<Shape> outShapes = inferOpShapes("FullyConnected", attrs, shapes);
    const OpDef& def = OpRegistry::instance().get("FullyConnected");
    EXPECT_EQ(def.makeKernel(*def.parse(attrs), shapes, outShapes, KernelKind::Dnnl)->backend(), std::string("dnnl"));

    Generator gen(static_cast<uint64_t>(c.data.size() * 31 + c.numHidden));
    std::vector<Tensor> inputs;
    for (const Shape& s : shapes)
        inputs.push_back(Tensor::uniform(s, -1, 1, &gen));
    const Tensor ref = invokeOp("FullyConnected", attrs, inputs, KernelKind::Reference)[0];
    const Tensor dnnl = invokeOp("FullyConnected", attrs, inputs, KernelKind::Dnnl)[0];
    EXPECT_EQ(ref.shape(), outShapes[0]);
    EXPECT_TRUE(test::tensorsNear(dnnl, ref, 1e-4f, 1e-4f));
}

INSTANTIATE_TEST_SUITE_P(Shapes, FullyConnectedDnnl,
    ::testing::Values(FcDnnlCase { Shape({ 1, 64 }), 64, true, false }, FcDnnlCase { Shape({ 2, 16 }), 16, true, true },
        FcDnnlCase { Shape({ 32, 3, 8, 8 }), 100, true, false }, FcDnnlCase { Shape({ 4, 5, 33 }), 17, false, false },
        FcDnnlCase { Shape({ 2, 3, 4, 7 }), 9, false, true }, FcDnnlCase { Shape({ 128, 512 }), 1000, true, false },
        FcDnnlCase { Shape({ 7 }), 3, false, false }));
