// The Train dock: training mlp from the window with the plot, the decision regions and the gradient
// histograms growing each epoch; stopping; a sample without data; the debugger's runs held off.

#include "gui/gui_test_util.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/train/train_charts.h"
#include "gui/train/train_panel.h"

#include <QAction>
#include <cmath>
#include <map>
#include <QDockWidget>
#include <QTreeWidget>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {
float maxAbsDiff(const Tensor& a, const Tensor& b)
{
    float d = 0;
    for (int64_t i = 0; i < a.size(); ++i)
        d = std::max(d, std::fabs(a.at(i) - b.at(i)));
    return d;
}

bool waitFinished(TrainPanel* p)
{
    return QTest::qWaitFor([p] { return !p->isTraining(); }, 120000);
}
} // namespace

TEST(Train, MlpLearnsSpiralsFromTheWindow)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    auto* dock = w->findChild<QDockWidget*>(QStringLiteral("trainDock"));
    ASSERT_NE(dock, nullptr);
    EXPECT_EQ(dock->widget(), w->trainPanel());
    TrainPanel* p = w->trainPanel();
    EXPECT_TRUE(p->canTrainModel());
    EXPECT_TRUE(p->unavailableMessage().isEmpty());

    p->setEpochs(10);
    p->setFromInitialWeights(true);
    QSignalSpy epochs(p, &TrainPanel::epochFinished);
    QSignalSpy finished(p, &TrainPanel::trainingFinished);
    QSignalSpy failed(p, &TrainPanel::trainingFailed);
    ASSERT_TRUE(p->startTraining()) << p->lastError().toStdString();
    EXPECT_TRUE(p->isTraining());
    ASSERT_TRUE(waitFinished(p));
    ASSERT_TRUE(failed.isEmpty()) << failed.first().first().toString().toStdString();
    EXPECT_EQ(finished.count(), 1);
    EXPECT_FALSE(p->wasStopped());
    ASSERT_EQ(p->epochsDone(), 10);
    EXPECT_EQ(epochs.count(), 10);
    ASSERT_EQ(p->reports().size(), 10u);
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(p->reports()[static_cast<size_t>(i)].epoch, i + 1);
    EXPECT_LT(p->reports().back().loss, p->reports().front().loss);
    EXPECT_GT(p->reports().back().testAccuracy, 0.9);

    // The plot has one point per epoch on each epoch graph, and the batch loss in between.
    EXPECT_EQ(p->plot()->lossGraph()->dataCount(), 10);
    EXPECT_EQ(p->plot()->trainAccuracyGraph()->dataCount(), 10);
    EXPECT_EQ(p->plot()->testAccuracyGraph()->dataCount(), 10);
    EXPECT_GE(p->plot()->batchLossGraph()->dataCount(), 10);

    // The decision regions of the 2-D data.
    const QImage img = p->decisionImage();
    ASSERT_FALSE(img.isNull());
    EXPECT_GE(img.width(), 160);

    // A gradient for every parameter, the first one's histogram shown.
    GradientView* g = p->gradientView();
    ASSERT_FALSE(g->gradients().empty());
    EXPECT_EQ(g->list()->topLevelItemCount(), static_cast<int>(g->gradients().size()));
    EXPECT_EQ(g->selectedIndex(), 0);
    for (const GradientInfo& info : g->gradients()) {
        EXPECT_EQ(info.stats.count, info.shape.size());
        EXPECT_GT(info.stats.l2, 0.0) << info.name;
    }

    // The debugger runs the trained block afterwards.
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
    QSignalSpy runEnd(w->controller(), &SessionController::runFinished);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(runEnd.wait(kWaitMs));
}

TEST(Train, TrainingAgainFromInitialWeightsRepeatsTheFirstEpoch)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(2);
    p->setFromInitialWeights(true);
    ASSERT_TRUE(p->startTraining());
    ASSERT_TRUE(waitFinished(p));
    ASSERT_EQ(p->epochsDone(), 2);
    const samples::EpochReport first = p->reports().front();
    ASSERT_TRUE(p->startTraining());
    ASSERT_TRUE(waitFinished(p));
    ASSERT_EQ(p->epochsDone(), 2);
    EXPECT_DOUBLE_EQ(p->reports().front().loss, first.loss);
    EXPECT_EQ(p->plot()->lossGraph()->dataCount(), 2);
}

TEST(Train, StopEndsTrainingMidway)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(5000);
    QSignalSpy epoch(p, &TrainPanel::epochFinished);
    QSignalSpy finished(p, &TrainPanel::trainingFinished);
    ASSERT_TRUE(p->startTraining());
    ASSERT_TRUE(epoch.wait(kWaitMs));
    p->stopTraining();
    ASSERT_TRUE(finished.wait(kWaitMs));
    EXPECT_FALSE(p->isTraining());
    EXPECT_TRUE(p->wasStopped());
    EXPECT_GE(p->epochsDone(), 1);
    EXPECT_LT(p->epochsDone(), 5000);
    EXPECT_EQ(p->plot()->lossGraph()->dataCount(), p->epochsDone());
    const int done = p->epochsDone();
    QTest::qWait(100);
    EXPECT_EQ(p->epochsDone(), done); // nothing arrives after the end
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
}

TEST(Train, SampleWithoutDataShowsTheMessageAndRefuses)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:nan-demo")));
    TrainPanel* p = w->trainPanel();
    EXPECT_FALSE(p->canTrainModel());
    EXPECT_EQ(p->unavailableMessage(), QStringLiteral("This model has no training data: mlp, lenet and fashion train"));
    EXPECT_FALSE(p->startTraining());
    EXPECT_FALSE(p->lastError().isEmpty());
    EXPECT_FALSE(p->isTraining());
}

TEST(Train, RunActionsAreOffWhileTrainingAndTrainingWaitsForARun)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(5000);
    ASSERT_TRUE(p->startTraining());
    for (auto a : { MainWindow::Action::Run, MainWindow::Action::StepOver, MainWindow::Action::StepInto,
             MainWindow::Action::RunTo })
        EXPECT_FALSE(w->action(a)->isEnabled());
    EXPECT_FALSE(w->startRun());
    EXPECT_EQ(w->controller()->state(), SessionController::State::Idle);
    EXPECT_TRUE(p->stopAndWait(5000));
    EXPECT_FALSE(p->isTraining());
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());

    // A paused debug run holds training off.
    w->action(MainWindow::Action::StepOver)->trigger();
    ASSERT_TRUE(waitState(*w, SessionController::State::Paused));
    EXPECT_FALSE(p->startTraining());
    EXPECT_FALSE(p->lastError().isEmpty());
    w->controller()->stopAndWait();
}

TEST(Train, OpeningAnotherModelStopsTraining)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(5000);
    QSignalSpy epoch(p, &TrainPanel::epochFinished);
    ASSERT_TRUE(p->startTraining());
    ASSERT_TRUE(epoch.wait(kWaitMs));
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    EXPECT_FALSE(p->isTraining());
    EXPECT_EQ(p->epochsDone(), 0);
    EXPECT_TRUE(p->canTrainModel());
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
}

TEST(Train, LenetTrainsAnEpochFromItsInitialWeights)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    TrainPanel* p = w->trainPanel();
    p->setEpochs(1);
    p->setFromInitialWeights(true);
    ASSERT_TRUE(p->startTraining());
    ASSERT_TRUE(waitFinished(p));
    ASSERT_EQ(p->epochsDone(), 1) << p->lastError().toStdString();
    EXPECT_GT(p->reports().front().testAccuracy, 0.5);
    EXPECT_TRUE(p->decisionImage().isNull()); // not 2-D data
    EXPECT_FALSE(p->gradientView()->gradients().empty());
}

TEST(Train, DebugOneStepShowsTheTrainingGraphAndStopsInTheBackwardPass)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    SessionController* c = w->controller();
    const gluon::ParamPtr weight = c->model()->block->collect_params().at("hybridsequential0_dense1_weight");

    // One step, paused before its first op: the view shows forward, loss and backward nodes.
    QSignalSpy paused(c, &SessionController::paused);
    QSignalSpy finished(p, &TrainPanel::trainingFinished);
    ASSERT_TRUE(p->debugOneStep()) << p->lastError().toStdString();
    ASSERT_TRUE(paused.wait(kWaitMs));
    EXPECT_EQ(c->pauseEvent()->reason, debug::PauseReason::Entry);
    const Tensor before = weight->data().copy(); // initialised by now (mlp's shapes are inferred)
    const debug::PausedTensor* firstBatch = c->pauseEvent()->find("hybridsequential0_dense0_fwd_data");
    ASSERT_NE(firstBatch, nullptr);
    const Tensor batch1 = firstBatch->values;
    GraphModel* g = w->graphPanel()->model();
    ASSERT_TRUE(g->graph());
    EXPECT_GE(g->nodeId(QStringLiteral("hybridsequential0_dense1_fwd_backward")), 0);
    EXPECT_GE(g->nodeId(QStringLiteral("softmaxcrossentropyloss0_pick0")), 0) << "the loss's nodes are shown";
    EXPECT_TRUE(g->blockPaths().contains(QStringLiteral("backward")));
    // Commands work while training: the Run action continues, a fresh run cannot start.
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
    EXPECT_TRUE(w->action(MainWindow::Action::StepInto)->isEnabled());

    // A breakpoint in the backward pass, then continue: it pauses there with the weight's gradient.
    w->breakpointModel()->add(
        debug::Breakpoint::onNode("hybridsequential0_dense1_fwd_backward", OpPhase::After));
    w->runOrContinue();
    ASSERT_TRUE(paused.wait(kWaitMs));
    const auto e = c->pauseEvent();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->node, "hybridsequential0_dense1_fwd_backward");
    EXPECT_EQ(e->reason, debug::PauseReason::Breakpoint);
    EXPECT_NE(e->find("hybridsequential0_dense1_fwd_backward_weight_grad"), nullptr);
    EXPECT_EQ(g->pausedNode(), QStringLiteral("hybridsequential0_dense1_fwd_backward"));
    EXPECT_EQ(maxAbsDiff(weight->data(), before), 0.0f) << "no update before the step ends";
    EXPECT_TRUE(p->isTraining());

    // Continue: the step ends, the trainer updates the weights, the training (one step) is over.
    w->runOrContinue();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !p->isTraining(); }, kWaitMs));
    EXPECT_EQ(finished.count(), 1);
    EXPECT_FALSE(p->wasStopped());
    EXPECT_GT(maxAbsDiff(weight->data(), before), 0.0f);
    EXPECT_EQ(p->debugStepsDone(), 1);

    // The next "Debug one step" takes the next mini-batch; stopping it counts no step. (The
    // controller hears of the step's end after the training does.)
    ASSERT_TRUE(QTest::qWaitFor([&] { return !c->isActive(); }, kWaitMs));
    ASSERT_TRUE(p->debugOneStep()) << p->lastError().toStdString();
    ASSERT_TRUE(paused.wait(kWaitMs));
    const debug::PausedTensor* secondBatch = c->pauseEvent()->find("hybridsequential0_dense0_fwd_data");
    ASSERT_NE(secondBatch, nullptr);
    EXPECT_EQ(secondBatch->values.shape(), batch1.shape());
    EXPECT_GT(maxAbsDiff(secondBatch->values, batch1), 0.0f);
    w->action(MainWindow::Action::Stop)->trigger();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !p->isTraining(); }, kWaitMs));
    EXPECT_EQ(p->debugStepsDone(), 1);

    // A forward run shows the model's graph again.
    QSignalSpy runEnd(c, &SessionController::runFinished);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(runEnd.wait(kWaitMs));
    EXPECT_LT(g->nodeId(QStringLiteral("hybridsequential0_dense1_fwd_backward")), 0);
    EXPECT_GE(g->nodeId(QStringLiteral("hybridsequential0_dense1_fwd")), 0);
    // The model's own graph object (the view keeps its expansions across forward runs).
    EXPECT_EQ(g->graph(), c->model()->graph);
    g->setExpanded(QStringLiteral("hybridsequential0"), false);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(runEnd.wait(kWaitMs));
    EXPECT_FALSE(g->isExpanded(QStringLiteral("hybridsequential0"))) << "a forward run reset the view";
}

TEST(Train, StopAtBreakpointsCatchesANanGradientAndStopLeavesTheWeights)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    TrainPanel* p = w->trainPanel();
    SessionController* c = w->controller();
    // A weight gone NaN (as an exploding training leaves it): every gradient of the next step is NaN;
    // a gradient watchpoint stops in the backward pass, not at the forward ops that carry NaN too.
    QSignalSpy runEnd(c, &SessionController::runFinished);
    ASSERT_TRUE(w->startRun()); // mlp's parameters take their shapes at the first run
    ASSERT_TRUE(runEnd.wait(kWaitMs));
    c->model()->block->collect_params().at("hybridsequential0_dense0_weight")->data().at(0) = std::nanf("");
    p->setEpochs(1);
    p->setStopAtBreakpoints(true);
    w->breakpointModel()->add(debug::Breakpoint::watch(debug::Condition::parse("grad naninf")));
    QSignalSpy paused(c, &SessionController::paused);
    ASSERT_TRUE(p->startTraining()) << p->lastError().toStdString();
    ASSERT_TRUE(paused.wait(60000));
    const auto e = c->pauseEvent();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->reason, debug::PauseReason::Watchpoint);
    EXPECT_TRUE(e->op.rfind("_backward_", 0) == 0 || e->node.find("_grad_sum") != std::string::npos) << e->node;
    ASSERT_NE(e->focusTensor(), nullptr);
    EXPECT_GT(e->focusStats.nan + e->focusStats.inf(), 0u);
    const std::map<std::string, Tensor> weights = [&] {
        std::map<std::string, Tensor> m;
        for (const gluon::ParamPtr& q : c->model()->block->collect_params().values())
            m[q->name()] = q->data().copy();
        return m;
    }();
    // Stop (the window's Stop): the step is not applied, the training ends as stopped.
    w->action(MainWindow::Action::Stop)->trigger();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !p->isTraining(); }, kWaitMs));
    EXPECT_TRUE(p->wasStopped());
    for (const gluon::ParamPtr& q : c->model()->block->collect_params().values())
        EXPECT_EQ(maxAbsDiff(q->data(), weights.at(q->name())), 0.0f) << q->name();
}
