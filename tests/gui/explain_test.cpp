// The Explain dock: after a run, why the classifier answered as it did (saliency, gradient × input,
// Grad-CAM, occlusion over the input), its top classes named, another class picked, cancelled; and
// how one value of a convolution or a fully connected layer is computed, from a click; what a
// channel responds to; and the presentation's walk through a forward pass.

#include "gui/explain/explain_panel.h"
#include "gui/explain/channel_examples_view.h"
#include "gui/explain/heat_overlay.h"
#include "gui/explain/unit_anatomy_view.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/present/presentation_view.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui_test_util.h"

#include <gtest/gtest.h>

#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QTableWidget>
#include <cstdlib>
#include <QTreeWidget>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {

// Runs the window's model to its end with the Explain dock in front; waits for the explanation.
bool runAndExplain(MainWindow& w)
{
    w.explainDock()->show();
    w.explainDock()->raise();
    QSignalSpy shown(w.explainPanel(), &ExplainPanel::explanationShown);
    if (!w.startRun() || !waitState(w, SessionController::State::Finished)) return false;
    return QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs);
}

bool waitShown(ExplainPanel& p)
{
    QSignalSpy shown(&p, &ExplainPanel::explanationShown);
    return QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs);
}

} // namespace

TEST(ExplainWindow, AFinishedRunIsExplainedOverItsInput)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    ASSERT_TRUE(runAndExplain(*w));
    ExplainPanel* p = w->explainPanel();
    ASSERT_TRUE(p->result());
    EXPECT_EQ(p->result()->explanation.classIndex, 7);
    EXPECT_EQ(p->overlay().size(), QSize(28, 28));
    EXPECT_TRUE(p->statusText().startsWith(QStringLiteral("Saliency of class 7"))) << p->statusText().toStdString();
    auto* classes = p->findChild<QTreeWidget*>();
    ASSERT_TRUE(classes);
    EXPECT_EQ(classes->topLevelItemCount(), 10);
    EXPECT_EQ(classes->topLevelItem(0)->text(0), QStringLiteral("7"));

    // Grad-CAM on the default layer (the last convolution's activation), then another class.
    p->setMethod(debug::ExplainMethod::GradCam);
    ASSERT_TRUE(waitShown(*p));
    EXPECT_EQ(p->result()->explanation.layer, "hybridsequential0_conv1_tanh_fwd");
    EXPECT_TRUE(p->statusText().contains(QStringLiteral("on hybridsequential0_conv1_tanh_fwd")));
    p->setClass(3);
    ASSERT_TRUE(waitShown(*p));
    EXPECT_EQ(p->result()->explanation.classIndex, 3);
    EXPECT_EQ(classes->currentItem()->data(0, Qt::UserRole).toLongLong(), 3);

    // The opacity only redraws: 0 leaves the input's gray levels.
    p->setOpacity(0);
    const QImage plain = p->overlay();
    EXPECT_EQ(qRed(plain.pixel(0, 0)), qGreen(plain.pixel(0, 0)));
    EXPECT_EQ(qGreen(plain.pixel(0, 0)), qBlue(plain.pixel(0, 0)));
}

TEST(ExplainWindow, OcclusionReportsProgressAndTheFashionClassesAreNamed)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:fashion")));
    ExplainPanel* p = w->explainPanel();
    p->setMethod(debug::ExplainMethod::Occlusion);
    QSignalSpy progress(p->runner(), &ExplainRunner::progress);
    ASSERT_TRUE(runAndExplain(*w));
    EXPECT_FALSE(progress.isEmpty());
    EXPECT_EQ(p->result()->explanation.method, debug::ExplainMethod::Occlusion);
    auto* classes = p->findChild<QTreeWidget*>();
    EXPECT_EQ(classes->topLevelItem(0)->text(0), QStringLiteral("9 · Ankle boot"));
    EXPECT_TRUE(p->statusText().contains(QStringLiteral("Ankle boot"))) << p->statusText().toStdString();
}

TEST(ExplainWindow, ACancelledExplanationDeliversNothing)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    ASSERT_TRUE(runAndExplain(*w));
    ExplainPanel* p = w->explainPanel();
    const ExplainResultPtr before = p->result();
    QSignalSpy finished(p->runner(), &ExplainRunner::finished);
    p->setMethod(debug::ExplainMethod::Occlusion);
    p->runner()->cancel();
    ASSERT_TRUE(p->runner()->waitForIdle());
    EXPECT_TRUE(finished.isEmpty());
    EXPECT_EQ(p->result(), before);
}

TEST(ExplainWindow, WhatCannotBeExplainedSaysWhy)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:tiny-transformer")));
    w->explainDock()->show();
    w->explainDock()->raise();
    QSignalSpy failed(w->explainPanel()->runner(), &ExplainRunner::failed);
    ASSERT_TRUE(w->startRun());
    ASSERT_TRUE(waitState(*w, SessionController::State::Finished));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !failed.isEmpty(); }, kWaitMs));
    EXPECT_TRUE(w->explainPanel()->messageText().startsWith(QStringLiteral("Cannot explain this")))
        << w->explainPanel()->messageText().toStdString();
    // Another model clears it.
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:lenet")));
    EXPECT_TRUE(w->explainPanel()->messageText().startsWith(QStringLiteral("Run the model")));
}

TEST(HeatOverlay, PositiveIsWarmNegativeIsBlueAndShapesMustAgree)
{
    Tensor input = Tensor::zeros({ 1, 1, 2, 2 });
    Tensor heat = Tensor::fromValues(Shape({ 2, 2 }), std::vector<float> { 1.0f, -1.0f, 0.0f, 0.5f });
    const QImage img = renderHeatOverlay(input, heat, 1.0);
    ASSERT_EQ(img.size(), QSize(2, 2));
    EXPECT_GT(qRed(img.pixel(0, 0)), 200); // +1: yellow-white
    EXPECT_GT(qBlue(img.pixel(1, 0)), 200); // -1: blue
    EXPECT_EQ(img.pixel(0, 1), qRgb(0, 0, 0)); // 0 over black input: the input
    EXPECT_TRUE(renderHeatOverlay(input, Tensor::zeros({ 3, 2 }), 1.0).isNull());
}

namespace {
// Pauses lenet after `node` with the Image tab on its output.
bool pauseAfter(MainWindow& w, const QString& node)
{
    if (!openAndWait(w, QStringLiteral("sample:lenet"))) return false;
    w.breakpointModel()->add(debug::Breakpoint::onNode(node.toStdString(), OpPhase::After));
    QSignalSpy shown(&w, &MainWindow::pauseShown);
    w.action(MainWindow::Action::Run)->trigger();
    return shown.wait(kWaitMs);
}
} // namespace

TEST(UnitAnatomyWindow, AClickedConvolutionValueOpensItsTerms)
{
    auto w = makeWindow();
    ASSERT_TRUE(pauseAfter(*w, QStringLiteral("hybridsequential0_conv1_fwd")));
    const QString out = QStringLiteral("hybridsequential0_conv1_fwd_output");
    ASSERT_TRUE(w->inspector()->showTensor(out));
    w->inspector()->setCurrentTab(TensorInspector::Tab::Image);
    // The Image tab's click, as the canvas reports it.
    Q_EMIT w->inspector()->featureMapView()->elementClicked({ 0, 3, 2, 5 });
    UnitAnatomyView* v = w->unitAnatomyView();
    ASSERT_TRUE(v);
    ASSERT_TRUE(v->isVisible());
    const debug::UnitAnatomy& a = v->anatomy();
    EXPECT_EQ(a.channels.size(), 10u); // conv0's ten maps
    EXPECT_EQ(a.terms.size(), 250u);
    const Tensor t = *w->inspector()->currentTensor();
    EXPECT_EQ(a.tensorValue, t.data()[((0 * 25 + 3) * 8 + 2) * 8 + 5]);
    EXPECT_NEAR(a.total, a.tensorValue, 1e-5);
    EXPECT_EQ(a.activation, "tanh");
    EXPECT_TRUE(v->summaryText().contains(QStringLiteral("Σ over 10 input channel(s) × 5×5 kernel = 250 products")))
        << v->summaryText().toStdString();
    EXPECT_TRUE(v->summaryText().contains(QStringLiteral("→ tanh →"))) << v->summaryText().toStdString();
    if (const char* dir = std::getenv("OPSCOPE_SCREENSHOT_DIR")) {
        w->findChild<QDialog*>(QStringLiteral("unitAnatomyDialog"))->resize(980, 760);
        QCoreApplication::processEvents();
        w->findChild<QDialog*>(QStringLiteral("unitAnatomyDialog"))->grab().save(QString::fromLatin1(dir) + QStringLiteral("/conv-value.png"));
    }
    // A node without an anatomy, or another tensor, says so instead.
    EXPECT_FALSE(w->showUnitAnatomy(QStringLiteral("hybridsequential0_conv1_weight"), { 0, 0, 0, 0 }));
}

TEST(UnitAnatomyWindow, AFullyConnectedUnitListsItsLargestContributions)
{
    auto w = makeWindow();
    ASSERT_TRUE(pauseAfter(*w, QStringLiteral("hybridsequential0_dense0_fwd")));
    ASSERT_TRUE(w->showUnitAnatomy(QStringLiteral("hybridsequential0_dense0_fwd_output"), { 0, 7 }));
    const debug::UnitAnatomy& a = w->unitAnatomyView()->anatomy();
    EXPECT_EQ(a.terms.size(), 400u); // 25 maps of 4×4
    EXPECT_NEAR(a.total, a.tensorValue, 1e-5);
    EXPECT_TRUE(w->unitAnatomyView()->summaryText().contains(QStringLiteral("The 40 largest contributions")));
    auto* table = w->unitAnatomyView()->findChild<QTableWidget*>();
    ASSERT_TRUE(table);
    EXPECT_EQ(table->rowCount(), 40);
}

TEST(ChannelExamplesWindow, TheImagesThatActivateAChannelMostAndItsClassMeans)
{
    auto w = makeWindow();
    ASSERT_TRUE(pauseAfter(*w, QStringLiteral("hybridsequential0_conv1_tanh_fwd")));
    const QString out = QStringLiteral("hybridsequential0_conv1_tanh_fwd_output");
    QDir(ChannelProfileRunner::cacheFolder()).removeRecursively();
    ASSERT_TRUE(w->showChannelExamples(out, 3));
    ChannelExamplesView* v = w->channelExamplesView();
    QSignalSpy shown(v, &ChannelExamplesView::shown);
    QSignalSpy failed(v->runner(), &ChannelProfileRunner::failed);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !shown.isEmpty() || !failed.isEmpty(); }, 120000));
    if (!failed.isEmpty()) {
        const QString why = failed.front().front().toString();
        if (why.contains(QStringLiteral("not installed"))) GTEST_SKIP() << why.toStdString();
        FAIL() << why.toStdString();
    }
    const ChannelProfileResultPtr r = v->result();
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->fromCache);
    EXPECT_EQ(r->request.dataSet, QStringLiteral("mnist")); // lenet's own data set first
    EXPECT_EQ(r->profile.channels.size(), 25u);
    EXPECT_EQ(r->profile.samples, 1996);
    EXPECT_EQ(v->captions().size(), 9);
    const auto& top = r->profile.channels[3].top;
    for (size_t k = 1; k < top.size(); ++k)
        EXPECT_GE(top[k - 1].activation, top[k].activation);
    // Each example's field is 14×14 (conv1 over pool0 over conv0), within the image.
    for (const debug::ChannelExample& e : top) {
        EXPECT_EQ(e.field.bottom - e.field.top, 13);
        EXPECT_EQ(e.field.right - e.field.left, 13);
    }
    EXPECT_EQ(r->profile.channels[3].meanPerClass.size(), 10u);
    if (const char* dir = std::getenv("OPSCOPE_SCREENSHOT_DIR")) {
        QCoreApplication::processEvents();
        w->findChild<QDialog*>(QStringLiteral("channelExamplesDialog"))->grab().save(QString::fromLatin1(dir) + QStringLiteral("/channel-examples.png"));
    }
    // Another channel at once, from the same profile; the layer again: from the cache.
    v->setChannel(7);
    EXPECT_EQ(v->captions().size(), 9);
    QSignalSpy again(v, &ChannelExamplesView::shown);
    ASSERT_TRUE(w->showChannelExamples(out, 5));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !again.isEmpty(); }, 60000));
    EXPECT_TRUE(v->result()->fromCache);
    EXPECT_TRUE(v->statusText().contains(QStringLiteral("from the cache"))) << v->statusText().toStdString();
    EXPECT_EQ(v->channel(), 5);
}

TEST(ChannelExamplesWindow, AModelNoDataSetFitsSaysSo)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mini-resnet")));
    w->breakpointModel()->add(debug::Breakpoint::onNode("hybridsequential0_conv0_fwd", OpPhase::After));
    QSignalSpy shownPause(w.get(), &MainWindow::pauseShown);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(shownPause.wait(kWaitMs));
    EXPECT_FALSE(w->showChannelExamples(QStringLiteral("hybridsequential0_conv0_fwd_output"), 0));
    EXPECT_FALSE(w->showChannelExamples(QStringLiteral("no_such_tensor"), 0));
}

TEST(Presentation, LeftAndRightStepThroughTheForwardPass)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:fashion")));
    ASSERT_TRUE(w->openPresentation(0));
    PresentationView* p = w->presentationView();
    ASSERT_TRUE(p);
    QSignalSpy shown(p, &PresentationView::layerShown);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !shown.isEmpty(); }, kWaitMs));
    EXPECT_EQ(p->layerCount(), 9); // conv, relu, pool, conv, relu, pool, dense, relu, dense
    EXPECT_EQ(p->currentLayer(), 0);
    EXPECT_TRUE(p->titleText().startsWith(QStringLiteral("fashion · layer 1 of 9: Convolution"))) << p->titleText().toStdString();
    QTest::keyClick(p, Qt::Key_Right);
    EXPECT_EQ(p->currentLayer(), 1);
    EXPECT_EQ(p->featureMaps()->tensor().shape(), (Shape { 1, 16, 28, 28 }));
    QTest::keyClick(p, Qt::Key_End);
    EXPECT_EQ(p->currentLayer(), 8);
    QTest::keyClick(p, Qt::Key_Right); // past the end: stays
    EXPECT_EQ(p->currentLayer(), 8);
    QTest::keyClick(p, Qt::Key_Left);
    EXPECT_EQ(p->currentLayer(), 7);
    // The pass's last output is the model's prediction: the ankle boot.
    const Tensor& scores = p->pass()->scores;
    ASSERT_EQ(scores.size(), 10);
    EXPECT_EQ(std::max_element(scores.data(), scores.data() + 10) - scores.data(), 9);
    EXPECT_EQ(p->pass()->classNames.at(9), "Ankle boot");
    QTest::keyClick(p, Qt::Key_Escape);
    EXPECT_FALSE(p->isVisible());
}
