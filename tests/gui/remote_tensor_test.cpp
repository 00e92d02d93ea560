// A tensor that stays where its engine runs, as the inspector shows it: the value table reads
// windows of it page by page, statistics and histograms are asked for, Fetch Whole replaces it
// with its values. A source over a local tensor stands in for the server (the window's own test
// runs the same against a served session).

#include "debug/tensor_slice.h"
#include "debug/tensor_stats.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/histogram_view.h"
#include "gui/tensor/stats_table.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/tensor_source.h"
#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor_test_util.h"
#include "gui/tensor/value_table.h"

#include <atomic>
#include <cmath>
#include <gtest/gtest.h>
#include <stdexcept>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QToolButton>

using namespace opscope;
using namespace opscope::gui;
using opscope::gui::test::ramp;

namespace {
constexpr int kWaitMs = 30000;

/// Answers from a tensor of this process, counting what is asked; `fail` makes every read throw.
class LocalSource : public TensorSource {
public:
    explicit LocalSource(Tensor t)
        : m_tensor(std::move(t))
    {
    }
    debug::Session::TensorSummary summary(int bins, debug::HistogramScale scale, double lo, double hi) const override
    {
        ++summaries;
        if (fail) throw std::runtime_error("t_output: the server at 10.0.0.1:5555 is gone");
        debug::Session::TensorSummary s;
        s.shape = m_tensor.shape();
        s.stats = debug::computeStats(m_tensor.view());
        s.histogram = debug::computeHistogram(m_tensor.view(), s.stats, bins, scale, lo, hi);
        return s;
    }
    debug::TensorSlice slice(const debug::SliceRequest& request) const override
    {
        ++slices;
        if (fail) throw std::runtime_error("t_output: the server at 10.0.0.1:5555 is gone");
        debug::TensorSlice s = debug::sliceOf((shrunk.defined() ? shrunk : m_tensor).view(), request);
        cells += s.rows * s.cols;
        return s;
    }
    QString where() const override { return QStringLiteral("10.0.0.1:5555"); }

    mutable std::atomic<int> summaries { 0 };
    mutable std::atomic<int> slices { 0 };
    mutable std::atomic<int64_t> cells { 0 };
    std::atomic<bool> fail { false };
    Tensor shrunk; ///< answers from this smaller tensor instead (set before reads start)

private:
    Tensor m_tensor;
};

bool waitLoaded(TensorTableModel& model, int row, int col)
{
    (void)model.index(row, col).data(); // asks for the page, as a view painting the cell does
    return QTest::qWaitFor([&] { return model.isLoaded(row, col); }, kWaitMs);
}
} // namespace

TEST(RemoteTensor, TheValueTableReadsOnlyThePagesItShows)
{
    const Tensor t = ramp({ 2, 3, 300, 100 });
    auto source = std::make_shared<LocalSource>(t);
    TensorTableModel model;
    model.setSource(t.shape(), t.dtype(), source);
    ASSERT_TRUE(model.isRemote());
    EXPECT_EQ(model.totalRows(), 300);
    EXPECT_EQ(model.totalColumns(), 100);
    EXPECT_EQ(source->slices, 0) << "nothing is read before it is shown";
    EXPECT_FALSE(model.isLoaded(0, 0));
    EXPECT_EQ(model.index(0, 0).data().toString(), QStringLiteral("…"));
    ASSERT_TRUE(waitLoaded(model, 0, 0));
    EXPECT_EQ(model.valueAt(5, 7), t.at(5 * 100 + 7));
    EXPECT_EQ(model.index(5, 7).data().toString(), model.textOf(t.at(5 * 100 + 7), false));
    EXPECT_EQ(source->slices, 1);
    EXPECT_EQ(source->cells, TensorTableModel::kPageRows * TensorTableModel::kPageColumns);
    // A cell of another page, at the table's far corner, and of another fixed index.
    ASSERT_TRUE(model.ensureLoaded(299, 99));
    ASSERT_TRUE(waitLoaded(model, 299, 99));
    EXPECT_EQ(model.valueAt(299, 99), t.at(299 * 100 + 99));
    model.setFixedIndex(0, 1);
    model.setFixedIndex(1, 2);
    EXPECT_FALSE(model.isLoaded(299, 99)) << "the pages of the other slice are dropped";
    ASSERT_TRUE(waitLoaded(model, 130, 40));
    EXPECT_EQ(model.valueAt(130, 40), t.at(((1 * 3 + 2) * 300 + 130) * 100 + 40));
    EXPECT_LE(source->cells, 3 * TensorTableModel::kPageRows * TensorTableModel::kPageColumns)
        << "three pages, not the tensor";
    // A window of the last two axes only: the row axis cannot be chosen.
    model.setRowAxis(1);
    EXPECT_EQ(model.rowAxis(), 2);
}

TEST(RemoteTensor, TheNewestPagesAreReadFirstAndALongQueueDropsItsOldest)
{
    const Tensor t = ramp({ 40 * TensorTableModel::kPageRows, 2 });
    auto source = std::make_shared<LocalSource>(t);
    TensorTableModel model;
    model.setSource(t.shape(), t.dtype(), source);
    ASSERT_TRUE(model.ensureLoaded(40 * TensorTableModel::kPageRows - 1, 0));
    for (int page = 0; page < 30; ++page) // a fast scroll paints 30 pages
        (void)model.index(page * TensorTableModel::kPageRows, 0).data();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !model.isFetching(); }, kWaitMs));
    EXPECT_TRUE(model.isLoaded(29 * TensorTableModel::kPageRows, 0)) << "the page on screen";
    EXPECT_FALSE(model.isLoaded(5 * TensorTableModel::kPageRows, 0)) << "scrolled past, dropped from the queue";
    EXPECT_LE(source->slices, 1 + static_cast<int>(TensorTableModel::kMaxQueuedPages));
}

TEST(RemoteTensor, AWindowSmallerThanAskedIsAnErrorNotMissingValues)
{
    const Tensor t = ramp({ 300, 100 });
    auto source = std::make_shared<LocalSource>(t);
    source->shrunk = ramp({ 50, 100 }); // the name now answers for another tensor
    TensorTableModel model;
    model.setSource(t.shape(), t.dtype(), source);
    (void)model.index(0, 0).data();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !model.fetchError().isEmpty(); }, kWaitMs));
    EXPECT_TRUE(model.fetchError().contains(QStringLiteral("changed"))) << model.fetchError().toStdString();
    EXPECT_FALSE(model.isLoaded(60, 0));
}

TEST(RemoteTensor, AOneDimensionalTensorIsOneColumn)
{
    const Tensor t = ramp({ 1000 });
    auto source = std::make_shared<LocalSource>(t);
    TensorTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSource(t.shape(), t.dtype(), source);
    EXPECT_EQ(model.totalRows(), 1000);
    EXPECT_EQ(model.totalColumns(), 1);
    ASSERT_TRUE(model.ensureLoaded(700, 0));
    ASSERT_TRUE(waitLoaded(model, 700, 0));
    EXPECT_EQ(model.valueAt(700, 0), t.at(700));
    EXPECT_EQ(model.valueAt(640, 0), t.at(640));
}

TEST(RemoteTensor, TheTypeTheSourceReportsIsTheOneTheValuesPrintAs)
{
    // Announced as float32 (a server's description has shapes only), held as int64 there.
    Tensor t({ 4, 3 }, DType::Int64);
    for (int64_t i = 0; i < t.size(); ++i)
        static_cast<int64_t*>(t.raw())[i] = 1000000007 + i;
    auto source = std::make_shared<LocalSource>(t);
    TensorTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSource(t.shape(), DType::Float32, source);
    ASSERT_TRUE(model.ensureLoaded(2, 1));
    ASSERT_TRUE(waitLoaded(model, 2, 1));
    EXPECT_EQ(model.index(2, 1).data().toString(), QStringLiteral("1000000014")) << "printed as the integer it is";
}

TEST(RemoteTensor, AFailedReadIsShownOnceAndNotRetriedInALoop)
{
    const Tensor t = ramp({ 40, 40 });
    auto source = std::make_shared<LocalSource>(t);
    source->fail = true;
    ValueTable table;
    table.resize(600, 400);
    table.show();
    table.setSource(t.shape(), t.dtype(), source);
    TensorTableModel* model = table.model();
    (void)model->index(0, 0).data();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !model->fetchError().isEmpty(); }, kWaitMs));
    EXPECT_TRUE(model->fetchError().contains(QStringLiteral("10.0.0.1:5555"))) << model->fetchError().toStdString();
    EXPECT_EQ(model->index(0, 0).data(Qt::ToolTipRole).toString(), model->fetchError());
    const int reads = source->slices;
    QTest::qWait(200); // painting asks for cells again: nothing more is read
    (void)model->index(3, 3).data();
    QTest::qWait(50);
    EXPECT_EQ(source->slices, reads);
    EXPECT_FALSE(model->isFetching());
    // Another slice tries again (and now succeeds).
    source->fail = false;
    table.setSource(t.shape(), t.dtype(), source);
    ASSERT_TRUE(waitLoaded(*model, 39, 39));
    EXPECT_EQ(model->valueAt(39, 39), t.at(39 * 40 + 39));
}

TEST(RemoteTensor, TheInspectorAsksForStatisticsAndOffersFetchWhole)
{
    const Tensor t = ramp({ 1, 8, 30, 30 });
    auto source = std::make_shared<LocalSource>(t);
    TensorInspector inspector;
    inspector.resize(700, 800);
    inspector.show();
    QSignalSpy ready(&inspector, &TensorInspector::histogramReady);
    InspectedTensor remote { QStringLiteral("t_output"), QStringLiteral("output"), source, t.shape(), t.dtype() };
    inspector.setTensors(QStringLiteral("t"), { remote }, 0);
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector.hasResult(); }, kWaitMs));
    EXPECT_FALSE(inspector.currentTensor()->defined()) << "the values stay where they are";
    ASSERT_NE(inspector.currentInspected(), nullptr);
    EXPECT_TRUE(inspector.currentInspected()->remote());
    const debug::TensorStats here = debug::computeStats(t.view());
    EXPECT_EQ(inspector.stats().min, here.min);
    EXPECT_EQ(inspector.stats().max, here.max);
    EXPECT_EQ(inspector.stats().mean, here.mean);
    uint64_t counted = 0;
    for (uint64_t c : inspector.histogram().bins)
        counted += c;
    EXPECT_EQ(counted, static_cast<uint64_t>(t.size()));
    EXPECT_GE(source->summaries, 1);
    EXPECT_EQ(source->slices, 0) << "the histogram tab reads no values";

    // Other bins: asked for again, there.
    const int before = source->summaries;
    inspector.histogramView()->setBins(16);
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector.hasResult() && inspector.histogram().bins.size() == 16u; }, kWaitMs));
    EXPECT_GT(source->summaries, before);

    // The value table reads the pages it shows.
    inspector.setCurrentTab(TensorInspector::Tab::Values);
    TensorTableModel* model = inspector.valueTable()->model();
    ASSERT_TRUE(model->isRemote());
    ASSERT_TRUE(waitLoaded(*model, 2, 3));
    EXPECT_EQ(model->valueAt(2, 3), t.at(2 * 30 + 3));

    // The Image tab reads the maps of the item it shows.
    inspector.setCurrentTab(TensorInspector::Tab::Image);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !inspector.isReading() && inspector.featureMapView()->tensor().defined(); }, kWaitMs));
    EXPECT_EQ(inspector.featureMapView()->mapCount(), 8);

    // Fetch Whole: asked of whoever holds the engine; the values given replace the source.
    auto* fetch = inspector.findChild<QToolButton*>(QStringLiteral("fetchWholeTensor"));
    ASSERT_NE(fetch, nullptr);
    EXPECT_TRUE(fetch->isVisible());
    QSignalSpy asked(&inspector, &TensorInspector::fetchWholeRequested);
    fetch->click();
    ASSERT_EQ(asked.size(), 1);
    EXPECT_EQ(asked.front().front().toString(), QStringLiteral("t_output"));
    EXPECT_FALSE(fetch->isEnabled()) << "one fetch at a time";
    inspector.histogramView()->setBins(32); // a histogram landing meanwhile leaves it so
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector.hasResult(); }, kWaitMs));
    EXPECT_FALSE(fetch->isEnabled());
    inspector.fetchWholeFailed(QStringLiteral("t_output"));
    EXPECT_TRUE(fetch->isEnabled()) << "offered again after a failure";
    fetch->click();
    EXPECT_FALSE(inspector.setValues(QStringLiteral("t_output"), ramp({ 8, 30, 30 }))) << "another shape";
    EXPECT_TRUE(fetch->isEnabled());
    ASSERT_TRUE(inspector.setValues(QStringLiteral("t_output"), t));
    ASSERT_TRUE(inspector.currentTensor()->defined());
    EXPECT_FALSE(inspector.currentInspected()->remote());
    EXPECT_FALSE(fetch->isVisible());
    EXPECT_FALSE(inspector.valueTable()->model()->isRemote());
    const QList<QComboBox*> axes = inspector.valueTable()->findChildren<QComboBox*>();
    ASSERT_GE(axes.size(), 2);
    EXPECT_TRUE(axes[0]->isEnabled() && axes[1]->isEnabled()) << "the axes can be chosen again here";
    EXPECT_EQ(inspector.featureMapView()->mapCount(), 8);
}

TEST(RemoteTensor, TheImageViewReadsOnlyTheBatchItemItShows)
{
    const Tensor t = ramp({ 3, 4, 20, 30 });
    auto source = std::make_shared<LocalSource>(t);
    FeatureMapView view;
    view.resize(700, 600);
    view.setSource(t.shape(), source);
    EXPECT_EQ(source->slices, 0) << "nothing is read while the view is hidden";
    view.show();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !view.isReading() && view.tensor().defined(); }, kWaitMs));
    EXPECT_EQ(view.tensor().shape(), Shape({ 1, 4, 20, 30 }));
    EXPECT_EQ(view.mapCount(), 4);
    EXPECT_EQ(source->slices, 4) << "one window per map of item 0";
    EXPECT_EQ(source->cells, 4 * 20 * 30);
    for (int64_t i = 0; i < 4 * 20 * 30; i += 7)
        ASSERT_EQ(view.tensor().at(i), t.at(i));
    // Another item: read on its own; what is reported is the tensor's index.
    view.setBatch(2);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !view.isReading() && view.tensor().at(0) == t.at(2 * 4 * 20 * 30); }, kWaitMs));
    EXPECT_EQ(view.tensor().at(3 * 600 + 19 * 30 + 29), t.at(((2 * 4 + 3) * 20 + 19) * 30 + 29));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !view.isRendering(); }, kWaitMs));
    const QRect map1 = view.mapRect(1);
    ASSERT_FALSE(map1.isEmpty());
    const QString text = view.valueTextAt(map1.topLeft() + QPoint(1, 1));
    EXPECT_TRUE(text.startsWith(QStringLiteral("(2, 1, 0, 0) = "))) << text.toStdString();
}

TEST(RemoteTensor, ALargeMapIsReadInBandsAndAFailedReadSaysWhy)
{
    const Tensor t = ramp({ 300, 300 });
    auto source = std::make_shared<LocalSource>(t);
    FeatureMapView view;
    view.resize(700, 600);
    view.show();
    view.setSource(t.shape(), source);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !view.isReading() && view.tensor().defined(); }, kWaitMs));
    EXPECT_EQ(source->slices, 2) << "90,000 values in two bands of rows";
    EXPECT_EQ(view.tensor().at(299 * 300 + 299), t.at(299 * 300 + 299));

    source->fail = true;
    view.setSource(t.shape(), source);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !view.isReading(); }, kWaitMs));
    bool said = false;
    for (const QLabel* label : view.findChildren<QLabel*>())
        said = said || (label->isVisible() && label->text().contains(QStringLiteral("could not be read from 10.0.0.1:5555")));
    EXPECT_TRUE(said);
}
