// Reduced precision, emulated (ops/reduced_precision.h, exec/precision_rules.h): rounding to
// float16 and bfloat16, a node computing on rounded inputs with its output rounded, which nodes a
// rule selects, and a node in reduced precision never fused.

#include "common/exec_graphs.h"
#include "core/error.h"
#include "exec/executor.h"
#include "exec/precision_rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace opscope;
using test::idOf;

TEST(ReducedPrecision, RoundsToTheNearestValueOfTheType)
{
    EXPECT_EQ(roundToHalf(1.0f), 1.0f);
    EXPECT_EQ(roundToHalf(1.0f + std::ldexp(1.0f, -11)), 1.0f) << "a tie goes to the even neighbour";
    EXPECT_EQ(roundToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
    EXPECT_EQ(roundToHalf(1.0f / 3), 0.333251953125f);
    EXPECT_EQ(roundToHalf(65504.0f), 65504.0f);
    EXPECT_EQ(roundToHalf(65519.0f), 65504.0f);
    EXPECT_TRUE(std::isinf(roundToHalf(65520.0f)));
    EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24)) << "the smallest subnormal";
    EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -26)), 0.0f);
    EXPECT_TRUE(std::isnan(roundToHalf(NAN)));

    EXPECT_EQ(roundToBFloat16(1.0f / 3), 0.333984375f);
    EXPECT_EQ(roundToBFloat16(1.0f + std::ldexp(1.0f, -8)), 1.0f) << "a tie goes to the even neighbour";
    EXPECT_EQ(roundToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
    EXPECT_EQ(roundToBFloat16(70000.0f), 70144.0f) << "float's range: no overflow where float16 has one";
    EXPECT_TRUE(std::isinf(roundToBFloat16(std::numeric_limits<float>::max())));
    EXPECT_TRUE(std::isnan(roundToBFloat16(NAN)));
    EXPECT_EQ(roundToBFloat16(-2.0f), -2.0f);
}

TEST(ReducedPrecision, ANodeComputesOnRoundedInputsAndRoundsItsOutput)
{
    const auto g = test::mlpGraph();
    const auto in = test::mlpInputs(3);
    std::vector<Tensor> kept;
    for (const Tensor& t : in)
        kept.push_back(t.copy());

    // By hand: fc1 of the inputs rounded to float16, its output rounded.
    std::vector<Tensor> rounded;
    for (const Tensor& t : in) {
        rounded.push_back(t.copy());
        roundToPrecision(rounded.back(), Precision::Float16);
    }
    Executor byHand(g, test::staticFlags(false));
    test::OutputWatcher handWatch;
    handWatch.nodes = { "fc1" };
    byHand.attach(&handWatch);
    byHand.run(rounded);
    Tensor expected = handWatch.seen.at("fc1").copy();
    roundToPrecision(expected, Precision::Float16);

    Executor half(g, test::staticFlags(true));
    half.setPrecision(resolvePrecision(*g, { { "fc1", Precision::Float16 } }));
    test::OutputWatcher watch;
    watch.nodes = { "fc1", "relu1" };
    half.attach(&watch);
    half.run(in);
    const Tensor& got = watch.seen.at("fc1");
    ASSERT_EQ(got.shape(), expected.shape());
    for (int64_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(got.data()[i], expected.data()[i]) << i;
    // The tensors it read are unchanged (it rounded copies), and relu1, in float32, reads the
    // rounded output.
    for (size_t v = 0; v < in.size(); ++v)
        for (int64_t i = 0; i < in[v].size(); ++i)
            ASSERT_EQ(in[v].data()[i], kept[v].data()[i]);
    for (int64_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(watch.seen.at("relu1").data()[i], std::max(expected.data()[i], 0.0f));

    // Back to float32: the next run makes a new plan and computes as before.
    Executor plain(g, test::staticFlags(true));
    const Tensor reference = plain.run(in).outputs.at(0).copy();
    half.setPrecision({});
    const Tensor again = half.run(in).outputs.at(0);
    for (int64_t i = 0; i < again.size(); ++i)
        EXPECT_EQ(again.data()[i], reference.data()[i]);
}

TEST(ReducedPrecision, RulesSelectNodesOperatorsOrAllAndANamedNodeWins)
{
    const auto g = test::mlpGraph();
    auto p = resolvePrecision(*g, { { "all", Precision::BFloat16 } });
    EXPECT_EQ(p[idOf(*g, "fc1")], Precision::BFloat16);
    EXPECT_EQ(p[idOf(*g, "relu1")], Precision::BFloat16);
    EXPECT_EQ(p[idOf(*g, "data")], Precision::Float32) << "variables are not nodes that compute";
    p = resolvePrecision(*g, { { "fc2", Precision::BFloat16 }, { "FullyConnected", Precision::Float16 } });
    EXPECT_EQ(p[idOf(*g, "fc1")], Precision::Float16);
    EXPECT_EQ(p[idOf(*g, "fc2")], Precision::BFloat16) << "named outright";
    EXPECT_EQ(p[idOf(*g, "relu1")], Precision::Float32);
    try {
        resolvePrecision(*g, { { "fc9", Precision::Float16 } });
        ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("'fc9'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(resolvePrecision(*g, { { "data", Precision::Float16 } }), UsageError) << "a variable";
}

TEST(ReducedPrecision, ANodeInReducedPrecisionIsNeverFused)
{
    test::GraphBuilder b;
    const uint32_t c = b.conv("conv1", b.data);
    const uint32_t r = b.op("Activation", "relu1", c, { { "act_type", "relu" } });
    b.g->setHeads({ { r, 0, 0 } });
    b.g->finalize();
    Generator gen(5);
    const std::vector<Tensor> in { Tensor::uniform(Shape({ 1, 16, 8, 8 }), -1, 1, &gen),
        Tensor::uniform(Shape({ 16, 16, 3, 3 }), -1, 1, &gen), Tensor::uniform(Shape({ 16 }), -1, 1, &gen) };
    Executor e(b.g, test::staticFlags(true));
    e.run(in);
    if (e.kernelBackends()[c] != "dnnl") GTEST_SKIP() << "oneDNN runs no convolution on this machine: nothing to fuse";
    ASSERT_EQ(e.fusedInto(r), static_cast<int64_t>(c));
    for (const char* target : { "relu1", "conv1" }) {
        e.setPrecision(resolvePrecision(*b.g, { { target, Precision::Float16 } }));
        const Tensor out = e.run(in).outputs.at(0);
        EXPECT_EQ(e.fusedInto(r), -1) << target;
        for (int64_t i = 0; i < out.size(); ++i)
            ASSERT_EQ(out.data()[i], roundToHalf(out.data()[i])) << target << " rounds what it writes";
    }
}

TEST(ReducedPrecision, ATrainingRunIsRefused)
{
    // A training kernel updates inputs in place (BatchNorm's statistics); rounded copies would lose it.
    const auto g = test::mlpGraph();
    Executor e(g, test::staticFlags(false));
    e.setPrecision(resolvePrecision(*g, { { "all", Precision::Float16 } }));
    RunContext training;
    training.training = true;
    EXPECT_THROW(e.run(test::mlpInputs(2), training), Error);
    RunContext inference;
    EXPECT_NO_THROW(e.run(test::mlpInputs(2), inference));
}
