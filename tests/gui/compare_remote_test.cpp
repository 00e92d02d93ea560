// Comparing on a server from the window: Debug ▸ Compare… while attached asks the server, which
// records both runs there; the graph is coloured from its answer, the Compare dock fetches the
// selected node's tensors of A and B, a watcher is refused, and the comparison (run B as the
// reference of `diff>T`) stays on the server after a detach until the window ends it.

#include "compare/compare_job.h"
#include "gui/compare/compare_bar.h"
#include "gui/compare/compare_dialog.h"
#include "gui/compare/compare_view.h"
#include "gui/graph/graph_model.h"
#include "gui/gui_test_util.h"
#include "remote/remote_test_util.h"

#include <numeric>

#include <QStatusBar>
#include <QToolButton>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {
const QString kConv0 = QStringLiteral("hybridsequential0_conv0_fwd");

debug::ServeOptions comparing()
{
    debug::ServeOptions o;
    o.comparer = debug::comparerFor("sample:lenet", "", 0, samples::makeSample("lenet").defaultInputs);
    return o;
}

ServerEntry entryOf(const remote::test::ServedSample& served)
{
    return { QString::fromStdString(served.server->address()), {}, {} };
}

bool compareAndWait(MainWindow& w, const CompareSpec& spec)
{
    QSignalSpy done(w.compareRunner(), &CompareRunner::finished);
    QSignalSpy failed(w.compareRunner(), &CompareRunner::failed);
    if (!w.startCompare(spec)) return false;
    return QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, kWaitMs) && !done.isEmpty();
}
}

TEST(CompareRemote, TheServerComparesAndTheDockFetchesTheSelectedNodesTensors)
{
    remote::test::Watchdog dog("CompareRemote", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", comparing(), true);
    auto w = makeWindow();
    // Attached while the window still loads its own default model: the attach supersedes the load.
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    EXPECT_FALSE(w->controller()->isLoading());

    CompareSpec spec;
    spec.precisionB = { { "all", Precision::Float16 } };
    ASSERT_TRUE(compareAndWait(*w, spec)) << w->lastMessage().toStdString();
    const auto result = w->comparison();
    ASSERT_TRUE(result);
    EXPECT_FALSE(result->valuesHere) << "the runs' values stay on the server";
    ASSERT_TRUE(result->comparison.firstDivergentNode);
    EXPECT_EQ(QString::fromStdString(*result->comparison.firstDivergentNode), kConv0);
    GraphModel* model = w->graphPanel()->model();
    ASSERT_TRUE(model->hasDivergence());
    EXPECT_TRUE(model->marks(kConv0).firstDivergent);
    EXPECT_TRUE(w->compareBar()->text().contains(QStringLiteral("float16 on all nodes"))) << w->compareBar()->text().toStdString();
    // The server's session has run B as its reference.
    EXPECT_TRUE(served.session.options().reference);

    // The dock shows conv0's output of both runs once fetched: every element in each histogram.
    CompareView* view = w->compareView();
    const QString conv0Out = kConv0 + QStringLiteral("_output");
    ASSERT_TRUE(QTest::qWaitFor([&] { return view->currentTensor() == conv0Out && !view->countsA().empty(); }, kWaitMs))
        << view->currentTensor().toStdString();
    const debug::TensorDiff* d = result->comparison.find(conv0Out.toStdString());
    ASSERT_TRUE(d);
    const double total = std::accumulate(view->countsA().begin(), view->countsA().end(), 0.0);
    EXPECT_EQ(total, static_cast<double>(d->shapeA.size()));
    EXPECT_EQ(std::accumulate(view->countsB().begin(), view->countsB().end(), 0.0), total);
    EXPECT_TRUE(view->metricsText().contains(QStringLiteral("rel L2")));
    // Another node: its tensors are fetched in turn.
    const QString dense = QStringLiteral("hybridsequential0_dense0_fwd");
    w->graphPanel()->view()->selectNode(dense, true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return view->currentTensor() == dense + QStringLiteral("_output"); }, kWaitMs))
        << view->currentTensor().toStdString();
    if (const char* shots = std::getenv("OPSCOPE_TEST_SHOTS")) w->saveScreenshot(QString::fromLocal8Bit(shots) + "/compare-remote.png");

    // Detached, the server keeps the comparison; attached again, the window does not end it.
    w->detachFromServer();
    EXPECT_TRUE(served.session.options().reference);
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    EXPECT_FALSE(w->comparison());
    EXPECT_TRUE(served.session.options().reference);
    // Compared again and ended from the window: gone there too.
    ASSERT_TRUE(compareAndWait(*w, spec));
    w->clearCompare();
    EXPECT_FALSE(served.session.options().reference) << w->controller()->lastError().toStdString();
}

TEST(CompareRemote, AWatcherIsRefusedAndTheDialogSpeaksOfTheServersFiles)
{
    remote::test::Watchdog dog("CompareRemote watcher", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", comparing(), true);
    auto a = makeWindow();
    auto b = makeWindow();
    ASSERT_TRUE(a->attachToServer(entryOf(served))) << a->lastMessage().toStdString();
    ASSERT_TRUE(b->attachToServer(entryOf(served), {}, true)) << b->lastMessage().toStdString();
    CompareSpec spec;
    spec.precisionB = { { "all", Precision::Float16 } };
    EXPECT_FALSE(b->startCompare(spec));
    EXPECT_NE(b->lastMessage().indexOf(QStringLiteral("holds control")), -1) << b->lastMessage().toStdString();
    EXPECT_FALSE(served.session.options().reference);

    // A path that exists only on the server is not looked for here; one missing there is named.
    CompareSpec saved;
    saved.source = CompareSpec::Source::Saved;
    saved.savedB = QStringLiteral("/only/on/the/server/run.npz");
    CompareDialog onServer(saved, {});
    onServer.setServer(QStringLiteral("example:1"));
    EXPECT_TRUE(onServer.problem().isEmpty()) << onServer.problem().toStdString();
    for (const QToolButton* browse : onServer.findChildren<QToolButton*>())
        EXPECT_TRUE(browse->isHidden()) << "no browsing of this machine's files for the server's";
    QSignalSpy failed(a->compareRunner(), &CompareRunner::failed);
    ASSERT_TRUE(a->startCompare(saved));
    ASSERT_TRUE(failed.wait(kWaitMs));
    EXPECT_NE(failed.front().front().toString().indexOf(QStringLiteral("/only/on/the/server/run.npz")), -1)
        << failed.front().front().toString().toStdString();
}
