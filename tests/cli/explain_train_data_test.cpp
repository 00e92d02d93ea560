// opscope-cli explain (why a classifier answered as it did) and train --data (real and synthetic
// data sets), through the real executable.

#include "cli/cli_run.h"
#include "io/npy.h"
#include "models/real_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

TEST(CliExplain, EveryMethodOnLenetWritesItsHeatMapPngAndJson)
{
    const fs::path dir = tempDir("explain");
    for (const char* method : { "saliency", "gradient-x-input", "gradcam", "occlusion" }) {
        const std::string base = (dir / method).string();
        const Result r = run(std::string("explain sample:lenet --method ") + method + " --output " + base + ".npy --png "
            + base + ".png --json " + base + ".json");
        ASSERT_EQ(r.status, 0) << method << ": " << lastStderr();
        EXPECT_NE(r.out.find(std::string(method) + " of class 7 (7)"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("top classes:  7 7"), std::string::npos) << r.out;
        const Tensor heat = readNpy(base + ".npy");
        EXPECT_EQ(heat.shape(), Shape({ 28, 28 }));
        std::ifstream png(base + ".png", std::ios::binary);
        char magic[8] = {};
        png.read(magic, 8);
        EXPECT_EQ(std::string(magic, 8), "\x89PNG\r\n\x1a\n");
        const auto j = nlohmann::json::parse(std::ifstream(base + ".json"));
        EXPECT_EQ(j["method"], method);
        EXPECT_EQ(j["class"], 7);
        EXPECT_EQ(j["class_name"], "7");
        EXPECT_EQ(j["top"].size(), 5u);
        EXPECT_EQ(j["heat_shape"], nlohmann::json({ 28, 28 }));
        EXPECT_EQ(j["layer"].get<std::string>().empty(), std::string(method) != "gradcam");
    }
}

TEST(CliExplain, TheFashionSampleNamesItsClasses)
{
    const Result r = run("explain sample:fashion --method saliency --class 7 --top 3");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("saliency of class 7 (Sneaker)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("top classes:  9 Ankle boot"), std::string::npos) << r.out;
}

TEST(CliExplain, WhatCannotBeExplainedIsAUsageError)
{
    EXPECT_EQ(run("explain sample:lenet --class 10").status, 2);
    EXPECT_NE(lastStderr().find("class 10 is outside the 10 classes"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("explain sample:lenet --method lime").status, 2);
    EXPECT_EQ(run("explain sample:lenet --method gradcam --layer nosuchnode").status, 2);
    EXPECT_NE(lastStderr().find("nosuchnode"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("explain sample:mlp --method gradcam --input data=1x2").status, 2); // points, not an image
    EXPECT_NE(lastStderr().find("needs an image"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("explain sample:mlp").status, 2); // its default input is a batch of 12 points
    EXPECT_NE(lastStderr().find("batch 1"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("explain sample:tiny-transformer").status, 2); // not one row of class scores
    EXPECT_EQ(run("explain no-such-model.onnx").status, 3);
}

TEST(CliTrainData, SyntheticDataSetsTrainAndMismatchedOnesAreRefused)
{
    Result r = run("train sample:mlp --data moons --epochs 2");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("training mlp on moons: 1000 samples, 400 held out"), std::string::npos) << r.out;
    r = run("train sample:lenet --data digits --augment 0 --epochs 1 --batch 256");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("training lenet on digits: 12000 samples, 2000 held out"), std::string::npos) << r.out;
    EXPECT_EQ(run("train sample:lenet --data spirals").status, 2);
    EXPECT_NE(lastStderr().find("cannot train on 'spirals'"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("train sample:lenet --data cifar").status, 2);
    EXPECT_NE(lastStderr().find("unknown data set 'cifar'"), std::string::npos) << lastStderr();
}

TEST(CliTrainData, RealMnistTrainsWithAugmentation)
{
    try {
        samples::mnistFolder();
        samples::mnistDigits();
    } catch (const samples::DataMissing& e) {
        GTEST_SKIP() << e.what();
    }
    const Result r = run("train sample:lenet --epochs 1 --augment 1 --batch 128");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("training lenet on mnist: 16008 samples (with 1 transformed copies of each), 1996 held out"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("epoch 1: loss"), std::string::npos) << r.out;
}

TEST(CliTrainData, AMissingDataSetNamesTheCommandThatInstallsIt)
{
    const fs::path empty = tempDir("no-data");
    const Result r = run("train sample:lenet --data mnist", "OPSCOPE_MNIST=" + empty.string() + " ");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(lastStderr().find("bash .ci/setup"), std::string::npos) << lastStderr();
}
