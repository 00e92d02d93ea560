// The window driven as a user would: open a sample, set a breakpoint, run, inspect the paused
// tensor, continue, stop; the run record; a bad file; find; collapse and expand.

#include "common/test_paths.h"
#include "gui/graph/graph_model.h"
#include "gui/gui_test_util.h"
#include "gui/inputs/drawing_pad.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/tensor_inspector.h"

#include <numeric>

#include <QAction>
#include <QFile>
#include <QLineEdit>
#include <QTemporaryDir>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;
using State = SessionController::State;

namespace {
const QString kConv0Tanh = QStringLiteral("hybridsequential0_conv0_tanh_fwd");
}

TEST(Window, BreakpointPauseShowsAHistogramThenContinueFinishes)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    EXPECT_EQ(w->statusText(), QStringLiteral("Idle"));
    w->breakpointModel()->add(debug::Breakpoint::onNode(kConv0Tanh.toStdString(), OpPhase::After));
    EXPECT_EQ(w->graphPanel()->model()->marks(w->graphPanel()->model()->itemKeyForNode(kConv0Tanh)).breakpoint,
        BreakMark::Enabled);

    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(shown.wait(kWaitMs));
    EXPECT_EQ(w->controller()->state(), State::Paused);
    EXPECT_TRUE(w->statusText().startsWith(QStringLiteral("Paused at ") + kConv0Tanh + QStringLiteral(" (after)")))
        << w->statusText().toStdString();
    EXPECT_EQ(w->graphPanel()->model()->pausedNode(), kConv0Tanh);

    // The inspector shows the focus tensor (the node's output) and its histogram counts every element.
    const auto t = w->inspector()->currentTensor();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->shape(), (Shape { 1, 10, 24, 24 }));
    ASSERT_TRUE(w->inspector()->hasResult());
    const debug::Histogram& h = w->inspector()->histogram();
    const uint64_t counted = std::accumulate(h.bins.begin(), h.bins.end(), uint64_t(0)) + h.nan + h.inf + h.zeros;
    EXPECT_EQ(counted, static_cast<uint64_t>(t->size()));
    EXPECT_EQ(w->inspector()->stats().count, t->size());

    // Another node picked, then the paused one again: the pause's tensors come back.
    const QString conv0 = QStringLiteral("hybridsequential0_conv0_fwd");
    w->graphPanel()->view()->selectNode(conv0, true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return w->inspector()->currentTensorName().startsWith(conv0 + QLatin1Char('_')); }, kWaitMs));
    w->graphPanel()->view()->selectNode(kConv0Tanh, true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return w->inspector()->currentTensorName().startsWith(kConv0Tanh); }, kWaitMs))
        << w->inspector()->currentTensorName().toStdString();
    EXPECT_EQ(w->inspector()->tensors().size(), w->controller()->pauseEvent()->tensors.size());

    // The record so far holds the ops executed up to the pause.
    EXPECT_EQ(w->runRecordPanel()->model()->rowCount(), 2); // conv0 and conv0_tanh ran
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    w->action(MainWindow::Action::Run)->trigger(); // Continue
    ASSERT_TRUE(finished.wait(kWaitMs));
    EXPECT_EQ(w->controller()->state(), State::Finished);
    EXPECT_TRUE(w->statusText().startsWith(QStringLiteral("Finished in "))) << w->statusText().toStdString();
    EXPECT_EQ(w->graphPanel()->model()->pausedNode(), QString());
}

TEST(Window, RunRecordRowsAreTheExecutedOps)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(finished.wait(kWaitMs));
    const auto record = w->controller()->lastRecord();
    ASSERT_TRUE(record);
    const auto graph = w->controller()->session().graph();
    std::vector<std::string> ops;
    for (const Node& n : graph->nodes())
        if (!n.isVariable()) ops.push_back(n.name);
    RunRecordModel* m = w->runRecordPanel()->model();
    ASSERT_EQ(m->rowCount(), static_cast<int>(ops.size()));
    for (int r = 0; r < m->rowCount(); ++r) {
        EXPECT_EQ(m->index(r, RunRecordModel::Node).data().toString().toStdString(), ops[static_cast<size_t>(r)]);
        EXPECT_FALSE(m->index(r, RunRecordModel::Mean).data().toString().isEmpty()); // statistics recorded
    }
    // Every executed node is marked in the graph.
    for (const std::string& n : ops)
        EXPECT_TRUE(w->graphPanel()->model()->marks(QString::fromStdString(n)).executed) << n;
    // Filtering by operator keeps only those rows.
    w->runRecordPanel()->filter()->setText(QStringLiteral("Pooling"));
    EXPECT_EQ(w->runRecordPanel()->filter()->rowCount(), 2);
    // Picking a row selects its node in the graph and shows its kept output.
    QSignalSpy histogram(w->inspector(), &TensorInspector::histogramReady);
    w->runRecordPanel()->selectOp(0);
    Q_EMIT w->runRecordPanel()->opPicked(0, QString::fromStdString(ops[0]));
    EXPECT_EQ(w->graphPanel()->view()->selectedNode().toStdString(), ops[0]);
    ASSERT_TRUE(w->inspector()->currentTensor().has_value());
}

// A kernel's first call (one-time setup included) is not shown as the op's time: set apart in
// grey italics with the setup explained, and the warm time shown from the next run on.
TEST(Window, RunRecordShowsWarmTimesAndTheFirstCallApart)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(finished.wait(kWaitMs));
    RunRecordModel* m = w->runRecordPanel()->model();
    ASSERT_GT(m->rowCount(), 0);
    const QModelIndex first = m->index(0, RunRecordModel::Time);
    EXPECT_TRUE(first.data(Qt::FontRole).value<QFont>().italic());
    EXPECT_TRUE(first.data(Qt::ToolTipRole).toString().contains(QStringLiteral("first call")));
    EXPECT_TRUE(first.data(Qt::ToolTipRole).toString().contains(QStringLiteral("prepared before the run")));
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(finished.wait(kWaitMs));
    const QModelIndex warm = m->index(0, RunRecordModel::Time);
    EXPECT_FALSE(warm.data(Qt::FontRole).value<QFont>().italic());
    EXPECT_TRUE(warm.data(Qt::ToolTipRole).toString().contains(QStringLiteral("warm"))) << warm.data(Qt::ToolTipRole).toString().toStdString();
    const auto record = w->controller()->lastRecord();
    EXPECT_EQ(warm.data().toString(),
        QString::number(static_cast<double>(record->ops[0].timeNs) / 1000.0, 'f', 1));
}

TEST(Window, StopWhilePausedEndsTheRunAndAllowsANewOne)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    QSignalSpy paused(w->controller(), &SessionController::paused);
    w->action(MainWindow::Action::StepOver)->trigger(); // starts paused at the entry
    ASSERT_TRUE(paused.wait(kWaitMs));
    EXPECT_TRUE(w->action(MainWindow::Action::Stop)->isEnabled());
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    w->action(MainWindow::Action::Stop)->trigger();
    ASSERT_TRUE(finished.wait(kWaitMs));
    EXPECT_EQ(w->controller()->state(), State::Stopped);
    EXPECT_EQ(w->statusText(), QStringLiteral("Stopped"));
    EXPECT_FALSE(w->action(MainWindow::Action::Stop)->isEnabled());
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, State::Finished));
}

TEST(Window, StepCommandsWalkTheGraph)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    QSignalSpy paused(w->controller(), &SessionController::paused);
    w->action(MainWindow::Action::StepInto)->trigger();
    ASSERT_TRUE(paused.wait(kWaitMs));
    auto e = w->controller()->pauseEvent();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->node, "hybridsequential0_dense0_fwd");
    EXPECT_EQ(e->phase, OpPhase::Before);
    w->action(MainWindow::Action::StepInto)->trigger(); // the same node's after event
    ASSERT_TRUE(paused.wait(kWaitMs));
    e = w->controller()->pauseEvent();
    EXPECT_EQ(e->node, "hybridsequential0_dense0_fwd");
    EXPECT_EQ(e->phase, OpPhase::After);
    w->action(MainWindow::Action::StepOver)->trigger(); // the next op, after it ran
    ASSERT_TRUE(paused.wait(kWaitMs));
    e = w->controller()->pauseEvent();
    EXPECT_EQ(e->node, "hybridsequential0_dense0_relu_fwd");
    EXPECT_EQ(e->phase, OpPhase::After);
    // Run to a node selected in the graph.
    w->graphPanel()->view()->selectNode(QStringLiteral("hybridsequential0_dense2_fwd"), true);
    w->action(MainWindow::Action::RunTo)->trigger();
    ASSERT_TRUE(paused.wait(kWaitMs));
    EXPECT_EQ(w->controller()->pauseEvent()->node, "hybridsequential0_dense2_fwd");
    w->action(MainWindow::Action::Stop)->trigger();
    ASSERT_TRUE(waitState(*w, State::Stopped));
}

TEST(Window, F9TogglesABreakpointOnTheSelectedNode)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    const QString pool = QStringLiteral("hybridsequential0_pool0_fwd");
    w->graphPanel()->view()->selectNode(pool, true);
    w->action(MainWindow::Action::ToggleBreakpoint)->trigger();
    ASSERT_EQ(w->breakpointModel()->rowCount(), 1);
    EXPECT_EQ(w->breakpointModel()->breakpoints()[0].location, pool.toStdString());
    EXPECT_EQ(w->graphPanel()->model()->marks(pool).breakpoint, BreakMark::Enabled);
    w->breakpointModel()->setEnabled(w->breakpointModel()->breakpoints()[0].id, false);
    EXPECT_EQ(w->graphPanel()->model()->marks(pool).breakpoint, BreakMark::Disabled);
    w->action(MainWindow::Action::ToggleBreakpoint)->trigger();
    EXPECT_EQ(w->breakpointModel()->rowCount(), 0);
    EXPECT_EQ(w->graphPanel()->model()->marks(pool).breakpoint, BreakMark::None);
}

// A breakpoint on a parameter (F9 on it, as on any node found with Find) stops before the first
// op that reads it, and the Breakpoints dock says so; Find lists ops before parameters.
TEST(Window, ABreakpointOnAParameterStopsBeforeItsFirstReader)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    const QStringList found = w->graphPanel()->model()->find(QStringLiteral("conv1"));
    ASSERT_GE(found.size(), 3);
    EXPECT_EQ(found.first(), QStringLiteral("hybridsequential0_conv1_fwd")) << found.join(' ').toStdString();
    EXPECT_TRUE(found.last().endsWith(QStringLiteral("_weight")) || found.last().endsWith(QStringLiteral("_bias")));
    const QString weight = QStringLiteral("hybridsequential0_conv1_weight");
    w->graphPanel()->view()->selectNode(weight, true);
    w->action(MainWindow::Action::ToggleBreakpoint)->trigger();
    ASSERT_EQ(w->breakpointModel()->rowCount(), 1);
    const QModelIndex phase = w->breakpointModel()->index(0, BreakpointModel::Phase);
    EXPECT_EQ(phase.data().toString(), QStringLiteral("before 1st reader"));
    EXPECT_TRUE(phase.data(Qt::ToolTipRole).toString().contains(QStringLiteral("hybridsequential0_conv1_fwd")));
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(shown.wait(kWaitMs));
    const auto e = w->controller()->pauseEvent();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->node, "hybridsequential0_conv1_fwd");
    EXPECT_EQ(e->phase, OpPhase::Before);
    ASSERT_TRUE(e->focusTensor());
    EXPECT_EQ(e->focusTensor()->slot, "weight");
    w->controller()->stop();
    ASSERT_TRUE(waitState(*w, SessionController::State::Stopped));
}

TEST(Window, BreakOnNanStopsAtTheFirstNanAndMarksIt)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:nan-demo")));
    w->action(MainWindow::Action::BreakOnNan)->trigger();
    EXPECT_TRUE(w->breakpointModel()->breakOnNanInf());
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(shown.wait(kWaitMs));
    EXPECT_EQ(w->controller()->pauseEvent()->node, "nandemo0_log0");
    EXPECT_GT(w->inspector()->histogram().nan, 0u);
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    w->action(MainWindow::Action::BreakOnNan)->trigger(); // off: continue to the end
    w->runOrContinue();
    ASSERT_TRUE(finished.wait(kWaitMs));
    EXPECT_TRUE(w->graphPanel()->model()->marks(QStringLiteral("nandemo0_log0")).nanInf);
}

TEST(Window, ABadFileShowsAnErrorAndKeepsTheModel)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("broken-symbol.json"));
    QFile f(bad);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}, {\"op\": \"NoSuchOp\", ");
    f.close();
    QSignalSpy failed(w->controller(), &SessionController::modelLoadFailed);
    w->openModel(bad);
    ASSERT_TRUE(failed.wait(kWaitMs));
    EXPECT_TRUE(w->lastMessage().contains(QStringLiteral("broken-symbol.json"))) << w->lastMessage().toStdString();
    EXPECT_EQ(w->controller()->model()->spec, QStringLiteral("sample:lenet"));
    EXPECT_EQ(w->statusText(), QStringLiteral("Idle"));
    // The previous model still runs.
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, State::Finished));
}

TEST(Window, OpensARealMxnetExportAndRunsIt)
{
    OPSCOPE_NEEDS_SHARED("models/lenet-symbol.json", "models/lenet-0001.params");
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QString::fromStdString(::opscope::test::shared("models/lenet-symbol.json"))));
    EXPECT_GT(w->graphPanel()->model()->visibleCount(), 5);
    // The file does not record the data's shape: running asks for it.
    EXPECT_FALSE(w->startRun());
    EXPECT_TRUE(w->lastMessage().contains(QStringLiteral("shape"))) << w->lastMessage().toStdString();
    // The user types it; the graph gets its shapes.
    auto* edit = w->inputPanel()->findChild<QLineEdit*>(QStringLiteral("shapeEdit"));
    ASSERT_NE(edit, nullptr);
    QSignalSpy reshaped(w->controller(), &SessionController::modelReshaped);
    edit->setFocus();
    edit->selectAll();
    QTest::keyClicks(edit, QStringLiteral("1x1x28x28"));
    QTest::keyClick(edit, Qt::Key_Return);
    ASSERT_TRUE(reshaped.count() > 0 || reshaped.wait(kWaitMs));
    EXPECT_FALSE(w->controller()->model()->entryShapes.empty());
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, State::Finished));
    EXPECT_EQ(w->controller()->lastOutcome().outputs.size(), 1u);
}

TEST(Window, OpeningAnotherModelWhilePausedStopsTheRunFirst)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    QSignalSpy paused(w->controller(), &SessionController::paused);
    ASSERT_TRUE(w->startRun(true));
    ASSERT_TRUE(paused.wait(kWaitMs));
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    EXPECT_EQ(w->controller()->state(), State::Idle);
    EXPECT_FALSE(w->controller()->session().isRunning());
    EXPECT_EQ(w->controller()->model()->spec, QStringLiteral("sample:mlp"));
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, State::Finished));
}

TEST(Window, ClosingWhilePausedStopsCleanly)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mini-resnet")));
    QSignalSpy paused(w->controller(), &SessionController::paused);
    ASSERT_TRUE(w->startRun(true));
    ASSERT_TRUE(paused.wait(kWaitMs));
    EXPECT_TRUE(w->close());
    w.reset(); // joins the worker; a deadlock would hang here (ctest's timeout fails it)
    SUCCEED();
}

TEST(Window, InputOptionsSetTheSourcesAndADrawingRuns)
{
    AppOptions o;
    o.inputs = { QStringLiteral("data=zeros") };
    auto w = makeWindow(o);
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    ASSERT_EQ(w->inputPanel()->sources().size(), 1u);
    EXPECT_EQ(w->inputPanel()->sources()[0].kind, InputSource::Kind::Zeros);
    const InputPanel::Built zeros = w->inputPanel()->buildInputs();
    ASSERT_TRUE(zeros.ok()) << zeros.error.toStdString();
    EXPECT_EQ(zeros.tensors[0].shape(), (Shape { 1, 1, 28, 28 }));
    EXPECT_FLOAT_EQ(zeros.tensors[0].at(300), 0.0f);

    // A digit drawn on the pad becomes the input: ink centred in 28×28, values in [0, 1].
    QImage digit(280, 280, QImage::Format_Grayscale8);
    digit.fill(0);
    for (int y = 40; y < 240; ++y)
        for (int x = 125; x < 155; ++x)
            digit.setPixel(x, y, qRgb(255, 255, 255));
    w->inputPanel()->drawingPad()->loadImage(digit);
    InputSource pad;
    pad.kind = InputSource::Kind::Drawing;
    w->inputPanel()->setSource(0, pad);
    const InputPanel::Built drawn = w->inputPanel()->buildInputs();
    ASSERT_TRUE(drawn.ok()) << drawn.error.toStdString();
    const Tensor& t = drawn.tensors[0];
    EXPECT_GT(t.at(14 * 28 + 14), 0.5f); // the stroke passes through the centre
    EXPECT_FLOAT_EQ(t.at(0), 0.0f);
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(finished.wait(kWaitMs));
    EXPECT_EQ(w->controller()->lastOutcome().outputs[0].shape(), (Shape { 1, 10 }));
}
