// Comparisons in the window: Debug ▸ Compare… records A and B on worker threads, colours the
// graph by each node's divergence with the first divergent node marked, and the Compare dock shows
// A and B of a node side by side (overlaid histograms, A − B, the values that differ most, maps).

#include "gui/compare/compare_bar.h"
#include "gui/compare/compare_dialog.h"
#include "gui/compare/compare_view.h"
#include "gui/compare/divergence_scale.h"
#include "gui/graph/graph_model.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui_test_util.h"
#include "io/npz.h"

#include <gtest/gtest.h>

#include <QPushButton>
#include <QTableView>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <cmath>
#include <cstdlib>
#include <numeric>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {
const QString kConv0 = QStringLiteral("hybridsequential0_conv0_fwd");

bool compareAndWait(MainWindow& w, const CompareSpec& spec)
{
    QSignalSpy done(w.compareRunner(), &CompareRunner::finished);
    QSignalSpy failed(w.compareRunner(), &CompareRunner::failed);
    if (!w.startCompare(spec)) return false;
    return QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, kWaitMs) && !done.isEmpty();
}

CompareSpec halfEverywhere()
{
    CompareSpec s;
    s.precisionB = { { "all", Precision::Float16 } };
    return s;
}
}

TEST(CompareWindow, Float16BColoursTheGraphAndMarksWhereTheRunsPartWays)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    ASSERT_TRUE(compareAndWait(*w, halfEverywhere()));
    const auto result = w->comparison();
    ASSERT_TRUE(result);
    ASSERT_TRUE(result->comparison.firstDivergentNode);
    EXPECT_EQ(QString::fromStdString(*result->comparison.firstDivergentNode), kConv0);

    GraphModel* model = w->graphPanel()->model();
    ASSERT_TRUE(model->hasDivergence());
    const NodeMarks conv0 = model->marks(kConv0);
    EXPECT_TRUE(conv0.compared);
    EXPECT_TRUE(conv0.firstDivergent);
    EXPECT_GT(conv0.divergence, 0.0f) << "float16 rounding shows";
    EXPECT_LT(conv0.divergence, 1.0f);
    EXPECT_FALSE(model->marks(QStringLiteral("hybridsequential0_pool0_fwd")).firstDivergent);
    // The bar says what B was and names the node; its button goes there.
    EXPECT_TRUE(w->compareBar()->isVisible());
    EXPECT_TRUE(w->compareBar()->text().contains(QStringLiteral("float16 on all nodes"))) << w->compareBar()->text().toStdString();
    EXPECT_TRUE(w->compareBar()->firstDivergentButton()->text().contains(kConv0));
    EXPECT_EQ(w->graphPanel()->view()->selectedNode(), kConv0);

    // The Compare dock shows conv0's output from both runs.
    CompareView* view = w->compareView();
    EXPECT_EQ(view->currentTensor(), kConv0 + QStringLiteral("_output"));
    EXPECT_TRUE(view->metricsText().contains(QStringLiteral("rel L2")));
    const Tensor& a = result->a.tensors.at((kConv0 + QStringLiteral("_output")).toStdString());
    const double total = std::accumulate(view->countsA().begin(), view->countsA().end(), 0.0);
    EXPECT_EQ(total, static_cast<double>(a.size())) << "every element of A in the overlaid histogram";
    EXPECT_EQ(std::accumulate(view->countsB().begin(), view->countsB().end(), 0.0), total);
    EXPECT_EQ(std::accumulate(view->countsDiff().begin(), view->countsDiff().end(), 0.0), total);
    // The value table: the largest |A − B| first, A − B as its columns say.
    QTableWidget* table = view->table();
    ASSERT_GT(table->rowCount(), 10);
    double previous = INFINITY;
    for (int r = 0; r < 10; ++r) {
        const double av = table->item(r, 1)->text().toDouble(), bv = table->item(r, 2)->text().toDouble();
        const double d = table->item(r, 3)->text().toDouble();
        EXPECT_NEAR(d, av - bv, 1e-3 * std::max(1.0, std::fabs(av)));
        EXPECT_LE(std::fabs(d), previous * (1 + 1e-3));
        previous = std::fabs(d);
    }
    // The maps: conv0's first feature map in A, in B and |A − B|.
    view->tabs()->setCurrentIndex(2);
    const auto maps = view->findChildren<QLabel*>();
    int pictures = 0;
    for (const QLabel* l : maps)
        pictures += !l->pixmap().isNull();
    EXPECT_EQ(pictures, 3);
    if (const char* shots = std::getenv("OPSCOPE_TEST_SHOTS")) view->grab().save(QString::fromLocal8Bit(shots) + "/compare-maps.png");
    // Another metric recolours, the first divergent node stays.
    w->compareBar()->setMetric(debug::Metric::Sqnr);
    EXPECT_TRUE(model->marks(kConv0).firstDivergent);
    EXPECT_NEAR(model->marks(kConv0).divergence,
        DivergenceScale { debug::Metric::Sqnr }.severity(result->comparison.find((kConv0 + "_output").toStdString())->sqnrDb),
        1e-6);
    // Ending the comparison takes the colours away.
    w->clearCompare();
    EXPECT_FALSE(model->hasDivergence());
    EXPECT_FALSE(model->marks(kConv0).compared);
    EXPECT_FALSE(w->compareBar()->isVisible());
}

TEST(CompareWindow, TheSameRunAgainAgreesEverywhereAndASavedRunIsFoundWhereItDiffers)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mini-resnet")));
    ASSERT_TRUE(compareAndWait(*w, CompareSpec {}));
    const auto same = w->comparison();
    EXPECT_FALSE(same->comparison.diverges());
    EXPECT_FALSE(same->comparison.firstDivergentNode);
    EXPECT_FALSE(w->compareBar()->firstDivergentButton()->isVisible());
    for (const GraphItem& item : w->graphPanel()->model()->items()) {
        if (item.kind != GraphItemKind::Op) continue;
        EXPECT_EQ(w->graphPanel()->model()->marks(item.key).divergence, 0.0f) << item.key.toStdString();
    }

    // A saved run (.npz) with one activation changed: found there; what it lacks shows grey.
    const std::string conv = "hybridsequential0_residualunit1_conv0_fwd_output";
    QTemporaryDir dir;
    Tensor changed = same->a.tensors.at(conv).copy();
    changed.data()[7] += 1.0f;
    const std::string input = "hybridsequential0_residualunit1_conv0_fwd_data";
    writeNpz((dir.path() + QStringLiteral("/b.npz")).toStdString(),
        { { input, same->a.tensors.at(input).view() }, { conv, changed.view() } });
    CompareSpec saved;
    saved.source = CompareSpec::Source::Saved;
    saved.savedB = dir.path() + QStringLiteral("/b.npz");
    ASSERT_TRUE(compareAndWait(*w, saved));
    const auto r = w->comparison();
    ASSERT_TRUE(r->comparison.firstDivergentNode);
    EXPECT_EQ(*r->comparison.firstDivergentNode, "hybridsequential0_residualunit1_conv0_fwd");
    EXPECT_LT(w->graphPanel()->model()->marks(QStringLiteral("hybridsequential0_conv0_fwd")).divergence, 0.0f)
        << "not in the saved run: unmatched";
    // B on other inputs, eagerly: it parts ways at the first op.
    CompareSpec other;
    other.modeB = debug::RunMode::Eager;
    other.inputsB = { QStringLiteral("data=1x3x32x32:zeros") };
    ASSERT_TRUE(compareAndWait(*w, other));
    ASSERT_TRUE(w->comparison()->comparison.firstDivergentNode);
    EXPECT_EQ(*w->comparison()->comparison.firstDivergentNode, "hybridsequential0_conv0_fwd");
    // A saved run that is not there: a message, the graph as it was.
    CompareSpec missing = saved;
    missing.savedB = dir.path() + QStringLiteral("/none.npz");
    EXPECT_FALSE(w->startCompare(missing));
    EXPECT_TRUE(w->lastMessage().contains(QStringLiteral("none.npz")));
    // Another model ends the comparison.
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    EXPECT_FALSE(w->comparison());
    EXPECT_FALSE(w->graphPanel()->model()->hasDivergence());
}

TEST(CompareWindow, TheCompareOptionIsParsedAndRefusesWhatItDoesNotKnow)
{
    CompareSpec s;
    QString error;
    ASSERT_TRUE(parseCompareSpec(QStringLiteral("half=Convolution,bf16=all,kernels=reference,rtol=0.01"), &s, &error));
    ASSERT_EQ(s.precisionB.size(), 2u);
    EXPECT_EQ(s.precisionB[0].target, "Convolution");
    EXPECT_EQ(s.precisionB[1].precision, Precision::BFloat16);
    EXPECT_EQ(s.kernelsB, KernelKind::Reference);
    EXPECT_EQ(s.tol.rtol, 0.01);
    EXPECT_EQ(s.describeB(), QStringLiteral("reference kernels, float16 on Convolution, bfloat16 on all nodes"));
    ASSERT_TRUE(parseCompareSpec(QStringLiteral("mode=eager,input=data=1x1x28x28:zeros"), &s, &error)) << error.toStdString();
    EXPECT_EQ(s.modeB, debug::RunMode::Eager);
    EXPECT_EQ(s.inputsB, QStringList { QStringLiteral("data=1x1x28x28:zeros") });
    EXPECT_FALSE(parseCompareSpec(QStringLiteral("mode=fast"), &s, &error));
    EXPECT_FALSE(parseCompareSpec(QStringLiteral("colour=red"), &s, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("colour")));
    EXPECT_FALSE(parseCompareSpec(QStringLiteral("kernels=gpu"), &s, &error));
    EXPECT_FALSE(parseCompareSpec(QStringLiteral("rtol=-1"), &s, &error));
    AppOptions o;
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--compare"), QStringLiteral("half") }, &o, &error));
    EXPECT_TRUE(parseAppOptions({ QStringLiteral("--compare"), QStringLiteral("half=all") }, &o, &error));
    EXPECT_EQ(o.compare, QStringLiteral("half=all"));
}

TEST(CompareWindow, TheDialogSaysWhatIsMissing)
{
    CompareSpec s;
    s.source = CompareSpec::Source::OtherModel;
    CompareDialog d(s, { QStringLiteral("Convolution") });
    EXPECT_FALSE(d.problem().isEmpty()) << "no model B chosen";
    s.modelB = QStringLiteral("/no/such/model.onnx");
    CompareDialog d2(s, {});
    EXPECT_TRUE(d2.problem().contains(QStringLiteral("/no/such/model.onnx")));
    CompareDialog d3(halfEverywhere(), {});
    EXPECT_TRUE(d3.problem().isEmpty());
    ASSERT_EQ(d3.spec().precisionB.size(), 1u);
    EXPECT_EQ(d3.spec().precisionB[0].target, "all");
}

TEST(CompareWindow, TheGraphsMenuComparesANodeInFloat16AndTheRunRecordSortsByDivergence)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, SessionController::State::Finished));
    RunRecordPanel* record = w->runRecordPanel();
    EXPECT_TRUE(record->view()->isColumnHidden(RunRecordModel::RelL2)) << "no comparison yet";

    QSignalSpy done(w->compareRunner(), &CompareRunner::finished);
    const QString conv1 = QStringLiteral("hybridsequential0_conv1_fwd");
    Q_EMIT w->graphPanel()->view()->precisionCompareRequested(conv1, false);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !done.isEmpty(); }, kWaitMs));
    const auto r = w->comparison();
    ASSERT_EQ(r->spec.precisionB.size(), 1u);
    EXPECT_EQ(r->spec.precisionB[0].target, conv1.toStdString());
    ASSERT_TRUE(r->comparison.firstDivergentNode);
    EXPECT_EQ(QString::fromStdString(*r->comparison.firstDivergentNode), conv1);
    EXPECT_EQ(w->graphPanel()->model()->marks(QStringLiteral("hybridsequential0_pool0_fwd")).divergence, 0.0f)
        << "before it, exactly the same";

    // The record shows the divergence columns; sorted by relative L2, the ops before conv1 (zero)
    // come first, conv1 and what follows after.
    EXPECT_FALSE(record->view()->isColumnHidden(RunRecordModel::RelL2));
    record->view()->sortByColumn(RunRecordModel::RelL2, Qt::AscendingOrder);
    QAbstractItemModel* m = record->view()->model();
    ASSERT_EQ(m->rowCount(), 10);
    EXPECT_EQ(m->index(0, RunRecordModel::RelL2).data(RunRecordModel::kSortRole).toDouble(), 0.0);
    EXPECT_GT(m->index(9, RunRecordModel::RelL2).data(RunRecordModel::kSortRole).toDouble(), 0.0);
    int diverging = 0;
    for (int row = 0; row < m->rowCount(); ++row)
        diverging += m->index(row, RunRecordModel::Diverges).data().toString() == QStringLiteral("diverges");
    EXPECT_GT(diverging, 0);
    w->clearCompare();
    EXPECT_TRUE(record->view()->isColumnHidden(RunRecordModel::RelL2));
}

TEST(CompareWindow, ADiffBreakpointPausesTheNextRunWhereItLeavesRunB)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    CompareSpec spec;
    spec.precisionB = { { "hybridsequential0_conv1_fwd", Precision::Float16 } };
    ASSERT_TRUE(compareAndWait(*w, spec));
    // A watchpoint on every op: the run pauses at the first op whose output leaves B's by more
    // than 1e-5 (relative L2): the node computed in float16 in B.
    w->breakpointModel()->add(debug::Breakpoint::watch(debug::Condition::parse("diff>1e-5")));
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, SessionController::State::Paused));
    EXPECT_EQ(w->controller()->pauseEvent()->node, "hybridsequential0_conv1_fwd");
    // The Compare dock shows that node's tensors of both runs.
    EXPECT_EQ(w->compareView()->currentTensor(), QStringLiteral("hybridsequential0_conv1_fwd_output"));
    w->controller()->stopAndWait();
    // Without the comparison the condition has nothing to compare with: the run goes through.
    w->clearCompare();
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, SessionController::State::Finished));
}
