// The bounds a convolution records for its output (dnnlutil::recordBounds) are found for those
// values only: the same start, at most as many, on the same thread, and not written since.

#include "ops/dnnl/finite_input.h"

#include <gtest/gtest.h>

#include <thread>

using namespace opscope;
using dnnlutil::recordBounds;
using dnnlutil::recordedBounds;

TEST(RecordedBounds, AreFoundForTheValuesRecordedUntilTheyAreWritten)
{
    const Tensor t = Tensor::uniform(Shape({ 4, 6 }), 0, 6);
    (void)t.data(); // as the kernel that wrote it
    recordBounds(t, 0.0f, 6.0f);
    ASSERT_TRUE(recordedBounds(t).has_value());
    EXPECT_EQ(*recordedBounds(t), std::make_pair(0.0f, 6.0f));
    EXPECT_EQ(recordedBounds(t.reshape(Shape({ 24 }))), std::make_pair(0.0f, 6.0f)) << "the same values";
    EXPECT_TRUE(recordedBounds(t[0]).has_value()) << "the first row: the same start, fewer values";
    EXPECT_FALSE(recordedBounds(t[1]).has_value()) << "another start";
    EXPECT_FALSE(recordedBounds(t.copy()).has_value()) << "another tensor with the same values";
    std::optional<std::pair<float, float>> elsewhere;
    std::thread([&] { elsewhere = recordedBounds(t); }).join();
    EXPECT_FALSE(elsewhere.has_value()) << "another thread";

    t.at(3) = 100.0f; // a write through any handle of the storage
    EXPECT_FALSE(recordedBounds(t).has_value());
    recordBounds(t, -1.0f, 1.0f); // recorded again: the latest holds
    EXPECT_EQ(recordedBounds(t), std::make_pair(-1.0f, 1.0f));
    (void)t[0].data();
    EXPECT_FALSE(recordedBounds(t).has_value()) << "written through a row";
}

TEST(RecordedBounds, TheOldestOfManyIsForgotten)
{
    std::vector<Tensor> many;
    for (int k = 0; k < 20; ++k) {
        many.push_back(Tensor::zeros(Shape({ 8 })));
        recordBounds(many.back(), 0.0f, static_cast<float>(k));
    }
    EXPECT_FALSE(recordedBounds(many.front()).has_value());
    EXPECT_EQ(recordedBounds(many.back()), std::make_pair(0.0f, 19.0f));
}
