// The window attached to a server's engine as a user would: File ▸ Attach's path, the server's
// breakpoints and pause shown with tensors fetched from it,
// the server dying (banner, model still drawn), Reconnect, control shared by two windows, detach.

#include "gui/graph/graph_model.h"
#include "gui/gui_test_util.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/remote/engine_banner.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor/value_table.h"
#include "remote/remote_test_util.h"
#include "remote/server_process.h"

#include <cstring>

#include <QAction>
#include <QDialogButtonBox>
#include <QSettings>
#include <QLabel>
#include <QPushButton>
#include <QStatusBar>
#include <QToolButton>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;
using State = SessionController::State;

namespace {
const std::string kConv1 = "hybridsequential0_conv1_fwd";

ServerEntry entryOf(const remote::test::ServedSample& served)
{
    return { QString::fromStdString(served.server->address()), {}, {} };
}

// Saves the window to $OPSCOPE_TEST_SHOTS/NAME.png when that folder is given (to look at).
void shot(MainWindow& w, const char* name)
{
    const QByteArray dir = qgetenv("OPSCOPE_TEST_SHOTS");
    if (!dir.isEmpty()) w.saveScreenshot(QString::fromUtf8(dir) + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
}
}

TEST(WindowAttach, AServersPauseIsShownWithFetchedTensorsAndItsLossLeavesTheModelDrawn)
{
    remote::test::Watchdog dog("WindowAttach", std::chrono::seconds(240));
    auto served = std::make_unique<remote::test::ServedSample>("lenet", debug::ServeOptions {}, true);
    served->session.addBreakpoint(debug::Breakpoint::onNode(kConv1, OpPhase::After)); // the server's own
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));

    QSignalSpy ready(w.get(), &MainWindow::modelReady);
    ASSERT_TRUE(w->attachToServer(entryOf(*served))) << w->lastMessage().toStdString();
    ASSERT_FALSE(ready.isEmpty());
    const QString where = QString::fromStdString(served->server->address());
    EXPECT_TRUE(w->windowTitle().contains(QStringLiteral(" on ") + where)) << w->windowTitle().toStdString();
    EXPECT_TRUE(w->controller()->model()->isRemote());
    EXPECT_EQ(w->graphPanel()->model()->graph(), w->controller()->model()->graph);
    // The server's breakpoint is the table's; one set in the window lands there.
    ASSERT_EQ(w->breakpointModel()->breakpoints().size(), 1u);
    EXPECT_EQ(w->breakpointModel()->breakpoints()[0].location, kConv1);
    w->breakpointModel()->toggleNode(QStringLiteral("hybridsequential0_dense0_fwd"), OpPhase::Before);
    EXPECT_EQ(served->session.breakpoints().size(), 2u);
    // The inputs are the server's own.
    ASSERT_EQ(w->inputPanel()->sources().size(), 1u) << "the server's input, by default its own";
    EXPECT_EQ(w->inputPanel()->sources()[0].kind, InputSource::Kind::Default);
    EXPECT_NE(w->inputPanel()->statusText(0).indexOf(where), -1) << w->inputPanel()->statusText(0).toStdString();

    // Run there: the pause's tensors come over the wire into the inspector.
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(shown.wait(kWaitMs)) << w->lastMessage().toStdString();
    EXPECT_EQ(w->controller()->pauseEvent()->node, kConv1);
    const std::optional<Tensor> t = w->inspector()->currentTensor();
    ASSERT_TRUE(t.has_value());
    ASSERT_EQ(t->shape(), Shape({ 1, 25, 8, 8 }));
    const std::optional<Tensor> there = served->session.tensor(kConv1 + "_output");
    ASSERT_TRUE(there.has_value());
    EXPECT_EQ(std::memcmp(t->raw(), there->raw(), t->bytes()), 0) << "bit-exact over the wire";
    EXPECT_FALSE(w->isFetching());
    EXPECT_TRUE(w->statusBar()->currentMessage().startsWith(QStringLiteral("Fetched "))) << w->statusBar()->currentMessage().toStdString();
    EXPECT_GT(w->runRecordPanel()->model()->rowCount(), 0) << "the record level of the Record menu holds there";
    shot(*w, "attached-paused");
    // A node that ran before the pause: its kept output comes from the server's record.
    const QString conv0 = QStringLiteral("hybridsequential0_conv0_fwd");
    w->graphPanel()->view()->selectNode(conv0, true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w->isFetching() && w->inspector()->currentTensor().has_value()
                                           && w->inspector()->currentTensorName().startsWith(conv0); }, kWaitMs))
        << w->inspector()->currentTensorName().toStdString();
    EXPECT_EQ(w->inspector()->currentTensor()->shape(), Shape({ 1, 10, 24, 24 }));
    // Its weights come too (the server reads them while its run is paused).
    bool weight = false;
    for (const InspectedTensor& i : w->inspector()->tensors())
        if (i.name == conv0 + QStringLiteral("_weight") || i.name == QStringLiteral("hybridsequential0_conv0_weight")) {
            weight = i.values.defined() && i.values.shape() == Shape({ 10, 1, 5, 5 });
            const std::optional<Tensor> p = served->session.parameter("hybridsequential0_conv0_weight");
            ASSERT_TRUE(p.has_value());
            EXPECT_EQ(std::memcmp(i.values.raw(), p->raw(), p->bytes()), 0);
        }
    EXPECT_TRUE(weight) << "a picked node's parameters are fetched by name";

    // The server dies: the model stays drawn, a banner says so, commands are off.
    const std::string address = served->server->address();
    served.reset();
    ASSERT_TRUE(waitState(*w, State::Failed));
    EXPECT_TRUE(w->engineBanner()->isVisibleTo(w.get()));
    EXPECT_NE(w->engineBanner()->text().indexOf(where), -1) << w->engineBanner()->text().toStdString();
    EXPECT_TRUE(w->graphPanel()->model()->graph());
    EXPECT_FALSE(w->action(MainWindow::Action::Run)->isEnabled());
    shot(*w, "attached-lost");

    // Nothing there: Reconnect says so and the banner stays.
    EXPECT_FALSE(w->reconnect());
    EXPECT_TRUE(w->engineBanner()->isVisibleTo(w.get()));
    // A server on the same address again: Reconnect attaches, the banner goes.
    debug::ServeOptions again;
    again.listen = address;
    remote::test::ServedSample restarted("lenet", again, true);
    w->engineBanner()->reconnectButton()->click();
    EXPECT_TRUE(w->controller()->isAttached()) << w->lastMessage().toStdString();
    EXPECT_FALSE(w->controller()->isEngineLost());
    EXPECT_EQ(w->controller()->state(), State::Idle);
    EXPECT_FALSE(w->engineBanner()->isVisibleTo(w.get()));

    // Detach: this process's model and engine again; the server keeps its breakpoint.
    w->breakpointModel()->toggleNode(QString::fromStdString(kConv1), OpPhase::Before);
    w->detachFromServer();
    EXPECT_FALSE(w->controller()->isAttached());
    EXPECT_EQ(w->controller()->model()->spec, QStringLiteral("sample:mlp"));
    EXPECT_EQ(w->inputPanel()->sources().size(), 1u);
    EXPECT_EQ(restarted.session.breakpoints().size(), 1u);
    EXPECT_FALSE(w->windowTitle().contains(QStringLiteral(" on ")));
}

TEST(WindowAttach, OneWindowHoldsControlAnotherWatchesUntilItIsHandedOver)
{
    remote::test::Watchdog dog("WindowAttach control", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    auto a = makeWindow();
    auto b = makeWindow();
    ASSERT_TRUE(a->attachToServer(entryOf(served))) << a->lastMessage().toStdString();
    ASSERT_TRUE(b->attachToServer(entryOf(served), {}, true)) << b->lastMessage().toStdString();
    EXPECT_TRUE(a->controller()->hasControl());
    EXPECT_FALSE(b->controller()->hasControl());
    EXPECT_TRUE(a->action(MainWindow::Action::Run)->isEnabled());
    EXPECT_FALSE(b->action(MainWindow::Action::Run)->isEnabled()) << "a watcher's commands would be refused";
    // Its breakpoint table is shown, not edited: an edit is refused with the reason, none reaches the server.
    EXPECT_TRUE(b->breakpointModel()->isReadOnly());
    EXPECT_FALSE(b->action(MainWindow::Action::ToggleBreakpoint)->isEnabled());
    EXPECT_FALSE(a->breakpointModel()->isReadOnly());
    EXPECT_EQ(b->breakpointModel()->toggleNode(QString::fromStdString(kConv1), OpPhase::After), 0);
    EXPECT_NE(b->breakpointModel()->lastError().indexOf(QStringLiteral("holds control")), -1)
        << b->breakpointModel()->lastError().toStdString();
    EXPECT_TRUE(served.session.breakpoints().empty());
    // Taking control while another holds it is refused naming the holder.
    EXPECT_FALSE(b->controller()->takeControl());
    EXPECT_NE(b->controller()->lastError().indexOf(QStringLiteral("holds control")), -1)
        << b->controller()->lastError().toStdString();
    // Handed over: the watcher hears of it and may run.
    ASSERT_TRUE(QTest::qWaitFor([&] { return a->controller()->control().clients.size() == 2; }, kWaitMs))
        << "a client attaching is an event to the others";
    quint64 bId = 0;
    for (const auto& c : a->controller()->control().clients)
        if (c.id != a->controller()->control().holder) bId = c.id;
    ASSERT_NE(bId, 0u);
    ASSERT_TRUE(a->controller()->handOverControl(bId)) << a->controller()->lastError().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return b->controller()->hasControl(); }, kWaitMs));
    EXPECT_TRUE(b->action(MainWindow::Action::Run)->isEnabled());
    EXPECT_FALSE(a->controller()->hasControl());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !a->action(MainWindow::Action::Run)->isEnabled(); }, kWaitMs));
    EXPECT_FALSE(b->breakpointModel()->isReadOnly());
    EXPECT_TRUE(a->breakpointModel()->isReadOnly());
    EXPECT_NE(b->breakpointModel()->toggleNode(QString::fromStdString(kConv1), OpPhase::After), 0);
    EXPECT_EQ(served.session.breakpoints().size(), 1u);
    b->breakpointModel()->clear();
    // The watcher, now in control, runs; both windows see the run end.
    QSignalSpy aDone(a->controller(), &SessionController::runFinished);
    b->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(waitState(*b, State::Finished)) << b->lastMessage().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !aDone.isEmpty(); }, kWaitMs)) << "the watcher sees the run end too";
    shot(*b, "attached-watcher-in-control");
}

TEST(WindowAttach, AnAttachThatCannotConnectKeepsTheModelAndSaysWhy)
{
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    EXPECT_FALSE(w->attachToServer({ QStringLiteral("127.0.0.1:1"), {}, {} }));
    EXPECT_NE(w->lastMessage().indexOf(QStringLiteral("127.0.0.1:1")), -1) << w->lastMessage().toStdString();
    EXPECT_EQ(w->controller()->model()->spec, QStringLiteral("sample:mlp"));
    EXPECT_FALSE(w->controller()->isAttached());
    // A token file that is not there is named.
    EXPECT_FALSE(w->attachToServer({ QStringLiteral("127.0.0.1:2"), QStringLiteral("/nonexistent/token"), {} }));
    EXPECT_NE(w->lastMessage().indexOf(QStringLiteral("/nonexistent/token")), -1) << w->lastMessage().toStdString();
}

TEST(WindowAttach, TheDialogOffersRecentServersWithTheirTokenFilesButNoTypedToken)
{
    QSettings().remove(QStringLiteral("servers/recent"));
    rememberServer({ QStringLiteral("gpu-box:7070"), QStringLiteral("/home/u/.opscope-token"), {} });
    rememberServer({ QStringLiteral("127.0.0.1:50051"), {}, {} });
    rememberServer({ QStringLiteral("gpu-box:7070"), QStringLiteral("/home/u/.opscope-token"), QStringLiteral("ca.pem") });
    const QList<ServerEntry> recent = recentServers();
    ASSERT_EQ(recent.size(), 2) << "one entry per address, newest first";
    EXPECT_EQ(recent[0].address, QStringLiteral("gpu-box:7070"));
    EXPECT_EQ(recent[0].tlsCa, QStringLiteral("ca.pem"));
    EXPECT_FALSE(isServerAddress(QStringLiteral("gpu-box")));
    EXPECT_FALSE(isServerAddress(QStringLiteral("gpu-box:0")));

    AttachDialog d;
    d.resize(560, 260);
    d.show();
    EXPECT_EQ(d.server().address, QStringLiteral("gpu-box:7070"));
    EXPECT_EQ(d.server().tokenFile, QStringLiteral("/home/u/.opscope-token"));
    EXPECT_TRUE(d.typedToken().isEmpty());
    const QByteArray dir = qgetenv("OPSCOPE_TEST_SHOTS");
    if (!dir.isEmpty()) d.grab().save(QString::fromUtf8(dir) + QStringLiteral("/attach-dialog.png"));
    d.setServer({ QStringLiteral("nohost"), {}, {} });
    auto* ok = d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    EXPECT_FALSE(ok->isEnabled()) << "an address without a port cannot be attached to";
}

TEST(WindowAttach, TheWindowSurvivesTheServerKilledMidFetch)
{
    remote::test::Watchdog dog("WindowAttach killed mid-fetch", std::chrono::seconds(240));
    // A 160 MB input: its fetch is many chunks long.
    remote::test::ServerProcess server({ "sample:mlp", "--input", "data=20000000x2:uniform" });
    ASSERT_FALSE(server.address().empty()) << server.errors();
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer({ QString::fromStdString(server.address()), {}, {} })) << w->lastMessage().toStdString();
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    w->action(MainWindow::Action::StepInto)->trigger(); // a first step starts the run, paused at its entry
    // The input is above the whole-fetch limit: it stays there until Fetch Whole asks for it.
    ASSERT_TRUE(shown.wait(kWaitMs)) << w->lastMessage().toStdString();
    QString input;
    for (const InspectedTensor& t : w->inspector()->tensors())
        if (t.remote() && t.byteSize() == qint64 { 160'000'000 }) input = t.name;
    ASSERT_FALSE(input.isEmpty()) << "the 160 MB input is held on the server";
    ASSERT_TRUE(w->inspector()->showTensor(input));
    w->inspector()->findChild<QToolButton*>(QStringLiteral("fetchWholeTensor"))->click();
    // Killed as soon as the fetch reports progress (its status names the bytes so far).
    bool killed = false;
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
            if (!killed && w->isFetching() && w->fetchText().contains(QStringLiteral(" MB of "))) {
                server.killNow();
                killed = true;
            }
            return killed;
        },
        kWaitMs))
        << w->fetchText().toStdString() << " " << w->statusText().toStdString();
    ASSERT_TRUE(waitState(*w, State::Failed));
    EXPECT_TRUE(QTest::qWaitFor([&] { return !w->isFetching(); }, kWaitMs));
    EXPECT_TRUE(w->engineBanner()->isVisibleTo(w.get()));
    EXPECT_TRUE(w->graphPanel()->model()->graph()) << "the model stays drawn";
    EXPECT_FALSE(w->inspector()->currentTensor().has_value()) << "nothing half-fetched is shown";
    // The window goes on: detach, and this process's engine runs.
    w->detachFromServer();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    QSignalSpy finished(w->controller(), &SessionController::runFinished);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !finished.isEmpty(); }, kWaitMs));
}

TEST(WindowAttach, LargeTensorsOfAServersPauseStayThereAndAreReadAsShown)
{
    remote::test::Watchdog dog("WindowAttach", std::chrono::seconds(240));
    auto served = std::make_unique<remote::test::ServedSample>("lenet", debug::ServeOptions {}, true);
    served->session.addBreakpoint(debug::Breakpoint::onNode(kConv1, OpPhase::After));
    auto w = makeWindow();
    ASSERT_TRUE(openAndWait(*w, QStringLiteral("sample:mlp")));
    ASSERT_TRUE(w->attachToServer(entryOf(*served))) << w->lastMessage().toStdString();
    w->controller()->setWholeFetchLimit(2048); // conv1's input (14 KB) and output (6 KB) stay there; its bias (100 B) comes
    const QString where = QString::fromStdString(served->server->address());

    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(shown.wait(kWaitMs)) << w->lastMessage().toStdString();
    TensorInspector* inspector = w->inspector();
    ASSERT_TRUE(inspector->showTensor(QString::fromStdString(kConv1 + "_output")));
    const InspectedTensor* current = inspector->currentInspected();
    ASSERT_NE(current, nullptr);
    ASSERT_TRUE(current->remote()) << "held on the server";
    EXPECT_EQ(current->shape, Shape({ 1, 25, 8, 8 }));
    const std::optional<Tensor> there = served->session.tensor(kConv1 + "_output");
    ASSERT_TRUE(there.has_value());
    int small = 0;
    for (const InspectedTensor& t : inspector->tensors())
        small += t.values.defined() && t.values.bytes() <= 2048 ? 1 : 0;
    EXPECT_GE(small, 1) << "small tensors are fetched whole as before";

    // Statistics and histogram computed there, equal to the server's own tensor's.
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->hasResult(); }, kWaitMs));
    const debug::TensorStats s = debug::computeStats(there->view());
    EXPECT_EQ(inspector->stats().min, s.min);
    EXPECT_EQ(inspector->stats().max, s.max);
    EXPECT_EQ(inspector->stats().mean, s.mean);

    // The value table reads windows there: channel 7's row 3, column 5.
    inspector->setCurrentTab(TensorInspector::Tab::Values);
    TensorTableModel* model = inspector->valueTable()->model();
    ASSERT_TRUE(model->isRemote());
    model->setFixedIndex(1, 7);
    (void)model->index(3, 5).data();
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->isLoaded(3, 5); }, kWaitMs)) << model->fetchError().toStdString();
    EXPECT_EQ(static_cast<float>(model->valueAt(3, 5)), there->at((7 * 8 + 3) * 8 + 5));
    shot(*w, "attached-remote-values");

    // The Image tab reads the maps of the item it shows there, equal to the server's.
    inspector->setCurrentTab(TensorInspector::Tab::Image);
    FeatureMapView* maps = inspector->featureMapView();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !inspector->isReading() && maps->tensor().defined(); }, kWaitMs));
    ASSERT_EQ(maps->tensor().shape(), there->shape());
    EXPECT_EQ(std::memcmp(maps->tensor().raw(), there->raw(), there->bytes()), 0);
    EXPECT_EQ(maps->mapCount(), 25);
    shot(*w, "attached-remote-maps");

    // Fetch Whole brings it here, bit-exact; the maps can then be drawn.
    auto* fetch = inspector->findChild<QToolButton*>(QStringLiteral("fetchWholeTensor"));
    ASSERT_NE(fetch, nullptr);
    fetch->click();
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->currentTensor() && inspector->currentTensor()->defined(); }, kWaitMs))
        << w->statusBar()->currentMessage().toStdString();
    const Tensor t = *inspector->currentTensor();
    ASSERT_EQ(t.shape(), there->shape());
    EXPECT_EQ(std::memcmp(t.raw(), there->raw(), t.bytes()), 0);
    EXPECT_FALSE(inspector->valueTable()->model()->isRemote());

    // A node picked in the graph: its kept output above the limit stays there as well.
    const QString conv0 = QStringLiteral("hybridsequential0_conv0_fwd");
    w->graphPanel()->view()->selectNode(conv0, true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->currentTensorName() == conv0 + QStringLiteral("_output"); }, kWaitMs))
        << inspector->currentTensorName().toStdString();
    ASSERT_TRUE(inspector->currentInspected()->remote());
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->hasResult(); }, kWaitMs));
    const std::optional<Tensor> conv0Out = served->session.tensor(conv0.toStdString() + "_output");
    ASSERT_TRUE(conv0Out.has_value());
    EXPECT_EQ(inspector->stats().max, debug::computeStats(conv0Out->view()).max);
    // A weight above the limit (dense0's, 32 KB) is read there as well, by its name; a small one (its
    // bias) comes whole.
    const QString dense0 = QStringLiteral("hybridsequential0_dense0");
    w->graphPanel()->view()->selectNode(dense0 + QStringLiteral("_fwd"), true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->showTensor(dense0 + QStringLiteral("_weight")); }, kWaitMs));
    EXPECT_TRUE(inspector->currentInspected()->remote());
    EXPECT_EQ(inspector->currentInspected()->shapeOf(), served->session.parameter(dense0.toStdString() + "_weight")->shape());
    ASSERT_TRUE(inspector->showTensor(dense0 + QStringLiteral("_bias")));
    EXPECT_FALSE(inspector->currentInspected()->remote());
    // Back to the paused node: its tensors again, the large ones still read there.
    w->graphPanel()->view()->selectNode(QString::fromStdString(kConv1), true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return inspector->showTensor(QString::fromStdString(kConv1 + "_output")); }, kWaitMs));
    EXPECT_TRUE(inspector->currentInspected()->remote());

    // The server gone while a tensor held there is shown and read: the inspector lets it go (a read
    // failing meanwhile is dropped with its slice), the model stays drawn.
    QString input;
    for (const InspectedTensor& i : inspector->tensors())
        if (i.remote() && i.role == QStringLiteral("input")) input = i.name;
    ASSERT_FALSE(input.isEmpty());
    ASSERT_TRUE(inspector->showTensor(input));
    model = inspector->valueTable()->model();
    ASSERT_TRUE(model->isRemote());
    model->setFixedIndex(1, 1);
    (void)model->index(0, 0).data();
    served.reset();
    ASSERT_TRUE(waitState(*w, State::Failed));
    EXPECT_EQ(inspector->currentInspected(), nullptr);
    EXPECT_FALSE(inspector->valueTable()->model()->hasTensor());
    EXPECT_TRUE(w->graphPanel()->model()->graph());
    EXPECT_NE(w->engineBanner()->text().indexOf(where), -1);
}

TEST(WindowAttach, AServerWhoseProgramStartsTheRunsOffersNoRunButCommandsAtItsPauses)
{
    remote::test::Watchdog dog("WindowAttach program starts", std::chrono::seconds(240));
    debug::ServeOptions options;
    options.clientsStart = false; // as opscope-server --train: the training loop starts every step
    remote::test::ServedSample served("lenet", options, true);
    served.session.addBreakpoint(debug::Breakpoint::onNode(kConv1, OpPhase::After));
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    EXPECT_TRUE(w->controller()->hasControl());
    EXPECT_FALSE(w->controller()->engine().acceptsStart());
    EXPECT_FALSE(w->action(MainWindow::Action::Run)->isEnabled()) << "Start would be refused there";
    EXPECT_FALSE(w->action(MainWindow::Action::StepInto)->isEnabled());
    EXPECT_TRUE(w->action(MainWindow::Action::ToggleBreakpoint)->isEnabled()) << "breakpoints are the point";
    // The program's own run pauses: Continue is there.
    QSignalSpy shown(w.get(), &MainWindow::pauseShown);
    served.session.start(debug::StartMode::Run);
    ASSERT_TRUE(shown.wait(kWaitMs)) << w->lastMessage().toStdString();
    EXPECT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(waitState(*w, State::Finished)) << w->lastMessage().toStdString();
    EXPECT_FALSE(w->action(MainWindow::Action::Run)->isEnabled());
}

TEST(WindowAttach, TheRecordLevelReachesAServerAttachedDuringARunWhenThatRunEnds)
{
    remote::test::Watchdog dog("WindowAttach record level", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    debug::SessionOptions o = served.session.options();
    o.record = debug::RecordLevel::None;
    served.session.setOptions(o);
    served.session.addBreakpoint(debug::Breakpoint::onNode(kConv1, OpPhase::After));
    served.session.start(debug::StartMode::Run); // paused there before the window comes
    ASSERT_TRUE(QTest::qWaitFor([&] { return served.session.isPaused(); }, kWaitMs));
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    EXPECT_EQ(served.session.options().record, debug::RecordLevel::None) << "options cannot change during a run";
    ASSERT_TRUE(waitState(*w, State::Paused)) << stateName(w->controller()->state()).toStdString();
    ASSERT_TRUE(w->action(MainWindow::Action::Run)->isEnabled());
    w->action(MainWindow::Action::Run)->trigger(); // Continue
    ASSERT_TRUE(waitState(*w, State::Finished)) << w->lastMessage().toStdString();
    EXPECT_EQ(served.session.options().record, debug::RecordLevel::Tensors) << "the window's level, once the run ended";
}
