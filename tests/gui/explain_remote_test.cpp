// Explaining a model that runs on a server, from the window: the Explain dock asks the server
// (which explains the input its run took, with its own weights) and draws the answer over that
// input; a server that cannot explain says why; "How this value is computed" fetches the paused
// node's tensors from the server and computes the terms here; the presentation and a channel's
// examples run on a copy of the server's model with its weights, fetched.

#include "compare/explain_job.h"
#include "gui/explain/channel_examples_view.h"
#include "gui/explain/explain_panel.h"
#include "gui/present/presentation_view.h"
#include "gui/session/channel_profile_runner.h"
#include "gui/explain/unit_anatomy_view.h"
#include "gui/gui_test_util.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/tensor_inspector.h"
#include "remote/remote_test_util.h"

#include <cstring>

#include <QDir>
#include <QDockWidget>
#include <QStatusBar>
#include <QTreeWidget>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;
using State = SessionController::State;

namespace {
debug::ServeOptions explaining()
{
    debug::ServeOptions o;
    o.explainer = debug::explainerFor("sample:lenet", "");
    return o;
}

ServerEntry entryOf(const remote::test::ServedSample& served)
{
    return { QString::fromStdString(served.server->address()), {}, {} };
}

// Runs on the server to the end with the Explain dock in front; waits for the explanation or a message.
bool runAndExplain(MainWindow& w)
{
    w.explainDock()->show();
    w.explainDock()->raise();
    QSignalSpy shown(w.explainPanel(), &ExplainPanel::explanationShown);
    if (!w.startRun() || !waitState(w, State::Finished)) return false;
    return QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs);
}
}

TEST(ExplainRemote, TheServerExplainsItsRunAndTheDockDrawsItOverItsInput)
{
    remote::test::Watchdog dog("ExplainRemote", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", explaining(), true);
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    ASSERT_TRUE(runAndExplain(*w)) << w->explainPanel()->messageText().toStdString();
    ExplainPanel* p = w->explainPanel();
    ASSERT_TRUE(p->result());
    // The explanation computed here on the same input, with the same weights.
    samples::Sample here = samples::makeSample("lenet");
    here.block->hybridize();
    debug::ExplainOptions o;
    o.topK = 10;
    const debug::Explanation local = debug::explain(*here.block, served.sample.defaultInputs[0], o);
    const debug::Explanation& e = p->result()->explanation;
    EXPECT_EQ(e.classIndex, local.classIndex);
    EXPECT_EQ(e.top, local.top);
    ASSERT_EQ(e.heat.shape(), local.heat.shape());
    EXPECT_EQ(std::memcmp(e.heat.raw(), local.heat.raw(), e.heat.bytes()), 0);
    EXPECT_EQ(p->overlay().size(), QSize(28, 28)) << "drawn over the server's input";
    EXPECT_TRUE(p->statusText().startsWith(QStringLiteral("Saliency of class %1").arg(local.classIndex))) << p->statusText().toStdString();
    auto* classes = p->findChild<QTreeWidget*>();
    ASSERT_TRUE(classes);
    EXPECT_EQ(classes->topLevelItemCount(), 10);

    // Grad-CAM on the server, then another class.
    QSignalSpy shown(p, &ExplainPanel::explanationShown);
    p->setMethod(debug::ExplainMethod::GradCam);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs)) << p->messageText().toStdString();
    EXPECT_EQ(p->result()->explanation.layer, "hybridsequential0_conv1_tanh_fwd");
    shown.clear();
    p->setClass(3);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs)) << p->messageText().toStdString();
    EXPECT_EQ(p->result()->explanation.classIndex, 3);
    if (const char* shots = std::getenv("OPSCOPE_TEST_SHOTS")) w->saveScreenshot(QString::fromLocal8Bit(shots) + "/explain-remote.png");
}

TEST(ExplainRemote, AServerThatCannotExplainSaysWhy)
{
    remote::test::Watchdog dog("ExplainRemote refused", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    w->explainDock()->show();
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, State::Finished));
    ExplainPanel* p = w->explainPanel();
    ASSERT_TRUE(QTest::qWaitFor([&] { return p->messageText().contains(QStringLiteral("cannot explain")); }, kWaitMs))
        << p->messageText().toStdString();
    EXPECT_FALSE(p->result());
}

TEST(ExplainRemote, AValueOfAServersPausedConvolutionIsExplainedFromItsFetchedTensors)
{
    remote::test::Watchdog dog("ExplainRemote anatomy", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    const std::string conv1 = "hybridsequential0_conv1_fwd";
    served.session.addBreakpoint(debug::Breakpoint::onNode(conv1, OpPhase::After));
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    QSignalSpy paused(w.get(), &MainWindow::pauseShown);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(paused.wait(kWaitMs)) << w->lastMessage().toStdString();
    const QString out = QString::fromStdString(conv1 + "_output");
    ASSERT_TRUE(w->inspector()->showTensor(out));
    w->inspector()->setCurrentTab(TensorInspector::Tab::Image);
    QSignalSpy anatomy(w.get(), &MainWindow::unitAnatomyShown);
    // The Image tab's click, as the canvas reports it: the node's tensors are fetched, then shown.
    Q_EMIT w->inspector()->featureMapView()->elementClicked({ 0, 3, 2, 5 });
    ASSERT_TRUE(QTest::qWaitFor([&] { return !anatomy.isEmpty(); }, kWaitMs)) << w->lastMessage().toStdString();
    UnitAnatomyView* v = w->unitAnatomyView();
    ASSERT_TRUE(v && v->isVisible());
    const debug::UnitAnatomy& a = v->anatomy();
    EXPECT_EQ(a.channels.size(), 10u);
    EXPECT_EQ(a.terms.size(), 250u);
    const std::optional<Tensor> there = served.session.tensor(conv1 + "_output");
    ASSERT_TRUE(there.has_value());
    EXPECT_EQ(a.tensorValue, there->data()[((0 * 25 + 3) * 8 + 2) * 8 + 5]) << "the server's value";
    EXPECT_NEAR(a.total, a.tensorValue, 1e-5);
    // Another tensor than the paused node's output is refused at once.
    EXPECT_FALSE(w->showUnitAnatomy(QStringLiteral("hybridsequential0_conv1_weight"), { 0, 0, 0, 0 }));
}

TEST(ExplainRemote, ThePresentationRunsOnACopyOfTheServersModelAndItsInput)
{
    remote::test::Watchdog dog("ExplainRemote presentation", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    ASSERT_TRUE(w->openPresentation(0)) << w->statusBar()->currentMessage().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return w->presentationView() != nullptr; }, kWaitMs))
        << w->statusBar()->currentMessage().toStdString();
    EXPECT_TRUE(w->statusBar()->currentMessage().contains(QStringLiteral("copy of the model on")))
        << w->statusBar()->currentMessage().toStdString();
    PresentationView* p = w->presentationView();
    ASSERT_TRUE(QTest::qWaitFor([&] { return p->layerCount() > 0; }, kWaitMs)) << p->titleText().toStdString();
    // The pass of the model computed here, with the same weights, on the server's input.
    samples::Sample here = samples::makeSample("lenet");
    here.block->hybridize();
    const Tensor expected = here.block->call(served.sample.defaultInputs[0]);
    const Tensor& input = p->pass()->input;
    ASSERT_EQ(input.shape(), served.sample.defaultInputs[0].shape());
    EXPECT_EQ(std::memcmp(input.raw(), served.sample.defaultInputs[0].raw(), input.bytes()), 0) << "the server's input";
    // The same layers as the pass of the sample loaded here.
    const ForwardPassPtr local = recordForwardPass(*loadModelInfo(QStringLiteral("sample:lenet")), served.sample.defaultInputs[0]);
    ASSERT_EQ(p->pass()->layers.size(), local->layers.size());
    for (size_t i = 0; i < local->layers.size(); ++i)
        EXPECT_EQ(p->pass()->layers[i].node, local->layers[i].node);
    const Tensor& scores = p->pass()->scores;
    ASSERT_EQ(scores.size(), expected.size());
    for (int64_t k = 0; k < scores.size(); ++k)
        EXPECT_NEAR(scores.data()[k], expected.data()[k], 1e-5) << "class " << k;
    if (const char* shots = std::getenv("OPSCOPE_TEST_SHOTS")) {
        p->showLayer(3);
        p->grab().save(QString::fromLocal8Bit(shots) + "/present-remote.png");
    }
}

TEST(ExplainRemote, AChannelOfAServersModelIsProfiledOnACopyOfIt)
{
    remote::test::Watchdog dog("ExplainRemote channel", std::chrono::seconds(300));
    remote::test::ServedSample served("lenet", {}, true);
    const std::string tanh1 = "hybridsequential0_conv1_tanh_fwd";
    served.session.addBreakpoint(debug::Breakpoint::onNode(tanh1, OpPhase::After));
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    QSignalSpy paused(w.get(), &MainWindow::pauseShown);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(paused.wait(kWaitMs)) << w->lastMessage().toStdString();
    QDir(ChannelProfileRunner::cacheFolder()).removeRecursively();
    ASSERT_TRUE(w->showChannelExamples(QString::fromStdString(tanh1 + "_output"), 3)) << w->statusBar()->currentMessage().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return w->channelExamplesView() != nullptr; }, kWaitMs))
        << w->statusBar()->currentMessage().toStdString();
    ChannelExamplesView* v = w->channelExamplesView();
    QSignalSpy shown(v, &ChannelExamplesView::shown);
    QSignalSpy failed(v->runner(), &ChannelProfileRunner::failed);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !shown.isEmpty() || !failed.isEmpty(); }, 180000));
    if (!failed.isEmpty()) {
        const QString why = failed.front().front().toString();
        if (why.contains(QStringLiteral("not installed"))) GTEST_SKIP() << why.toStdString();
        FAIL() << why.toStdString();
    }
    const ChannelProfileResultPtr r = v->result();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->request.dataSet, QStringLiteral("mnist")); // lenet's own data set first, as here
    EXPECT_EQ(r->profile.channels.size(), 25u);
    EXPECT_EQ(r->profile.samples, 1996);
    EXPECT_TRUE(r->request.model.endsWith(QStringLiteral("model-symbol.json"))) << r->request.model.toStdString();
    served.session.clearBreakpoints();
    served.session.continueRun();
}
