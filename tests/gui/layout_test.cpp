// Room to look: the window at 1280×720, 1600×1000 and 1920×1080. Every column of the Breakpoints and
// Run Record docks is on screen with its text unclipped, long node names are elided in the middle,
// NaN rows stand out, a (1, 10) output fits the Values tab, and training lays the window out for its
// plots (the Train dock large, names readable, decision regions only for 2-D data).

#include "gui/gui_test_util.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/breakpoints_panel.h"
#include "gui/panels/run_record_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/value_table.h"
#include "gui/train/train_charts.h"
#include "gui/train/train_panel.h"

#include <QAction>
#include <QDockWidget>
#include <QHeaderView>
#include <QMenuBar>
#include <QScrollBar>
#include <QSettings>
#include <QTableView>
#include <QTreeWidget>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {

const QSize kSizes[] = { { 1280, 720 }, { 1600, 1000 }, { 1920, 1080 } };
const QString kConv0Tanh = QStringLiteral("hybridsequential0_conv0_tanh_fwd");

std::string sizeText(const QSize& s)
{
    return std::to_string(s.width()) + "x" + std::to_string(s.height());
}

/// A fresh window of `size`, shown (the layout is made for the size it is shown at).
std::unique_ptr<MainWindow> makeSizedWindow(const QSize& size)
{
    AppOptions o;
    o.fresh = true;
    auto w = std::make_unique<MainWindow>(o);
    w->setInteractive(false);
    w->resize(size);
    w->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(w.get()));
    return w;
}

QDockWidget* dock(MainWindow& w, const char* name)
{
    return w.findChild<QDockWidget*>(QString::fromLatin1(name));
}

/// Whether a dock can be seen: shown, and not a tab behind another (those are moved out of sight).
bool onScreen(const QWidget* w)
{
    return w->isVisible() && !w->visibleRegion().isEmpty();
}

/// Room a cell's text needs: the text, the style's padding and a frame pixel each side.
int textRoom(const QTableView* view, const QString& text)
{
    return view->fontMetrics().horizontalAdvance(text) + 8;
}

/// Every column (the first `columns`, all when -1) lies inside the viewport and is wide enough for
/// its header.
void expectEveryColumnOnScreen(const QTableView* view, const std::string& where, int columns = -1)
{
    const int right = view->viewport()->width();
    const QAbstractItemModel* m = view->model();
    for (int c = 0; c < (columns < 0 ? m->columnCount() : columns); ++c) {
        const QString header = m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
        EXPECT_FALSE(view->isColumnHidden(c)) << where << " column " << header.toStdString();
        EXPECT_LE(view->columnViewportPosition(c) + view->columnWidth(c), right)
            << where << ": column " << header.toStdString() << " is cut off at the right";
        EXPECT_GE(view->horizontalHeader()->sectionSize(c), textRoom(view, header))
            << where << ": header " << header.toStdString() << " does not fit";
    }
    EXPECT_EQ(view->horizontalScrollBar()->maximum(), 0) << where;
}

QAction* menuAction(MainWindow& w, const QString& text)
{
    for (QAction* a : w.findChildren<QAction*>())
        if (a->text().remove(QLatin1Char('&')) == text) return a;
    return nullptr;
}

} // namespace

TEST(WindowLayout, BreakpointsShowEveryColumnAndElideNodeNamesInTheMiddle)
{
    for (const QSize& size : kSizes) {
        auto w = makeSizedWindow(size);
        ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
        w->breakpointModel()->add(debug::Breakpoint::onNode(
            kConv0Tanh.toStdString(), OpPhase::After, debug::Condition::of(debug::Condition::Kind::AbsMaxAbove, 0.5)));
        w->breakpointModel()->setBreakOnNanInf(true);
        QTableView* view = w->breakpointsPanel()->view();
        ASSERT_TRUE(onScreen(view)) << sizeText(size);
        QCoreApplication::processEvents();
        expectEveryColumnOnScreen(view, "Breakpoints at " + sizeText(size));
        const QAbstractItemModel* m = view->model();
        // The condition reads whole; the node is the widest column, elided in the middle, named whole
        // in its tooltip.
        const QString condition = m->index(0, BreakpointModel::ConditionColumn).data().toString();
        EXPECT_EQ(condition, QStringLiteral("absmax>0.5"));
        EXPECT_GE(view->columnWidth(BreakpointModel::ConditionColumn), textRoom(view, condition)) << sizeText(size);
        EXPECT_EQ(view->textElideMode(), Qt::ElideMiddle);
        for (int c = 0; c < BreakpointModel::ColumnCount; ++c) {
            if (c == BreakpointModel::Location) continue;
            EXPECT_GE(view->columnWidth(BreakpointModel::Location), view->columnWidth(c)) << sizeText(size);
        }
        EXPECT_GE(view->columnWidth(BreakpointModel::Location), 150) << sizeText(size);
        EXPECT_TRUE(m->index(0, BreakpointModel::Location).data(Qt::ToolTipRole).toString().contains(kConv0Tanh));
    }
}

TEST(WindowLayout, RunRecordShowsItsStatisticsAndMarksNanRows)
{
    for (const QSize& size : kSizes) {
        auto w = makeSizedWindow(size);
        ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:nan-demo")));
        QSignalSpy finished(w->controller(), &SessionController::runFinished);
        ASSERT_TRUE(w->startRun());
        ASSERT_TRUE(finished.wait(kWaitMs));
        QTableView* view = w->runRecordPanel()->view();
        ASSERT_TRUE(onScreen(view)) << sizeText(size);
        QCoreApplication::processEvents();
        // The comparison's columns are shown only while a comparison is (tests/gui/compare_test.cpp).
        expectEveryColumnOnScreen(view, "Run Record at " + sizeText(size), RunRecordModel::kFirstCompareColumn);
        EXPECT_EQ(view->textElideMode(), Qt::ElideMiddle);
        RunRecordModel* m = w->runRecordPanel()->model();
        ASSERT_GT(m->rowCount(), 0);
        int nanRows = 0;
        for (int r = 0; r < m->rowCount(); ++r) {
            // The numbers are never clipped.
            for (int c : { RunRecordModel::Time, RunRecordModel::Min, RunRecordModel::Max, RunRecordModel::Mean,
                     RunRecordModel::NanInf }) {
                const QString text = m->index(r, c).data().toString();
                EXPECT_GE(view->columnWidth(c), textRoom(view, text))
                    << sizeText(size) << ": '" << text.toStdString() << "' clipped";
            }
            // A row whose output has NaN or Inf is tinted across, the others are not.
            const bool bad = m->hasNanInf(r);
            nanRows += bad ? 1 : 0;
            for (int c = 0; c < RunRecordModel::ColumnCount; ++c) {
                const QVariant background = m->index(r, c).data(Qt::BackgroundRole);
                EXPECT_EQ(background.isValid(), bad) << "row " << r << " column " << c;
            }
        }
        EXPECT_GT(nanRows, 0);
        EXPECT_LT(nanRows, m->rowCount());
    }
}

TEST(WindowLayout, AOneByTenOutputFitsTheValuesTab)
{
    for (const QSize& size : { QSize(1600, 1000), QSize(1920, 1080) }) {
        auto w = makeSizedWindow(size);
        ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
        w->breakpointModel()->add(debug::Breakpoint::onNode("hybridsequential0_dense1_fwd", OpPhase::After));
        QSignalSpy shown(w.get(), &MainWindow::pauseShown);
        ASSERT_TRUE(w->startRun());
        ASSERT_TRUE(shown.wait(kWaitMs));
        ASSERT_EQ(w->inspector()->currentTensor()->shape(), (Shape { 1, 10 }));
        w->inspector()->setCurrentTab(TensorInspector::Tab::Values);
        QTableView* view = w->inspector()->valueTable()->view();
        ASSERT_TRUE(onScreen(view));
        QCoreApplication::processEvents();
        EXPECT_LE(view->horizontalHeader()->length(), view->viewport()->width())
            << sizeText(size) << ": the 10 values need horizontal scrolling";
        EXPECT_EQ(view->horizontalScrollBar()->maximum(), 0) << sizeText(size);
        for (int c = 0; c < 10; ++c) {
            const QString text = view->model()->index(0, c).data().toString();
            EXPECT_GE(view->columnWidth(c), textRoom(view, text)) << "'" << text.toStdString() << "' clipped";
            // Compact, yet 4 significant digits.
            const double exact = view->model()
                                     ->index(0, c)
                                     .data(Qt::ToolTipRole)
                                     .toString()
                                     .section(QStringLiteral(" = "), 1)
                                     .toDouble();
            EXPECT_NEAR(text.toDouble(), exact, std::abs(exact) * 1e-3 + 1e-30) << text.toStdString();
        }
    }
}

TEST(WindowLayout, TrainingGivesThePlotsRoomAndAPauseBringsTheInspectorBack)
{
    auto w = makeSizedWindow({ 1600, 1000 });
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    QDockWidget* train = dock(*w, "trainDock");
    QDockWidget* inspector = dock(*w, "inspectorDock");
    ASSERT_NE(train, nullptr);
    ASSERT_NE(inspector, nullptr);
    p->setEpochs(2);
    p->setFromInitialWeights(true);
    ASSERT_TRUE(p->startTraining()) << p->lastError().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !p->isTraining(); }, 120000));
    QCoreApplication::processEvents();
    // The Train dock takes the inspector's place, taller and wider than a bottom strip.
    EXPECT_TRUE(onScreen(train));
    EXPECT_FALSE(onScreen(inspector)) << "the inspector is empty while training";
    EXPECT_GE(train->width(), w->width() * 45 / 100);
    EXPECT_GE(train->height(), w->height() * 60 / 100);
    EXPECT_GE(p->plot()->width(), 400);
    EXPECT_GE(p->plot()->height(), 250);
    // Parameter names are read whole.
    QTreeWidget* list = p->gradientView()->list();
    ASSERT_GT(list->topLevelItemCount(), 0);
    for (int i = 0; i < list->topLevelItemCount(); ++i) {
        const QString name = list->topLevelItem(i)->text(0);
        EXPECT_GE(list->columnWidth(0), list->fontMetrics().horizontalAdvance(name) + 8) << name.toStdString();
    }
    // 2-D data: the decision regions are drawn.
    auto* decision = p->findChild<ImageView*>();
    ASSERT_NE(decision, nullptr);
    EXPECT_TRUE(onScreen(decision));
    EXPECT_GE(decision->width(), 200);

    // A pause of a debug run shows the paused tensor: the debugging layout comes back.
    w->breakpointModel()->add(debug::Breakpoint::onNode("hybridsequential0_dense0_fwd", OpPhase::After));
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(shown.wait(kWaitMs));
    QCoreApplication::processEvents();
    EXPECT_TRUE(onScreen(inspector));
    EXPECT_TRUE(onScreen(w->inspector()));
    EXPECT_LT(inspector->width(), w->width() / 2);
    w->action(MainWindow::Action::Stop)->trigger();
    ASSERT_TRUE(waitState(*w, SessionController::State::Stopped));
}

TEST(WindowLayout, LenetShowsNoDecisionRegions)
{
    auto w = makeSizedWindow({ 1600, 1000 });
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    auto* decision = w->trainPanel()->findChild<ImageView*>();
    ASSERT_NE(decision, nullptr);
    EXPECT_FALSE(decision->isHidden());
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    EXPECT_TRUE(decision->isHidden()) << "lenet's data are images: no plane to draw regions on";
}

TEST(WindowLayout, TheViewMenuSwitchesBetweenDebuggingAndTrainingLayouts)
{
    for (const QSize& size : kSizes) {
        auto w = makeSizedWindow(size);
        ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
        QDockWidget* train = dock(*w, "trainDock");
        QDockWidget* inspector = dock(*w, "inspectorDock");
        QDockWidget* bps = dock(*w, "breakpointsDock");
        QDockWidget* record = dock(*w, "recordDock");
        QDockWidget* model = dock(*w, "modelDock");
        QAction* debugging = menuAction(*w, QStringLiteral("Debugging Layout"));
        QAction* training = menuAction(*w, QStringLiteral("Training Layout"));
        ASSERT_NE(debugging, nullptr);
        ASSERT_NE(training, nullptr);
        // Debugging: the inspector beside the graph, the breakpoints and the record side by side.
        EXPECT_TRUE(debugging->isChecked());
        for (QDockWidget* d : { inspector, bps, record, model })
            EXPECT_TRUE(onScreen(d)) << d->objectName().toStdString() << " at " << sizeText(size);
        EXPECT_FALSE(onScreen(train));
        const int graphWidth = w->graphPanel()->width();
        EXPECT_GE(graphWidth, size.width() * 30 / 100) << sizeText(size);
        EXPECT_GE(inspector->width(), size.width() * 28 / 100) << sizeText(size);
        EXPECT_LE(inspector->width(), size.width() * 45 / 100) << sizeText(size);
        EXPECT_GE(inspector->height(), size.height() * 55 / 100) << sizeText(size);
        EXPECT_GE(w->graphPanel()->height(), size.height() * 40 / 100) << sizeText(size);

        training->trigger();
        QCoreApplication::processEvents();
        EXPECT_TRUE(training->isChecked());
        EXPECT_TRUE(onScreen(train));
        EXPECT_FALSE(onScreen(inspector));
        EXPECT_GE(train->width(), size.width() * 45 / 100) << sizeText(size);
        EXPECT_GE(w->trainPanel()->plot()->height(), 200) << sizeText(size);

        // Back: the docks where they were.
        debugging->trigger();
        QCoreApplication::processEvents();
        EXPECT_TRUE(onScreen(inspector));
        EXPECT_FALSE(onScreen(train));
        EXPECT_EQ(w->graphPanel()->width(), graphWidth) << sizeText(size);
    }
}

TEST(WindowLayout, EachLayoutComesBackAsLeftAfterARestart)
{
    QSettings().clear();
    int trainWidth = 0;
    {
        MainWindow w; // settings read and written
        w.setInteractive(false);
        w.resize(1600, 1000);
        w.show();
        ASSERT_TRUE(openAndWait(w, QStringLiteral("sample:lenet")));
        menuAction(w, QStringLiteral("Training Layout"))->trigger();
        QCoreApplication::processEvents();
        // The user widens the Train dock a little.
        w.resizeDocks({ dock(w, "trainDock") }, { 1000 }, Qt::Horizontal);
        QCoreApplication::processEvents();
        trainWidth = dock(w, "trainDock")->width();
        w.close();
    }
    {
        MainWindow w;
        w.setInteractive(false);
        w.show();
        QCoreApplication::processEvents();
        EXPECT_EQ(w.size(), QSize(1600, 1000));
        EXPECT_TRUE(menuAction(w, QStringLiteral("Training Layout"))->isChecked());
        EXPECT_TRUE(onScreen(dock(w, "trainDock")));
        EXPECT_EQ(dock(w, "trainDock")->width(), trainWidth);
        // The debugging layout, never left in this window, is the saved one of the last.
        menuAction(w, QStringLiteral("Debugging Layout"))->trigger();
        QCoreApplication::processEvents();
        EXPECT_TRUE(onScreen(dock(w, "inspectorDock")));
        EXPECT_FALSE(onScreen(dock(w, "trainDock")));
        // Reset makes it afresh for the window.
        menuAction(w, QStringLiteral("Reset Layout"))->trigger();
        QCoreApplication::processEvents();
        EXPECT_TRUE(onScreen(dock(w, "inspectorDock")));
        EXPECT_TRUE(onScreen(dock(w, "breakpointsDock")));
        EXPECT_TRUE(onScreen(dock(w, "recordDock")));
        w.close();
    }
    QSettings().clear();
}
