// The window's controller attached to an engine on a server: the server's model becomes the current
// one, its runs pause and end in the window as a local run's do, detaching returns to this process's
// model, and a server that dies leaves the controller in Failed with the reason, never an exception.

#include "debug/session.h"
#include "gui/session/session_controller.h"
#include "models/registry.h"
#include "remote/remote_test_util.h"

#include <atomic>
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>

using namespace opscope;
using namespace opscope::gui;

namespace {

// The lenet sample served from a session of this process, described before its first run.
struct Served : remote::test::ServedSample {
    Served()
        : ServedSample("lenet", {}, true)
    {
    }
};

bool waitFor(SessionController& c, SessionController::State s, int ms = 20000)
{
    QElapsedTimer t;
    t.start();
    while (c.state() != s && t.elapsed() < ms)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return c.state() == s;
}

} // namespace

TEST(ControllerAttach, AServersRunsPauseAndEndInTheControllerAndDetachReturnsHome)
{
    Served served;
    SessionController c;
    ASSERT_TRUE(c.loadModelNow(QStringLiteral("sample:mlp")).isEmpty());
    EXPECT_EQ(c.engineLocation(), QStringLiteral("this process"));
    QSignalSpy attached(&c, &SessionController::attached);

    ASSERT_TRUE(c.attach(served.connect("window"))) << c.lastError().toStdString();
    EXPECT_TRUE(c.isAttached());
    EXPECT_EQ(attached.count(), 1);
    EXPECT_EQ(c.engineLocation().toStdString(), served.server->address());
    ASSERT_TRUE(c.model());
    EXPECT_TRUE(c.model()->isRemote());
    EXPECT_FALSE(c.model()->block) << "the weights stay on the server";
    EXPECT_EQ(c.model()->title, QStringLiteral("sample:lenet"));
    EXPECT_EQ(c.model()->opCount, 10);

    // A breakpoint through the controller's engine is the server's.
    c.engine().addBreakpoint(debug::Breakpoint::onNode("hybridsequential0_conv1_fwd", OpPhase::After));
    EXPECT_EQ(served.session.breakpoints().size(), 1u);
    ASSERT_TRUE(c.start({}, false)) << c.lastError().toStdString();
    ASSERT_TRUE(waitFor(c, SessionController::State::Paused));
    ASSERT_TRUE(c.pauseEvent());
    EXPECT_EQ(c.pauseEvent()->node, "hybridsequential0_conv1_fwd");
    const std::optional<Tensor> out = c.engine().fetch("hybridsequential0_conv1_fwd_output");
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->shape(), Shape({ 1, 25, 8, 8 }));

    // A second window watching the same server sees the pause it attaches into.
    {
        SessionController watcher;
        remote::ConnectOptions o = served.connect("second");
        o.watchOnly = true;
        ASSERT_TRUE(watcher.attach(o)) << watcher.lastError().toStdString();
        ASSERT_TRUE(waitFor(watcher, SessionController::State::Paused));
        EXPECT_EQ(watcher.pauseEvent()->node, "hybridsequential0_conv1_fwd");
        EXPECT_FALSE(watcher.continueRun()) << "it does not hold control";
        EXPECT_NE(watcher.lastError().indexOf(QStringLiteral("window")), -1) << watcher.lastError().toStdString();
    }

    ASSERT_TRUE(c.continueRun());
    ASSERT_TRUE(waitFor(c, SessionController::State::Finished));
    ASSERT_EQ(c.lastOutcome().outputs.size(), 1u);
    EXPECT_EQ(c.lastOutcome().outputs[0].shape(), Shape({ 1, 10 }));

    // Detach: this process's model again; the server keeps its breakpoint.
    QSignalSpy detached(&c, &SessionController::detached);
    c.detach();
    EXPECT_EQ(detached.count(), 1);
    EXPECT_FALSE(c.isAttached());
    EXPECT_EQ(c.model()->spec, QStringLiteral("sample:mlp"));
    EXPECT_EQ(c.engineLocation(), QStringLiteral("this process"));
    EXPECT_EQ(served.session.breakpoints().size(), 1u);
    ASSERT_TRUE(c.start(c.model()->defaultInputs, false));
    ASSERT_TRUE(waitFor(c, SessionController::State::Finished));

    // Attached again, the server dies: Failed with the reason; commands refuse, nothing throws.
    ASSERT_TRUE(c.attach(served.connect("window")));
    QSignalSpy lost(&c, &SessionController::engineLost);
    served.server.reset();
    ASSERT_TRUE(waitFor(c, SessionController::State::Failed));
    EXPECT_EQ(lost.count(), 1);
    EXPECT_FALSE(c.start({}, false));
    EXPECT_FALSE(c.continueRun());
    EXPECT_FALSE(c.lastError().isEmpty());
    c.detach();
    EXPECT_EQ(c.model()->spec, QStringLiteral("sample:mlp"));
}

TEST(ControllerAttach, NothingListeningIsRefusedWithTheReason)
{
    SessionController c;
    remote::ConnectOptions o;
    o.address = "127.0.0.1:1";
    o.connectTimeout = std::chrono::milliseconds(2000);
    EXPECT_FALSE(c.attach(o));
    EXPECT_NE(c.lastError().indexOf(QStringLiteral("cannot connect")), -1) << c.lastError().toStdString();
    EXPECT_FALSE(c.isAttached());
}

TEST(ControllerAttach, AFetchGivenUpByItsProgressEndsAtOnceAndFetchesNothingMore)
{
    Served served;
    served.session.addBreakpoint(debug::Breakpoint::onNode("hybridsequential0_conv1_fwd", OpPhase::After));
    SessionController c;
    ASSERT_TRUE(c.attach(served.connect("window"))) << c.lastError().toStdString();
    ASSERT_TRUE(c.start({}, false)) << c.lastError().toStdString();
    ASSERT_TRUE(waitFor(c, SessionController::State::Paused));
    const std::string out = "hybridsequential0_conv1_fwd_output";
    std::atomic<int> calls { 0 }, laterCalls { 0 };
    QFuture<SessionController::Fetched> f = c.fetchTensors({ out, out }, [&](size_t index, size_t, size_t) {
        if (index > 0) ++laterCalls;
        ++calls;
        throw SessionController::FetchCancelled();
    });
    f.waitForFinished();
    const SessionController::Fetched got = f.result();
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(laterCalls, 0) << "the second tensor is not asked for";
    ASSERT_EQ(got.tensors.size(), 2u);
    EXPECT_FALSE(got.tensors[0].has_value());
    EXPECT_FALSE(got.tensors[1].has_value());
    EXPECT_EQ(got.error, QStringLiteral("the fetch was given up"));
    // The server is none the worse: the same tensor comes whole after.
    QFuture<SessionController::Fetched> again = c.fetchTensors({ out });
    again.waitForFinished();
    ASSERT_TRUE(again.result().tensors.at(0).has_value()) << again.result().error.toStdString();
    EXPECT_EQ(again.result().tensors[0]->shape(), Shape({ 1, 25, 8, 8 }));
    c.stop();
}
