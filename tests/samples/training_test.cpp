// The teaching samples learn: mlp fits the spirals, the shipped lenet weights read held-out digits,
// and training is reproducible from its seed.

#include "core/error.h"
#include "models/evaluation.h"
#include "models/registry.h"
#include "models/training.h"

#include <gtest/gtest.h>

using namespace opscope;

TEST(Training, MlpLearnsTheSpirals)
{
    samples::Sample mlp = samples::makeSample("mlp", 3);
    samples::TrainSetup setup = samples::trainingSetup("mlp", 3);
    const double before = samples::accuracy(*mlp.block, setup.test);
    std::vector<samples::EpochReport> reports;
    samples::train(*mlp.block, setup, 3, [&](const samples::EpochReport& r) { reports.push_back(r); });
    ASSERT_EQ(static_cast<int>(reports.size()), setup.epochs);
    EXPECT_LT(reports.back().loss, reports.front().loss);
    EXPECT_LT(before, 0.6);
    EXPECT_GE(reports.back().testAccuracy, 0.95);
    EXPECT_DOUBLE_EQ(reports.back().testAccuracy, samples::accuracy(*mlp.block, setup.test));
}

TEST(Training, IsReproducibleFromItsSeed)
{
    std::vector<float> weights[2];
    for (int run = 0; run < 2; ++run) {
        samples::Sample mlp = samples::makeSample("mlp", 5);
        samples::TrainSetup setup = samples::trainingSetup("mlp", 5);
        setup.epochs = 2;
        samples::train(*mlp.block, setup, 5);
        weights[run] = mlp.block->collect_params().values().front()->data().toVector();
    }
    EXPECT_EQ(weights[0], weights[1]);
}

TEST(Training, TheShippedLenetWeightsReadHeldOutDigits)
{
    samples::Sample lenet = samples::makeSample("lenet");
    const samples::Dataset heldOut = samples::digits(2000, 991); // a seed training never used
    EXPECT_GE(samples::accuracy(*lenet.block, heldOut), 0.97);
    // Without them, the same network guesses.
    samples::Sample fresh = samples::makeSample("lenet", 0, false);
    EXPECT_LT(samples::accuracy(*fresh.block, heldOut), 0.3);
}

TEST(Training, OnlySamplesWithDataTrain)
{
    EXPECT_THROW(samples::trainingSetup("nan-demo"), UsageError);
}

TEST(Evaluation, TheConfusionMatrixAndTheMostConfidentMistakes)
{
    // mlp from its seed on 3 spiral classes: the counts add up, the diagonal is the accuracy.
    samples::Sample s = samples::makeSample("mlp", 0, false);
    s.block->hybridize();
    const samples::Dataset d = samples::spirals(300, 3, 0.15, 9);
    const std::optional<samples::Evaluation> e = samples::evaluate(*s.block, d, 64);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->classes, 3);
    int64_t total = 0, diagonal = 0;
    for (int64_t t = 0; t < 3; ++t)
        for (int64_t p = 0; p < 3; ++p) {
            total += e->count(t, p);
            diagonal += t == p ? e->count(t, p) : 0;
            EXPECT_EQ(static_cast<int64_t>(e->cell(d, t, p).size()), e->count(t, p));
        }
    EXPECT_EQ(total, 300);
    EXPECT_DOUBLE_EQ(e->accuracy, static_cast<double>(diagonal) / 300);
    EXPECT_DOUBLE_EQ(e->accuracy, samples::accuracy(*s.block, d));
    const std::vector<int64_t> wrong = e->mistakes(d, 10);
    EXPECT_EQ(static_cast<int64_t>(wrong.size()), std::min<int64_t>(10, 300 - diagonal));
    for (size_t i = 1; i < wrong.size(); ++i)
        EXPECT_GE(e->confidence[static_cast<size_t>(wrong[i - 1])], e->confidence[static_cast<size_t>(wrong[i])]);
    for (int64_t i : wrong)
        EXPECT_NE(e->predicted[static_cast<size_t>(i)], static_cast<int64_t>(d.label.at(i)));
    EXPECT_FALSE(samples::evaluate(*s.block, d, 64, [] { return true; }));
}
