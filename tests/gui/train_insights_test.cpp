// The Train dock's views of each epoch: the held-out confusion matrix (a cell opens its examples),
// the most confident mistakes, and every parameter's histograms over the epochs as a ridge plot.

#include "gui/train/train_charts.h"
#include "gui/train/train_insights.h"
#include "gui/train/train_panel.h"
#include "gui_test_util.h"
#include "models/real_data.h"

#include <gtest/gtest.h>

#include <QDockWidget>
#include <qcustomplot.h>

#include <cstdlib>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {
bool trainAndWait(TrainPanel* p)
{
    QSignalSpy finished(p, &TrainPanel::trainingFinished);
    QSignalSpy failed(p, &TrainPanel::trainingFailed);
    if (!p->startTraining()) return false;
    return QTest::qWaitFor([&] { return !finished.isEmpty() || !failed.isEmpty(); }, 300000) && failed.isEmpty();
}
} // namespace

TEST(TrainInsights, MlpsConfusionMatrixMistakesAndRidgePlot)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(8);
    p->setFromInitialWeights(true);
    ASSERT_TRUE(p->setDataSet(QStringLiteral("spirals")));
    EXPECT_FALSE(p->setDataSet(QStringLiteral("mnist"))); // points, not images
    ASSERT_TRUE(trainAndWait(p)) << p->lastError().toStdString();
    TrainInsights* in = p->insights();
    const samples::Evaluation& e = in->lastEvaluation();
    ASSERT_EQ(e.classes, 3);
    int64_t total = 0, right = 0;
    for (int64_t t = 0; t < 3; ++t)
        for (int64_t q = 0; q < 3; ++q) {
            total += e.count(t, q);
            right += t == q ? e.count(t, q) : 0;
        }
    EXPECT_EQ(total, 600); // spirals' held-out points
    EXPECT_NEAR(static_cast<double>(right) / 600, p->reports().back().testAccuracy, 1e-12);
    EXPECT_EQ(in->ridgeEpochs(), 8);
    EXPECT_GT(in->ridgePlot()->graphCount(), 0);
    if (const char* dir = std::getenv("OPSCOPE_SCREENSHOT_DIR")) {
        in->setCurrentTab(TrainInsights::Tab::OverTime);
        QCoreApplication::processEvents();
        p->grab().save(QString::fromLatin1(dir) + QStringLiteral("/train-ridge.png"));
    }
    // A cell of the matrix: its examples in the gallery, labelled with their prediction.
    in->setCurrentTab(TrainInsights::Tab::Confusion);
    QCoreApplication::processEvents();
    QTest::mouseClick(in->confusionWidget(), Qt::LeftButton, {}, in->confusionCellCentre(0, 0));
    const QStringList captions = in->galleryCaptions();
    EXPECT_EQ(captions.size(), std::min<int64_t>(60, e.count(0, 0)));
    if (!captions.isEmpty()) {
        EXPECT_TRUE(captions.front().startsWith(QStringLiteral("0\ntrue 0\n"))) << captions.front().toStdString();
    }
}

TEST(TrainInsights, FashionMistakesAreNamedAndACellClickOpensThem)
{
    try {
        samples::fashionSplit();
    } catch (const samples::DataMissing& e) {
        GTEST_SKIP() << e.what();
    }
    auto w = makeWindow();
    w->resize(1600, 1000);
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:fashion")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(1);
    p->setBatchSize(256);
    p->setFromInitialWeights(true);
    ASSERT_TRUE(trainAndWait(p)) << p->lastError().toStdString();
    TrainInsights* in = p->insights();
    ASSERT_EQ(in->lastEvaluation().classes, 10);
    EXPECT_EQ(in->lastEvaluation().predicted.size(), 10000u);
    in->setCurrentTab(TrainInsights::Tab::Mistakes);
    const QStringList mistakes = in->galleryCaptions();
    ASSERT_EQ(mistakes.size(), 60);
    EXPECT_TRUE(mistakes.front().contains(QStringLiteral("\ntrue "))) << mistakes.front().toStdString();
    // Shirts taken for T-shirts: a click on that cell.
    in->setCurrentTab(TrainInsights::Tab::Confusion);
    QCoreApplication::processEvents();
    const int64_t shirts = in->lastEvaluation().count(6, 0);
    // A real click on the cell (QCustomPlot's colour map) opens it in the gallery.
    QTest::mouseClick(in->confusionWidget(), Qt::LeftButton, {}, in->confusionCellCentre(6, 0));
    const QStringList cell = in->galleryCaptions();
    EXPECT_EQ(cell.size(), std::min<int64_t>(60, shirts));
    if (!cell.isEmpty()) {
        EXPECT_TRUE(cell.front().startsWith(QStringLiteral("T-shirt/top\ntrue Shirt\n"))) << cell.front().toStdString();
    }
    if (const char* dir = std::getenv("OPSCOPE_SCREENSHOT_DIR")) {
        in->setCurrentTab(TrainInsights::Tab::Confusion);
        QCoreApplication::processEvents();
        p->grab().save(QString::fromLatin1(dir) + QStringLiteral("/train-confusion.png"));
        in->setCurrentTab(TrainInsights::Tab::Mistakes);
        in->showCell(6, 0);
        QCoreApplication::processEvents();
        p->grab().save(QString::fromLatin1(dir) + QStringLiteral("/train-mistakes.png"));

    }
}
