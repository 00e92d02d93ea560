// Every built-in model: builds from its seed, runs its default input eagerly and hybridized in every
// mode with the same values and the same op-hook sequence, and matches its committed output
// (tests/fixtures/samples/<name>.npy; OPSCOPE_WRITE_FIXTURES=1 rewrites them).

#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "io/npy.h"
#include "models/registry.h"
#include "models/sample_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace opscope;

class Samples : public ::testing::TestWithParam<std::string> { };

TEST_P(Samples, DefaultInputMatchesCommittedOutputInEveryMode)
{
    const std::string name = GetParam();
    const std::string fixture = test::fixture("samples/" + name + ".npy");
    std::vector<std::string> firstNames;
    Tensor reference;
    for (int mode = 0; mode < 4; ++mode) {
        samples::Sample s = samples::makeSample(name, 0);
        ASSERT_FALSE(s.defaultInputs.empty());
        if (mode == 1)
            s.block->hybridize();
        if (mode == 2)
            s.block->hybridize(true, true);
        if (mode == 3)
            s.block->hybridize(true, true, true);
        std::vector<std::string> names;
        s.block->register_op_hook(
            [&](std::string_view n, std::string_view, const TensorView&) { names.emplace_back(n); }, true);
        std::vector<Tensor> out = s.block->call(s.defaultInputs);
        ASSERT_EQ(out.size(), 1u);
        if (mode == 0) {
            reference = out[0].copy();
            firstNames = names;
            if (std::getenv("OPSCOPE_WRITE_FIXTURES"))
                writeNpy(fixture, reference.view());
        } else {
            EXPECT_EQ(names, firstNames) << "mode " << mode;
            EXPECT_TRUE(test::tensorsNear(out[0], reference, 1e-5f, 1e-4f)) << "mode " << mode;
        }
    }
    EXPECT_FALSE(firstNames.empty());
    const Tensor expected = readNpy(fixture);
    EXPECT_TRUE(test::tensorsNear(reference, expected, 1e-4f, 1e-3f));
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, Samples, ::testing::ValuesIn(samples::sampleNames()), [](const auto& info) {
    std::string n = info.param;
    for (char& c : n)
        if (c == '-')
            c = '_';
    return n;
});

TEST(SampleRegistry, ListsTheModelsAndRejectsUnknownNames)
{
    EXPECT_EQ(samples::sampleNames(),
        (std::vector<std::string> {
            "mlp", "lenet", "fashion", "mini-resnet", "tiny-transformer", "nan-demo", "onnx-cnn", "onnx-transformer" }));
    try {
        samples::makeSample("resnet-1000");
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("mini-resnet"), std::string::npos) << e.what();
    }
}

TEST(SampleRegistry, ShapesOfTheDefaultOutputs)
{
    const std::map<std::string, Shape> expected { { "mlp", Shape({ 12, 3 }) }, { "lenet", Shape({ 1, 10 }) },
        { "mini-resnet", Shape({ 1, 10 }) }, { "tiny-transformer", Shape({ 1, 8, 50 }) },
        { "nan-demo", Shape({ 2, 2 }) }, { "onnx-cnn", Shape({ 1, 10 }) }, { "onnx-transformer", Shape({ 1, 4 }) } };
    for (const auto& [name, shape] : expected) {
        samples::Sample s = samples::makeSample(name);
        s.block->hybridize();
        EXPECT_EQ(s.block->call(s.defaultInputs).at(0).shape(), shape) << name;
    }
}

// The node that first makes NaN in nan-demo is its log node, and nothing before it has any.
TEST(SampleRegistry, NanDemoFirstNanIsAtTheLogNode)
{
    samples::Sample s = samples::makeSample("nan-demo");
    s.block->hybridize();
    std::string firstNan;
    s.block->register_op_hook([&](std::string_view n, std::string_view, const TensorView& v) {
        if (!firstNan.empty())
            return;
        for (float x : v.values())
            if (std::isnan(x)) {
                firstNan = n;
                return;
            }
    });
    s.block->call(s.defaultInputs);
    EXPECT_EQ(firstNan, "nandemo0_log0_0");
}

TEST(SampleRegistry, DigitImagesAreDistinctStrokes)
{
    for (int d = 0; d < 10; ++d) {
        Tensor img = samples::digitImage(d);
        double ink = 0;
        for (float v : img.values()) {
            ASSERT_GE(v, 0.0f);
            ASSERT_LE(v, 1.0f);
            ink += v;
        }
        EXPECT_GT(ink, 20.0) << d;
        EXPECT_LT(ink, 300.0) << d;
    }
    EXPECT_NE(samples::digitImage(1).toVector(), samples::digitImage(7).toVector());
}
