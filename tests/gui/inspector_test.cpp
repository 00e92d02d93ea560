// The tensor inspector: histogram counts, statistics, the lazy value table under the model tester,
// the feature-map view and exports.

#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/histogram_view.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor_test_util.h"
#include "gui/tensor/value_format.h"
#include "io/npy.h"

#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <qcustomplot.h>

using namespace opscope;
using namespace opscope::gui;
using opscope::gui::test::ramp;

namespace {
constexpr int kWaitMs = 30000;

/// The text of the message the histogram pane shows in place of a plot ("" when it shows a plot).
QString histogramMessage(HistogramView* view)
{
    if (view->plot()->isVisible()) return {};
    for (const QLabel* label : view->findChildren<QLabel*>())
        if (label->isVisible() && !label->text().isEmpty() && label->wordWrap()) return label->text();
    return {};
}

QToolButton* exportHistogramButton(TensorInspector& inspector)
{
    return inspector.findChild<QToolButton*>(QStringLiteral("exportHistogramPng"));
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

TEST(TensorInspector, ATensorWithoutFiniteValuesSaysSoInsteadOfAnEmptyHistogram)
{
    TensorInspector inspector;
    inspector.resize(560, 700);
    inspector.show();
    QSignalSpy ready(&inspector, &TensorInspector::histogramReady);
    const float nan = std::nanf("");
    inspector.setTensors(QStringLiteral("log (log) — after"),
        { { QStringLiteral("log_output"), QStringLiteral("output"), Tensor::full({ 1, 10 }, nan) } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    HistogramView* view = inspector.histogramView();
    EXPECT_FALSE(view->plot()->isVisible()) << "no 0-1 axes without a value to draw";
    EXPECT_TRUE(histogramMessage(view).contains(QStringLiteral("All 10 values are NaN")))
        << histogramMessage(view).toStdString();
    QToolButton* png = exportHistogramButton(inspector);
    ASSERT_NE(png, nullptr);
    EXPECT_FALSE(png->isEnabled());

    // Infinities, and a mix: the counts of each kind.
    Tensor mixed = Tensor::full({ 2, 3 }, INFINITY);
    mixed.at(0) = -INFINITY;
    mixed.at(1) = nan;
    ready.clear();
    inspector.setTensors(QStringLiteral("x"), { { QStringLiteral("x_output"), QStringLiteral("output"), mixed } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_TRUE(histogramMessage(view).contains(QStringLiteral("All 6 values are NaN or Inf: 1 NaN, 4 +Inf, 1 -Inf")))
        << histogramMessage(view).toStdString();
    ready.clear();
    inspector.setTensors(QStringLiteral("x"),
        { { QStringLiteral("x_output"), QStringLiteral("output"), Tensor::full({ 3 }, -INFINITY) } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_TRUE(histogramMessage(view).contains(QStringLiteral("All 3 values are -Inf")))
        << histogramMessage(view).toStdString();

    // A tensor with a finite value plots again.
    mixed.at(2) = 1.5f;
    ready.clear();
    inspector.setTensors(QStringLiteral("x"), { { QStringLiteral("x_output"), QStringLiteral("output"), mixed } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    EXPECT_TRUE(view->plot()->isVisible());
    EXPECT_TRUE(histogramMessage(view).isEmpty());
    EXPECT_TRUE(png->isEnabled());
}

TEST(TensorInspector, ExportHistogramPngOnlyWhereAHistogramIsShown)
{
    TensorInspector inspector;
    inspector.resize(560, 700);
    inspector.show();
    QSignalSpy ready(&inspector, &TensorInspector::histogramReady);
    inspector.setTensors(QStringLiteral("conv"),
        { { QStringLiteral("conv_output"), QStringLiteral("output"), ramp({ 1, 4, 6, 6 }) } }, 0);
    ASSERT_TRUE(ready.count() > 0 || ready.wait(kWaitMs));
    QToolButton* png = exportHistogramButton(inspector);
    ASSERT_NE(png, nullptr);
    EXPECT_TRUE(png->isVisible());
    EXPECT_TRUE(png->isEnabled());
    inspector.setCurrentTab(TensorInspector::Tab::Values);
    EXPECT_FALSE(png->isVisible()) << "the Values tab has no histogram";
    inspector.setCurrentTab(TensorInspector::Tab::Image);
    EXPECT_EQ(inspector.currentTab(), TensorInspector::Tab::Image);
    EXPECT_FALSE(png->isVisible()) << "the Image tab has no histogram";
    inspector.setCurrentTab(TensorInspector::Tab::Histogram);
    EXPECT_TRUE(png->isVisible());
}

TEST(ValueFormat, CompactTextKeepsFourSignificantDigitsAndAShortExponent)
{
    EXPECT_EQ(formatCompact(-4.660171), QStringLiteral("-4.66"));
    EXPECT_EQ(formatCompact(-2.8366318), QStringLiteral("-2.837"));
    EXPECT_EQ(formatCompact(0.000123456), QStringLiteral("0.0001235"));
    EXPECT_EQ(formatCompact(1.23456e-5), QStringLiteral("1.235e-5"));
    EXPECT_EQ(formatCompact(-2.5e12), QStringLiteral("-2.5e12"));
    EXPECT_EQ(formatCompact(12345.0), QStringLiteral("1.235e4"));
    EXPECT_EQ(formatCompact(0.0), QStringLiteral("0"));
    EXPECT_EQ(formatCompact(std::nan("")), QStringLiteral("nan"));
    EXPECT_EQ(formatCompact(-INFINITY), QStringLiteral("-inf"));
    // Read back, the text is the value to 4 digits.
    EXPECT_NEAR(formatCompact(1.23456e-5).toDouble(), 1.23456e-5, 1e-8);
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
    EXPECT_EQ(model.index(3, 4).data().toString(), formatCompact(t.at(((1 * 3 + 2) * 4 + 3) * 5 + 4)));
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

// Integer and bool tensors show whole numbers and true/false, never read as float32.
TEST(TensorTableModel, IntegerAndBoolTensorsShowTheirOwnValues)
{
    TensorTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const Tensor ids = Tensor::fromTyped<int64_t>(Shape({ 2, 2 }), std::vector<int64_t> { 7, -3, 123456789012, 0 });
    model.setTensor(ids);
    while (model.canFetchMore({}))
        model.fetchMore({});
    EXPECT_EQ(model.index(0, 1).data().toString(), QStringLiteral("-3"));
    EXPECT_EQ(model.index(1, 0).data().toString(), QStringLiteral("123456789012"));
    const bool bits[] = { true, false, true };
    const Tensor mask = Tensor::fromTyped<bool>(Shape({ 3 }), bits);
    model.setTensor(mask);
    while (model.canFetchMore({}))
        model.fetchMore({});
    QString cells;
    for (int r = 0; r < model.rowCount(); ++r)
        for (int c = 0; c < model.columnCount(); ++c)
            cells += model.index(r, c).data().toString() + QLatin1Char(' ');
    EXPECT_EQ(cells, QStringLiteral("true false true "));
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
