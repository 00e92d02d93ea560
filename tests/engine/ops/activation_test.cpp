#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <functional>
#include "common/op_test_util.h"
#include <gtest/gtest.h>

using namespace opscope;

namespace {

Tensor actFixture(const std::string& name)
{
    return readNpy(test::fixture("act/" + name + ".npy"));
}

using test::dnnlBackend;
using test::errorOf;

// ---- Reference kernels against PyTorch (tests/fixtures/make_pool_act_softmax_fixtures.py) ---------

struct ActFixtureCase {
    const char* op;
    AttrMap attrs;
    const char* expected;
};

std::ostream& operator<<(std::ostream& os, const ActFixtureCase& c)
{
    return os << c.expected;
}

class ActivationFixture : public ::testing::TestWithParam<ActFixtureCase> { };

TEST_P(ActivationFixture, ReferenceMatchesPyTorch)
{
    const ActFixtureCase& c = GetParam();
    const Tensor x = actFixture("x");
    const Tensor y = actFixture(c.expected);
    const std::vector<Tensor> out = invokeOp(c.op, c.attrs, { x }, KernelKind::Reference);
    EXPECT_TRUE(test::tensorsNear(out[0], y, 1e-6f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Activation, ActivationFixture,
    ::testing::Values(ActFixtureCase { "Activation", { { "act_type", "relu" } }, "relu" },
        ActFixtureCase { "Activation", { { "act_type", "sigmoid" } }, "sigmoid" },
        ActFixtureCase { "Activation", { { "act_type", "tanh" } }, "tanh" },
        ActFixtureCase { "Activation", { { "act_type", "softrelu" } }, "softrelu" },
        ActFixtureCase { "Activation", { { "act_type", "softsign" } }, "softsign" },
        ActFixtureCase { "Activation", { { "act_type", "log_sigmoid" } }, "log_sigmoid" },
        ActFixtureCase { "Activation", { { "act_type", "mish" } }, "mish" },
        ActFixtureCase { "LeakyReLU", {}, "leaky_default" },
        ActFixtureCase { "LeakyReLU", { { "act_type", "leaky" }, { "slope", "0.1" } }, "leaky_0.1" },
        ActFixtureCase { "LeakyReLU", { { "act_type", "elu" }, { "slope", "0.7" } }, "elu_0.7" },
        ActFixtureCase { "LeakyReLU", { { "act_type", "selu" } }, "selu" },
        ActFixtureCase { "LeakyReLU", { { "act_type", "gelu" } }, "gelu" },
        ActFixtureCase { "LeakyReLU", { { "act_type", "rrelu" } }, "rrelu_inference" }),
    [](const auto& info) {
        std::string n = info.param.expected;
        std::replace(n.begin(), n.end(), '.', '_');
        return n;
    });

TEST(LeakyReLUOp, PReLUTakesASlopePerChannelOrOneShared)
{
    const Tensor x = actFixture("x");
    const AttrMap prelu = { { "act_type", "prelu" } };
    const Tensor perChannel = invokeOp("LeakyReLU", prelu, { x, actFixture("prelu_gamma") }, KernelKind::Reference)[0];
    EXPECT_TRUE(test::tensorsNear(perChannel, actFixture("prelu"), 1e-6f, 1e-5f));
    const Tensor shared = Tensor::full(Shape({ 1 }), 0.3f);
    EXPECT_TRUE(test::tensorsNear(invokeOp("LeakyReLU", prelu, { x, shared }, KernelKind::Reference)[0],
        actFixture("prelu_shared"), 1e-6f, 1e-5f));
    // gamma's shape is inferred from the data's channels.
    std::vector<Shape> in = { Shape({ 3, 4, 5 }), Shape() };
    inferOpShapes("LeakyReLU", prelu, in);
    EXPECT_EQ(in[1], Shape({ 4 }));
}

TEST(LeakyReLUOp, RReLUUsesTheMeanSlopeInInferenceAndRandomSlopesInTraining)
{
    const Tensor x = actFixture("x");
    const AttrMap rrelu = { { "act_type", "rrelu" }, { "lower_bound", "0.125" }, { "upper_bound", "0.334" } };
    const std::vector<Tensor> inference = invokeOp("LeakyReLU", rrelu, { x }, KernelKind::Reference);
    ASSERT_EQ(inference.size(), 2u);
    EXPECT_TRUE(test::tensorsNear(inference[0], actFixture("rrelu_inference"), 1e-6f, 1e-5f));
    for (float m : inference[1].values())
        EXPECT_FLOAT_EQ(m, (0.125f + 0.334f) / 2);

    Generator gen(5);
    RunContext ctx;
    ctx.training = true;
    ctx.rng = &gen;
    const std::vector<Tensor> training = invokeOp("LeakyReLU", rrelu, { x }, KernelKind::Reference, &ctx);
    bool varied = false;
    for (int64_t i = 0; i < x.size(); ++i) {
        const float m = training[1].at(i);
        EXPECT_GE(m, 0.125f);
        EXPECT_LT(m, 0.334f);
        varied = varied || m != training[1].at(0);
        const float expected = x.at(i) > 0 ? x.at(i) : m * x.at(i);
        EXPECT_FLOAT_EQ(training[0].at(i), expected);
    }
    EXPECT_TRUE(varied);
}

// ---- oneDNN kernels against the reference kernels -------------------------------------------------

struct ActDnnlCase {
    const char* name;
    const char* op;
    AttrMap attrs;
    Shape shape;
    bool dnnl; // oneDNN has the algorithm
};

std::ostream& operator<<(std::ostream& os, const ActDnnlCase& c)
{
    return os << c.name;
}

class ActivationDnnl : public ::testing::TestWithParam<ActDnnlCase> { };

TEST_P(ActivationDnnl, MatchesReference)
{
    const ActDnnlCase& c = GetParam();
    Generator gen(17);
    const Tensor x = Tensor::uniform(c.shape, -8.0f, 8.0f, &gen);
    EXPECT_EQ(dnnlBackend(c.op, c.attrs, { c.shape }), std::string(c.dnnl ? "dnnl" : "reference"));
    const Tensor ref = invokeOp(c.op, c.attrs, { x }, KernelKind::Reference)[0];
    const Tensor dnn = invokeOp(c.op, c.attrs, { x }, KernelKind::Dnnl)[0];
    // oneDNN's soft_relu and logsigmoid approximations are off by up to ~1e-6 near zero.
    EXPECT_TRUE(test::tensorsNear(dnn, ref, 1e-5f, 1e-5f));
}

const Shape kLarge({ 64, 1000 });
const Shape kOdd({ 3, 7, 5 });

INSTANTIATE_TEST_SUITE_P(Activation, ActivationDnnl,
    ::testing::Values(ActDnnlCase { "relu", "Activation", { { "act_type", "relu" } }, kLarge, true },
        ActDnnlCase { "relu_odd", "Activation", { { "act_type", "relu" } }, kOdd, true },
        ActDnnlCase { "sigmoid", "Activation", { { "act_type", "sigmoid" } }, kLarge, true },
        ActDnnlCase { "tanh", "Activation", { { "act_type", "tanh" } }, kLarge, true },
        ActDnnlCase { "tanh_odd", "Activation", { { "act_type", "tanh" } }, kOdd, true },
        ActDnnlCase { "softrelu", "Activation", { { "act_type", "softrelu" } }, kLarge, true },
        ActDnnlCase { "log_sigmoid", "Activation", { { "act_type", "log_sigmoid" } }, kLarge, true },
        ActDnnlCase { "mish", "Activation", { { "act_type", "mish" } }, kLarge, true },
        ActDnnlCase { "softsign", "Activation", { { "act_type", "softsign" } }, kLarge, false },
        ActDnnlCase { "leaky", "LeakyReLU", { { "act_type", "leaky" }, { "slope", "0.2" } }, kLarge, true },
        ActDnnlCase { "elu", "LeakyReLU", { { "act_type", "elu" }, { "slope", "0.5" } }, kLarge, true },
        ActDnnlCase { "selu", "LeakyReLU", { { "act_type", "selu" } }, kLarge, true },
        ActDnnlCase { "gelu", "LeakyReLU", { { "act_type", "gelu" } }, kLarge, true },
        ActDnnlCase { "gelu_odd", "LeakyReLU", { { "act_type", "gelu" } }, kOdd, true }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ActivationOp, DnnlPaysOnlyForLargeTensors)
{
    const OpDef& def = OpRegistry::instance().get("Activation");
    const ParamsPtr p = def.parse({ { "act_type", "relu" } });
    const std::vector<Shape> small = { Shape({ 4, 16 }) }, large = { Shape({ 256, 1024 }) };
    EXPECT_FALSE(def.dnnlPays(*p, small, small));
    EXPECT_TRUE(def.dnnlPays(*p, large, large));
    EXPECT_EQ(def.makeKernel(*p, small, small, KernelKind::Auto)->backend(), std::string("reference"));
    EXPECT_EQ(def.makeKernel(*p, large, large, KernelKind::Auto)->backend(), std::string("dnnl"));
}

// ---- Shapes, attributes, slot names ---------------------------------------------------------------

TEST(LeakyReLUOp, WrongGammaShapeThrowsShapeErrorNamingBothShapes)
{
    std::string msg = errorOf<ShapeError>([] {
        std::vector<Shape> in = { Shape({ 3, 4, 5 }), Shape({ 5 }) };
        inferOpShapes("LeakyReLU", { { "act_type", "prelu" } }, in);
    });
    EXPECT_NE(msg.find("gamma"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4,)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(5,)"), std::string::npos) << msg;
    msg = errorOf<ShapeError>([] {
        invokeOp(
            "LeakyReLU", { { "act_type", "prelu" } }, { Tensor::zeros(Shape({ 6 })), Tensor::zeros(Shape({ 6 })) });
    });
    EXPECT_NE(msg.find("(6,)"), std::string::npos) << msg;
}

TEST(ActivationOp, BadAttributesThrowAttributeErrorNamingTheAttribute)
{
    auto attrError = [](const char* op, const AttrMap& attrs) {
        return errorOf<AttributeError>([&] { OpRegistry::instance().get(op).parse(attrs); });
    };
    EXPECT_NE(attrError("Activation", {}).find("'act_type'"), std::string::npos); // required
    EXPECT_NE(attrError("Activation", { { "act_type", "swish" } }).find("'act_type'"), std::string::npos);
    EXPECT_NE(attrError("Activation", { { "act_type", "Relu" } }).find("'act_type'"), std::string::npos);
    EXPECT_NE(attrError("LeakyReLU", { { "act_type", "crelu" } }).find("'act_type'"), std::string::npos);
    EXPECT_NE(attrError("LeakyReLU", { { "slope", "abc" } }).find("'slope'"), std::string::npos);
    EXPECT_NE(attrError("LeakyReLU", { { "act_type", "rrelu" }, { "lower_bound", "x" } }).find("'lower_bound'"),
        std::string::npos);
    EXPECT_NE(attrError("LeakyReLU", { { "act_type", "rrelu" }, { "lower_bound", "0.5" }, { "upper_bound", "0.1" } })
                  .find("'lower_bound'"),
        std::string::npos);
}

TEST(ActivationOp, SlotNamesAreMXNets)
{
    const OpRegistry& reg = OpRegistry::instance();
    const OpDef& act = reg.get("Activation");
    const ParamsPtr relu = act.parse({ { "act_type", "relu" } });
    EXPECT_EQ(act.inputSlotNames(*relu), (std::vector<std::string> { "input0" }));
    EXPECT_EQ(act.outputSlotNames(*relu), (std::vector<std::string> { "output" }));

    const OpDef& leaky = reg.get("LeakyReLU");
    const ParamsPtr plain = leaky.parse({});
    EXPECT_EQ(leaky.inputSlotNames(*plain), (std::vector<std::string> { "data" }));
    EXPECT_EQ(leaky.outputSlotNames(*plain), (std::vector<std::string> { "output" }));
    const ParamsPtr prelu = leaky.parse({ { "act_type", "prelu" } });
    EXPECT_EQ(leaky.inputSlotNames(*prelu), (std::vector<std::string> { "data", "gamma" }));
    const ParamsPtr rrelu = leaky.parse({ { "act_type", "rrelu" } });
    EXPECT_EQ(leaky.outputSlotNames(*rrelu), (std::vector<std::string> { "output", "mask" }));
    EXPECT_EQ(leaky.visibleOutputs(*rrelu), 1);
}

} // namespace
