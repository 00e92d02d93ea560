// The tensor inspector: histogram counts, statistics, the lazy value table under the model tester,
// the feature-map view and exports.

#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/histogram_view.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/tensor_table_model.h"
#include "io/npy.h"

#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace opscope;
using namespace opscope::gui;

namespace {
constexpr int kWaitMs = 30000;

Tensor ramp(const Shape& s)
{
    Tensor t(s);
    for (int64_t i = 0; i < t.size(); ++i)
        t.at(i) = static_cast<float>(i % 97) - 40.0f;
    return t;
}
} // namespace

TEST(TensorInspector, HistogramCountsEveryElementAndFollowsTheTensorPicked)
{
    TensorInspector inspector;
    inspector.resize(560, 700);
    inspector.show();
    Tensor out = ramp({ 1, 4, 6, 6 });
    out.at(3) = std::nanf("");
    out.at(5) = INFINITY;
    Tensor w = Tensor::full({ 4, 1, 3, 3 }, 0.5f);
    QSignalSpy ready(&inspector, &TensorInspector::histogramReady);
    inspector.setTensors(QStringLiteral("conv (Convolution) — after"),
        { { QStringLiteral("conv_weight"), QStringLiteral("weight"), w },
            { QStringLiteral("conv_output"), QStringLiteral("output"), out } },
        1);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_EQ(inspector.currentTensorName(), QStringLiteral("conv_output"));
    const debug::Histogram& h = inspector.histogram();
    EXPECT_EQ(
        std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)) + h.nan + h.inf, static_cast<uint64_t>(out.size()));
    EXPECT_EQ(h.nan, 1u);
    EXPECT_EQ(h.inf, 1u);
    EXPECT_EQ(inspector.stats().count, out.size());
    EXPECT_EQ(inspector.stats().nan, 1);

    // Picking another tensor shows it; the next pause re-picks the same name.
    ready.clear();
    ASSERT_TRUE(inspector.showTensor(QStringLiteral("conv_weight")));
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_DOUBLE_EQ(inspector.stats().mean, 0.5);
    ready.clear();
    inspector.setTensors(QStringLiteral("conv (Convolution) — after"),
        { { QStringLiteral("conv_weight"), QStringLiteral("weight"), w },
            { QStringLiteral("conv_output"), QStringLiteral("output"), out } },
        1);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_EQ(inspector.currentTensorName(), QStringLiteral("conv_weight"));

    // Exports.
    QTemporaryDir dir;
    QString error;
    const QString npy = dir.filePath(QStringLiteral("w.npy"));
    ASSERT_TRUE(inspector.exportNpy(npy, &error)) << error.toStdString();
    const Tensor back = readNpy(npy.toStdString());
    EXPECT_EQ(back.shape(), w.shape());
    EXPECT_FLOAT_EQ(back.at(7), 0.5f);
    ASSERT_TRUE(inspector.exportHistogramPng(dir.filePath(QStringLiteral("h.png")), &error)) << error.toStdString();
    EXPECT_FALSE(inspector.exportNpy(QStringLiteral("/nonexistent/dir/x.npy"), &error));
    EXPECT_FALSE(error.isEmpty());
}

TEST(TensorInspector, ALargeTensorIsSummarisedOffTheGuiThread)
{
    TensorInspector inspector;
    inspector.show();
    const Tensor big = Tensor::normal({ 1, 3, 1000, 1000 }, 0, 1);
    QSignalSpy ready(&inspector, &TensorInspector::histogramReady);
    inspector.setTensors(QStringLiteral("big"), { { QStringLiteral("big_output"), QStringLiteral("output"), big } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    const debug::Histogram& h = inspector.histogram();
    EXPECT_EQ(std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)), static_cast<uint64_t>(big.size()));
    EXPECT_NEAR(inspector.stats().mean, 0.0, 0.01);
}

TEST(TensorTableModel, ShowsA2DSliceWithFixedAxesAndPassesTheModelTester)
{
    TensorTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    EXPECT_EQ(model.rowCount(), 0);
    const Tensor t = ramp({ 2, 3, 4, 5 });
    model.setTensor(t);
    while (model.canFetchMore({}))
        model.fetchMore({});
    EXPECT_EQ(model.rowCount(), 4);
    EXPECT_EQ(model.columnCount(), 5);
    model.setFixedIndex(0, 1);
    model.setFixedIndex(1, 2);
    while (model.canFetchMore({}))
        model.fetchMore({});
    // (1, 2, r, c) → flat ((1*3 + 2)*4 + r)*5 + c
    EXPECT_FLOAT_EQ(model.valueAt(3, 4), t.at(((1 * 3 + 2) * 4 + 3) * 5 + 4));
    EXPECT_EQ(model.index(3, 4).data().toString(), QString::number(t.at(((1 * 3 + 2) * 4 + 3) * 5 + 4), 'g', 6));
    // Other axes displayed: rows over axis 1, columns over axis 3.
    model.setRowAxis(1);
    model.setColumnAxis(3);
    while (model.canFetchMore({}))
        model.fetchMore({});
    EXPECT_EQ(model.rowCount(), 3);
    EXPECT_EQ(model.columnCount(), 5);
    model.setTensor(Tensor());
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(TensorTableModel, TenMillionElementsAreFetchedLazily)
{
    TensorTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const Tensor t = Tensor::zeros({ 10000000 });
    model.setTensor(t);
    EXPECT_EQ(model.totalRows() * model.totalColumns(), 10000000);
    EXPECT_LT(model.rowCount(), 100000); // not every row at once
    EXPECT_TRUE(model.canFetchMore({}));
    const int before = model.rowCount();
    model.fetchMore({});
    EXPECT_GT(model.rowCount(), before);
}

TEST(FeatureMapView, ShowsEveryChannelAndTellsTheValueUnderTheCursor)
{
    FeatureMapView view;
    view.resize(500, 500);
    view.show();
    EXPECT_TRUE(FeatureMapView::canShow(Shape { 1, 10, 24, 24 }));
    EXPECT_TRUE(FeatureMapView::canShow(Shape { 20, 30 }));
    const Tensor t = ramp({ 1, 10, 24, 24 });
    view.setTensor(t);
    EXPECT_TRUE(QTest::qWaitFor([&] { return view.mapCount() == 10; }, kWaitMs));
    const QImage image = view.renderImage();
    EXPECT_FALSE(image.isNull());
}
