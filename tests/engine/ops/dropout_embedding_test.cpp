// Dropout (statistics and reproducibility of the seeded mask, inference identity, variational axes)
// and Embedding (against PyTorch fixtures from tests/fixtures/make_norm_fixtures.py).

#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "io/npy.h"
#include "ops/registry.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <cmath>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace opscope;

namespace {

std::vector<Tensor> dropout(const AttrMap& attrs, const Tensor& x, bool training, Generator* gen)
{
    RunContext ctx;
    ctx.training = training;
    ctx.rng = gen;
    return invokeOp("Dropout", attrs, { x }, KernelKind::Reference, &ctx);
}

int64_t countZeros(const Tensor& t)
{
    int64_t n = 0;
    for (float v : t.values())
        n += v == 0.0f;
    return n;
}

std::string errorOf(const std::string& op, const AttrMap& attrs, std::vector<Shape> shapes)
{
    try {
        inferOpShapes(op, attrs, shapes);
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// ---------------------------------------------------------------------------------------------
// Dropout

TEST(DropoutOp, InferenceIsIdentityWithUnitMask)
{
    Generator gen(3);
    const Tensor x = Tensor::normal(Shape({ 4, 5, 6 }), 0.0f, 1.0f, &gen);
    const auto out = dropout({ { "p", "0.7" } }, x, false, &gen);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(test::tensorsNear(out[0], x, 0.0f, 0.0f));
    EXPECT_TRUE(test::tensorsNear(out[1], Tensor::ones(x.shape()), 0.0f, 0.0f));
}

TEST(DropoutOp, TrainingDropsAboutPAndScalesTheRest)
{
    const float p = 0.3f;
    const int64_t n = 20000;
    Generator dataGen(5);
    const Tensor x = Tensor::uniform(Shape({ 100, 200 }), 1.0f, 2.0f, &dataGen); // no zeros of its own
    Generator gen(42);
    const auto out = dropout({ { "p", "0.3" } }, x, true, &gen);
    const int64_t zeros = countZeros(out[0]);
    // Binomial(n, p): standard deviation sqrt(n p (1 - p)) ~ 65; allow five of them.
    const double sigma = std::sqrt(n * p * (1.0 - p));
    EXPECT_NEAR(static_cast<double>(zeros), n * p, 5 * sigma);
    EXPECT_EQ(countZeros(out[1]), zeros);
    const float scale = 1.0f / (1.0f - p);
    for (int64_t i = 0; i < n; ++i) {
        const float m = out[1].at(i);
        ASSERT_TRUE(m == 0.0f || m == scale) << "mask value " << m << " at " << i;
        ASSERT_FLOAT_EQ(out[0].at(i), x.at(i) * m) << i;
    }
}

TEST(DropoutOp, SameSeedSameMaskOtherSeedOtherMask)
{
    Generator dataGen(1);
    const Tensor x = Tensor::uniform(Shape({ 64, 64 }), 1.0f, 2.0f, &dataGen);
    Generator a(2024), b(2024), c(2025);
    const auto ra = dropout({ { "p", "0.5" } }, x, true, &a);
    const auto rb = dropout({ { "p", "0.5" } }, x, true, &b);
    const auto rc = dropout({ { "p", "0.5" } }, x, true, &c);
    EXPECT_EQ(ra[1].toVector(), rb[1].toVector());
    EXPECT_EQ(ra[0].toVector(), rb[0].toVector());
    EXPECT_EQ(countZeros(ra[0]), countZeros(rb[0]));
    EXPECT_NE(ra[1].toVector(), rc[1].toVector());
    // The generator advances: a second draw from the same generator differs.
    const auto again = dropout({ { "p", "0.5" } }, x, true, &a);
    EXPECT_NE(again[1].toVector(), ra[1].toVector());
}

TEST(DropoutOp, ModeAlwaysDropsAtInference)
{
    Generator dataGen(9);
    const Tensor x = Tensor::uniform(Shape({ 1000 }), 1.0f, 2.0f, &dataGen);
    Generator gen(10);
    const auto out = dropout({ { "p", "0.5" }, { "mode", "always" } }, x, false, &gen);
    EXPECT_NEAR(static_cast<double>(countZeros(out[0])), 500.0, 5 * std::sqrt(250.0));
    const auto inference = dropout({ { "p", "0.5" }, { "mode", "training" } }, x, false, &gen);
    EXPECT_EQ(countZeros(inference[0]), 0);
}

TEST(DropoutOp, ProbabilityZeroAndOne)
{
    Generator dataGen(4);
    const Tensor x = Tensor::uniform(Shape({ 3, 7 }), 1.0f, 2.0f, &dataGen);
    Generator gen(8);
    const auto keep = dropout({ { "p", "0" } }, x, true, &gen);
    EXPECT_TRUE(test::tensorsNear(keep[0], x, 0.0f, 0.0f));
    EXPECT_TRUE(test::tensorsNear(keep[1], Tensor::ones(x.shape()), 0.0f, 0.0f));
    const auto drop = dropout({ { "p", "1" } }, x, true, &gen);
    EXPECT_TRUE(test::tensorsNear(drop[0], Tensor::zeros(x.shape()), 0.0f, 0.0f));
    EXPECT_TRUE(test::tensorsNear(drop[1], Tensor::zeros(x.shape()), 0.0f, 0.0f));
}

TEST(DropoutOp, AxesShareTheMaskAlongThem)
{
    Generator dataGen(6);
    const Tensor x = Tensor::uniform(Shape({ 4, 5, 6 }), 1.0f, 2.0f, &dataGen);
    Generator gen(12);
    for (const std::string axes : { "(1,)", "(-1,)", "(0, 2)" }) {
        const auto out = dropout({ { "p", "0.5" }, { "axes", axes } }, x, true, &gen);
        Shape mask = x.shape();
        if (axes == "(1,)")
            mask[1] = 1;
        else if (axes == "(-1,)")
            mask[2] = 1;
        else
            mask[0] = mask[2] = 1;
        ASSERT_EQ(out[1].shape(), mask) << axes;
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 5; ++j)
                for (int64_t k = 0; k < 6; ++k) {
                    const int64_t mi = ((mask[0] == 1 ? 0 : i) * mask[1] + (mask[1] == 1 ? 0 : j)) * mask[2]
                        + (mask[2] == 1 ? 0 : k);
                    const int64_t xi = (i * 5 + j) * 6 + k;
                    ASSERT_FLOAT_EQ(out[0].at(xi), x.at(xi) * out[1].at(mi)) << axes << " " << i << j << k;
                }
        EXPECT_GT(countZeros(out[1]), 0) << axes;
        EXPECT_LT(countZeros(out[1]), out[1].size()) << axes;
    }
}

TEST(DropoutOp, NullGeneratorUsesTheGlobalOne)
{
    const Tensor x = Tensor::ones(Shape({ 2000 }));
    const auto out = dropout({ { "p", "0.25" } }, x, true, nullptr);
    EXPECT_NEAR(static_cast<double>(countZeros(out[0])), 500.0, 5 * std::sqrt(2000 * 0.25 * 0.75));
}

TEST(DropoutOp, ShapesErrorsAndSlotNames)
{
    std::vector<Shape> in { Shape({ 2, 3, 4 }) };
    const auto out = inferOpShapes("Dropout", { { "axes", "(0, 2)" } }, in);
    EXPECT_EQ(out[0], Shape({ 2, 3, 4 }));
    EXPECT_EQ(out[1], Shape({ 1, 3, 1 }));
    const std::string axis = errorOf("Dropout", { { "axes", "(3,)" } }, { Shape({ 2, 3, 4 }) });
    EXPECT_NE(axis.find("(2, 3, 4)"), std::string::npos) << axis;
    EXPECT_NE(axis.find("'axes'"), std::string::npos) << axis;
    EXPECT_THROW(inferOpShapes("Dropout", { { "axes", "(3,)" } }, in), ShapeError);

    const OpDef& def = OpRegistry::instance().get("Dropout");
    EXPECT_THROW(def.parse({ { "p", "abc" } }), AttributeError);
    EXPECT_NE(errorOf("Dropout", { { "p", "abc" } }, { Shape({ 2 }) }).find("'p'"), std::string::npos);
    EXPECT_NE(errorOf("Dropout", { { "p", "1.5" } }, { Shape({ 2 }) }).find("'p'"), std::string::npos);
    EXPECT_NE(errorOf("Dropout", { { "mode", "sometimes" } }, { Shape({ 2 }) }).find("'mode'"), std::string::npos);
    EXPECT_NE(errorOf("Dropout", { { "axes", "(1," } }, { Shape({ 2 }) }).find("'axes'"), std::string::npos);
    EXPECT_NO_THROW(def.parse({ { "cudnn_off", "None" } }));

    ParamsPtr p = def.parse({});
    EXPECT_EQ(def.inputSlotNames(*p), (std::vector<std::string> { "data" }));
    EXPECT_EQ(def.outputSlotNames(*p), (std::vector<std::string> { "output", "mask" }));
    EXPECT_EQ(def.visibleOutputs(*p), 1);
    EXPECT_EQ(&OpRegistry::instance().get("_npx_dropout"), &def);
}

// ---------------------------------------------------------------------------------------------
// Embedding

Tensor fx(const std::string& name)
{
    return readNpy(test::fixture("norm/" + name + ".npy"));
}

TEST(EmbeddingOp, ReferenceMatchesTorchWithClippedIndices)
{
    const auto out = invokeOp("Embedding", { { "input_dim", "10" }, { "output_dim", "4" } },
        { fx("emb_idx"), fx("emb_weight") }, KernelKind::Reference);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(test::tensorsNear(out[0], fx("emb_out"), 0.0f, 0.0f));
}

TEST(EmbeddingOp, InfersWeightAndOutputShapes)
{
    std::vector<Shape> in { Shape({ 2, 7 }), Shape() };
    const auto out = inferOpShapes("Embedding", { { "input_dim", "100" }, { "output_dim", "16" } }, in);
    EXPECT_EQ(in[1], Shape({ 100, 16 }));
    EXPECT_EQ(out[0], Shape({ 2, 7, 16 }));
}

TEST(EmbeddingOp, ShapeErrorsNameBothShapes)
{
    const AttrMap attrs { { "input_dim", "10" }, { "output_dim", "4" } };
    const std::string weight = errorOf("Embedding", attrs, { Shape({ 3 }), Shape({ 10, 5 }) });
    EXPECT_NE(weight.find("weight"), std::string::npos) << weight;
    EXPECT_NE(weight.find("(10, 4)"), std::string::npos) << weight;
    EXPECT_NE(weight.find("(10, 5)"), std::string::npos) << weight;
    std::vector<Shape> tooDeep { Shape({ 1, 1, 1, 1, 1, 2 }), Shape() };
    EXPECT_THROW(inferOpShapes("Embedding", attrs, tooDeep), ShapeError);
}

TEST(EmbeddingOp, BadAttributesNameTheAttribute)
{
    const OpDef& def = OpRegistry::instance().get("Embedding");
    auto messageOf = [&](const AttrMap& attrs) -> std::string {
        try {
            def.parse(attrs);
        } catch (const AttributeError& e) {
            return e.what();
        }
        return "no AttributeError";
    };
    EXPECT_NE(messageOf({ { "output_dim", "4" } }).find("'input_dim'"), std::string::npos);
    EXPECT_NE(messageOf({ { "input_dim", "abc" }, { "output_dim", "4" } }).find("'input_dim'"), std::string::npos);
    EXPECT_NE(messageOf({ { "input_dim", "10" }, { "output_dim", "0" } }).find("'output_dim'"), std::string::npos);
    EXPECT_NE(messageOf({ { "input_dim", "10" }, { "output_dim", "4" }, { "dtype", "complex" } }).find("'dtype'"),
        std::string::npos);
    EXPECT_EQ(
        messageOf({ { "input_dim", "10" }, { "output_dim", "4" }, { "dtype", "float16" }, { "sparse_grad", "True" } }),
        "no AttributeError");
}

TEST(EmbeddingOp, SlotNamesAreMXNets)
{
    const OpDef& def = OpRegistry::instance().get("Embedding");
    ParamsPtr p = def.parse({ { "input_dim", "10" }, { "output_dim", "4" } });
    EXPECT_EQ(def.inputSlotNames(*p), (std::vector<std::string> { "data", "weight" }));
    // MXNet registers no output names for Embedding.
    EXPECT_EQ(def.outputSlotNames(*p), (std::vector<std::string> { "0" }));
    EXPECT_EQ(&OpRegistry::instance().get("_npx_embedding"), &def);
}

// What an eager op reads when it reports to hooks: the names, built only where they depend on the
// parameters.
TEST(OpSlotNames, TheCountedFormBuildsOnlyNamesThatDependOnTheParameters)
{
    std::vector<std::string> scratch;
    const OpDef& dropout = OpRegistry::instance().get("Dropout");
    const ParamsPtr dp = dropout.parse({});
    const std::span<const std::string> fixed = dropout.outputSlotNames(*dp, 2, scratch);
    EXPECT_EQ(std::vector<std::string>(fixed.begin(), fixed.end()), dropout.outputSlotNames(*dp));
    EXPECT_TRUE(scratch.empty());
    EXPECT_EQ(fixed.data(), dropout.fixedOutputNames.data()); // read where they are

    const OpDef& split = OpRegistry::instance().get("SliceChannel");
    const ParamsPtr sp = split.parse({ { "num_outputs", "3" } });
    const std::span<const std::string> made = split.outputSlotNames(*sp, 3, scratch);
    EXPECT_EQ(std::vector<std::string>(made.begin(), made.end()),
        (std::vector<std::string> { "output0", "output1", "output2" }));
    EXPECT_EQ(made.data(), scratch.data());

    // Inputs: a fixed list of which the first numInputs are the slots, MXNet's input<i> where an
    // operator registers none, built where they depend on the parameters (Concat's arg<i>).
    const auto inputs = [&](const char* op, const AttrMap& attrs) {
        const OpDef& def = OpRegistry::instance().get(op);
        const ParamsPtr p = def.parse(attrs);
        scratch.clear();
        const std::span<const std::string> names
            = def.inputSlotNames(*p, static_cast<size_t>(def.numInputs(*p)), scratch);
        EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()), def.inputSlotNames(*p)) << op;
        return std::pair { std::vector<std::string>(names.begin(), names.end()), !scratch.empty() };
    };
    using Names = std::vector<std::string>;
    EXPECT_EQ(inputs("FullyConnected", { { "num_hidden", "2" } }), std::pair(Names { "data", "weight", "bias" }, false));
    EXPECT_EQ(inputs("FullyConnected", { { "num_hidden", "2" }, { "no_bias", "True" } }),
        std::pair(Names { "data", "weight" }, false));
    EXPECT_EQ(inputs("Convolution", { { "kernel", "(3, 3)" }, { "num_filter", "4" }, { "no_bias", "True" } }),
        std::pair(Names { "data", "weight" }, false));
    EXPECT_EQ(inputs("softmax", { { "use_length", "True" } }), std::pair(Names { "data", "length" }, false));
    EXPECT_EQ(inputs("softmax", {}), std::pair(Names { "data" }, false));
    EXPECT_EQ(inputs("LeakyReLU", { { "act_type", "prelu" } }), std::pair(Names { "data", "gamma" }, false));
    EXPECT_EQ(inputs("LeakyReLU", {}), std::pair(Names { "data" }, false));
    EXPECT_EQ(inputs("Activation", { { "act_type", "relu" } }), std::pair(Names { "input0" }, false));
    EXPECT_EQ(inputs("Concat", { { "num_args", "2" } }), std::pair(Names { "arg0", "arg1" }, true));
}

} // namespace
