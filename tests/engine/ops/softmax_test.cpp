#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <cctype>
#include <functional>
#include "common/op_test_util.h"
#include <gtest/gtest.h>

using namespace opscope;

namespace {

Tensor smFixture(const std::string& name)
{
    return readNpy(test::fixture("softmax/" + name + ".npy"));
}

using test::dnnlBackend;
using test::errorOf;

// ---- Reference kernels against PyTorch (tests/fixtures/make_pool_act_softmax_fixtures.py) ---------

struct SoftmaxFixtureCase {
    const char* op;
    AttrMap attrs;
    std::vector<const char*> inputs;
    const char* expected;
};

std::ostream& operator<<(std::ostream& os, const SoftmaxFixtureCase& c)
{
    return os << c.expected;
}

class SoftmaxFixture : public ::testing::TestWithParam<SoftmaxFixtureCase> { };

TEST_P(SoftmaxFixture, ReferenceMatchesPyTorch)
{
    const SoftmaxFixtureCase& c = GetParam();
    std::vector<Tensor> inputs;
    for (const char* name : c.inputs)
        inputs.push_back(smFixture(name));
    const Tensor y = smFixture(c.expected);
    EXPECT_TRUE(test::tensorsNear(invokeOp(c.op, c.attrs, inputs, KernelKind::Reference)[0], y, 1e-6f, 1e-5f));
    // oneDNN where it applies (the reference kernel otherwise) gives the same values, within the
    // ~1e-6 error of its exp approximation.
    EXPECT_TRUE(test::tensorsNear(invokeOp(c.op, c.attrs, inputs, KernelKind::Dnnl)[0], y, 1e-5f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Softmax, SoftmaxFixture,
    ::testing::Values(SoftmaxFixtureCase { "softmax", {}, { "x" }, "softmax_axis-1" },
        SoftmaxFixtureCase { "softmax", { { "axis", "1" } }, { "x" }, "softmax_axis1" },
        SoftmaxFixtureCase { "softmax", { { "axis", "0" }, { "temperature", "2.5" }, { "dtype", "None" } }, { "x" },
            "softmax_axis0_t2.5" },
        SoftmaxFixtureCase { "log_softmax", { { "axis", "-1" } }, { "x" }, "log_softmax_axis-1" },
        SoftmaxFixtureCase {
            "log_softmax", { { "axis", "-2" }, { "temperature", "0.5" } }, { "x" }, "log_softmax_axis2_t0.5" },
        SoftmaxFixtureCase { "softmax", { { "temperature", "None" } }, { "big" }, "big_softmax" },
        SoftmaxFixtureCase { "log_softmax", {}, { "big" }, "big_log_softmax" },
        SoftmaxFixtureCase { "softmax", { { "use_length", "True" } }, { "len_x", "len_length" }, "len_y" },
        SoftmaxFixtureCase { "softmax", { { "use_length", "True" }, { "axis", "0" } },
            { "len_axis0_x", "len_axis0_length" }, "len_axis0_y" },
        SoftmaxFixtureCase { "SoftmaxOutput", {}, { "out_x", "out_label" }, "out_default" },
        SoftmaxFixtureCase {
            "SoftmaxOutput", { { "multi_output", "True" } }, { "out_x", "out_label_multi" }, "out_multi" },
        SoftmaxFixtureCase {
            "SoftmaxOutput", { { "preserve_shape", "True" } }, { "out_x", "out_label" }, "out_preserve" },
        SoftmaxFixtureCase { "SoftmaxActivation", {}, { "act_x" }, "act_instance" },
        SoftmaxFixtureCase { "SoftmaxActivation", { { "mode", "channel" } }, { "act_x" }, "act_channel" }),
    [](const auto& info) {
        std::string n = std::string(info.param.op) + "_" + info.param.expected;
        for (char& ch : n)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return n;
    });

TEST(SoftmaxOp, SoftmaxOutputIgnoresLabelsAndGradientAttributesInForward)
{
    const Tensor x = smFixture("out_x");
    const AttrMap attrs = { { "grad_scale", "3.5" }, { "ignore_label", "2" }, { "use_ignore", "True" },
        { "normalization", "valid" }, { "out_grad", "True" }, { "smooth_alpha", "0.1" } };
    Generator gen(2);
    const Tensor label = Tensor::uniform(Shape({ 2, 3 }), 0, 12, &gen);
    EXPECT_TRUE(test::tensorsNear(invokeOp("SoftmaxOutput", attrs, { x, label }, KernelKind::Reference)[0],
        smFixture("out_default"), 1e-6f, 1e-5f));
    // A label of the data's shape (probabilities) is accepted as is; "Softmax" is MXNet's old name.
    EXPECT_TRUE(test::tensorsNear(invokeOp("Softmax", {}, { x, Tensor::zeros(x.shape()) }, KernelKind::Reference)[0],
        smFixture("out_default"), 1e-6f, 1e-5f));
    EXPECT_EQ(OpRegistry::instance().get("Softmax").name, "SoftmaxOutput");
}

TEST(SoftmaxOp, InfersLabelAndLengthShapes)
{
    std::vector<Shape> in = { Shape({ 2, 3, 4 }), Shape() };
    inferOpShapes("SoftmaxOutput", {}, in);
    EXPECT_EQ(in[1], Shape({ 2, 3 }));
    in = { Shape({ 8, 10 }), Shape() };
    inferOpShapes("SoftmaxOutput", {}, in);
    EXPECT_EQ(in[1], Shape({ 8 }));
    in = { Shape({ 2, 3, 4, 5 }), Shape() };
    inferOpShapes("SoftmaxOutput", { { "multi_output", "True" } }, in);
    EXPECT_EQ(in[1], Shape({ 2, 20 }));
    for (const Shape& label : { Shape({ 2, 4, 5 }), Shape({ 2, 1, 4, 5 }) }) {
        in = { Shape({ 2, 3, 4, 5 }), label };
        EXPECT_NO_THROW(inferOpShapes("SoftmaxOutput", { { "multi_output", "True" } }, in)) << label.str();
    }
    in = { Shape({ 2, 3, 4 }), Shape() };
    inferOpShapes("softmax", { { "use_length", "True" }, { "axis", "1" } }, in);
    EXPECT_EQ(in[1], Shape({ 2, 4 }));
}

// ---- oneDNN kernels against the reference kernels -------------------------------------------------

struct SoftmaxDnnlCase {
    const char* name;
    const char* op;
    AttrMap attrs;
    std::vector<Shape> inputs;
    bool dnnl = true; // oneDNN runs only softmaxes along the innermost axis
};

std::ostream& operator<<(std::ostream& os, const SoftmaxDnnlCase& c)
{
    return os << c.name;
}

class SoftmaxDnnl : public ::testing::TestWithParam<SoftmaxDnnlCase> { };

TEST_P(SoftmaxDnnl, MatchesReference)
{
    const SoftmaxDnnlCase& c = GetParam();
    Generator gen(23);
    std::vector<Tensor> inputs;
    for (const Shape& s : c.inputs)
        inputs.push_back(Tensor::uniform(s, -10.0f, 10.0f, &gen));
    EXPECT_EQ(dnnlBackend(c.op, c.attrs, c.inputs), std::string(c.dnnl ? "dnnl" : "reference"));
    const Tensor ref = invokeOp(c.op, c.attrs, inputs, KernelKind::Reference)[0];
    const Tensor dnn = invokeOp(c.op, c.attrs, inputs, KernelKind::Dnnl)[0];
    EXPECT_TRUE(test::tensorsNear(dnn, ref, 1e-6f, 1e-5f));
}

INSTANTIATE_TEST_SUITE_P(Softmax, SoftmaxDnnl,
    ::testing::Values(SoftmaxDnnlCase { "last_axis", "softmax", {}, { Shape({ 64, 1000 }) } },
        SoftmaxDnnlCase { "last_axis_of_3d", "softmax", { { "axis", "2" } }, { Shape({ 8, 64, 33 }) } },
        SoftmaxDnnlCase { "small", "softmax", {}, { Shape({ 2, 3 }) } },
        SoftmaxDnnlCase { "middle_axis", "softmax", { { "axis", "1" } }, { Shape({ 8, 64, 33 }) }, false },
        SoftmaxDnnlCase { "first_axis", "softmax", { { "axis", "0" } }, { Shape({ 17, 300 }) }, false },
        SoftmaxDnnlCase { "log_last_axis", "log_softmax", {}, { Shape({ 64, 1000 }) } },
        SoftmaxDnnlCase { "log_middle_axis", "log_softmax", { { "axis", "-2" } }, { Shape({ 8, 64, 33 }) }, false },
        SoftmaxDnnlCase { "output_flat", "SoftmaxOutput", {}, { Shape({ 32, 10, 3, 3 }), Shape({ 32, 10, 3 }) } },
        SoftmaxDnnlCase { "output_multi", "SoftmaxOutput", { { "multi_output", "True" } },
            { Shape({ 4, 21, 16, 16 }), Shape({ 4, 256 }) }, false },
        SoftmaxDnnlCase { "output_preserve", "SoftmaxOutput", { { "preserve_shape", "True" } },
            { Shape({ 4, 50, 100 }), Shape({ 4, 50 }) } },
        SoftmaxDnnlCase { "activation_instance", "SoftmaxActivation", {}, { Shape({ 64, 500 }) } },
        SoftmaxDnnlCase { "activation_channel", "SoftmaxActivation", { { "mode", "channel" } },
            { Shape({ 4, 21, 16, 16 }) }, false }),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SoftmaxOp, DnnlFallsBackForTemperatureAndLength)
{
    EXPECT_EQ(dnnlBackend("softmax", { { "temperature", "2" } }, { Shape({ 64, 1000 }) }), std::string("reference"));
    EXPECT_EQ(dnnlBackend("softmax", { { "temperature", "1.0" } }, { Shape({ 64, 1000 }) }), std::string("dnnl"));
    EXPECT_EQ(dnnlBackend("softmax", { { "use_length", "True" } }, { Shape({ 64, 1000 }), Shape({ 64 }) }),
        std::string("reference"));
}

TEST(SoftmaxOp, DnnlPaysOnlyForLargeTensors)
{
    const OpDef& def = OpRegistry::instance().get("softmax");
    const ParamsPtr p = def.parse({});
    const std::vector<Shape> small = { Shape({ 4, 10 }) }, large = { Shape({ 128, 1000 }) };
    EXPECT_FALSE(def.dnnlPays(*p, small, small));
    EXPECT_TRUE(def.dnnlPays(*p, large, large));
    EXPECT_EQ(def.makeKernel(*p, small, small, KernelKind::Auto)->backend(), std::string("reference"));
    EXPECT_EQ(def.makeKernel(*p, large, large, KernelKind::Auto)->backend(), std::string("dnnl"));
}

// ---- Shapes, attributes, slot names ---------------------------------------------------------------

TEST(SoftmaxOp, WrongInputShapesThrowShapeErrorNamingBothShapes)
{
    std::string msg = errorOf<ShapeError>([] {
        std::vector<Shape> in = { Shape({ 2, 3, 4 }), Shape({ 2, 4 }) };
        inferOpShapes("SoftmaxOutput", {}, in);
    });
    EXPECT_NE(msg.find("label"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 4)"), std::string::npos) << msg;
    msg = errorOf<ShapeError>([] {
        std::vector<Shape> in = { Shape({ 2, 3, 4, 5 }), Shape({ 2, 7 }) };
        inferOpShapes("SoftmaxOutput", { { "multi_output", "True" } }, in);
    });
    EXPECT_NE(msg.find("(2, 20)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 7)"), std::string::npos) << msg;
    msg = errorOf<ShapeError>([] {
        invokeOp(
            "softmax", { { "use_length", "True" } }, { Tensor::zeros(Shape({ 3, 6 })), Tensor::zeros(Shape({ 6 })) });
    });
    EXPECT_NE(msg.find("(3,)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(6,)"), std::string::npos) << msg;
    msg = errorOf<ShapeError>([] { invokeOp("softmax", { { "axis", "2" } }, { Tensor::zeros(Shape({ 3, 6 })) }); });
    EXPECT_NE(msg.find("axis 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3, 6)"), std::string::npos) << msg;
    msg = errorOf<ShapeError>([] {
        invokeOp("SoftmaxActivation", { { "mode", "channel" } }, { Tensor::zeros(Shape({ 3, 6 })) });
    });
    EXPECT_NE(msg.find("(3, 6)"), std::string::npos) << msg;
}

TEST(SoftmaxOp, BadAttributesThrowAttributeErrorNamingTheAttribute)
{
    auto attrError = [](const char* op, const AttrMap& attrs) {
        return errorOf<AttributeError>([&] { OpRegistry::instance().get(op).parse(attrs); });
    };
    EXPECT_NE(attrError("softmax", { { "axis", "abc" } }).find("'axis'"), std::string::npos);
    EXPECT_NE(attrError("softmax", { { "temperature", "hot" } }).find("'temperature'"), std::string::npos);
    EXPECT_NE(attrError("softmax", { { "dtype", "int8" } }).find("'dtype'"), std::string::npos);
    EXPECT_NE(attrError("softmax", { { "use_length", "yes" } }).find("'use_length'"), std::string::npos);
    EXPECT_NE(attrError("log_softmax", { { "use_length", "True" } }).find("'use_length'"), std::string::npos);
    EXPECT_NE(attrError("SoftmaxOutput", { { "normalization", "mean" } }).find("'normalization'"), std::string::npos);
    EXPECT_NE(attrError("SoftmaxOutput", { { "multi_output", "2" } }).find("'multi_output'"), std::string::npos);
    EXPECT_NE(attrError("SoftmaxOutput", { { "smooth_alpha", "1.5" } }).find("'smooth_alpha'"), std::string::npos);
    EXPECT_NE(attrError("SoftmaxOutput", { { "grad_scale", "big" } }).find("'grad_scale'"), std::string::npos);
    EXPECT_NE(attrError("SoftmaxActivation", { { "mode", "spatial" } }).find("'mode'"), std::string::npos);
}

TEST(SoftmaxOp, SlotNamesAreMXNets)
{
    const OpRegistry& reg = OpRegistry::instance();
    using Names = std::vector<std::string>;
    const OpDef& softmax = reg.get("softmax");
    const ParamsPtr plain = softmax.parse({});
    EXPECT_EQ(softmax.inputSlotNames(*plain), (Names { "data" }));
    EXPECT_EQ(softmax.outputSlotNames(*plain), (Names { "output" }));
    const ParamsPtr withLength = softmax.parse({ { "use_length", "True" } });
    EXPECT_EQ(softmax.inputSlotNames(*withLength), (Names { "data", "length" }));

    const OpDef& logSoftmax = reg.get("log_softmax");
    const ParamsPtr lp = logSoftmax.parse({});
    EXPECT_EQ(logSoftmax.inputSlotNames(*lp), (Names { "data" }));
    EXPECT_EQ(logSoftmax.outputSlotNames(*lp), (Names { "0" }));

    const OpDef& out = reg.get("SoftmaxOutput");
    const ParamsPtr op = out.parse({});
    EXPECT_EQ(out.inputSlotNames(*op), (Names { "data", "label" }));
    EXPECT_EQ(out.outputSlotNames(*op), (Names { "output" }));

    const OpDef& act = reg.get("SoftmaxActivation");
    const ParamsPtr ap = act.parse({});
    EXPECT_EQ(act.inputSlotNames(*ap), (Names { "input0" }));
    EXPECT_EQ(act.outputSlotNames(*ap), (Names { "output" }));
}

} // namespace
