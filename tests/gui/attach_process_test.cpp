// `opscope --attach HOST:PORT` as scripts run it: the run on the server pauses at the command
// line's breakpoint, the window's picture is saved, and quitting leaves the server's run paused
// there; a refused token exits 5 with the reason.

#include "gui/app/app_options.h"
#include "gui/opscope_process.h"
#include "remote/remote_test_util.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QImage>
#include <QTemporaryDir>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

TEST(OpscopeAttach, RunsToABreakpointOnTheServerAndLeavesItPausedThere)
{
    remote::test::ServedSample served("lenet", {}, true);
    served.session.addBreakpoint(debug::Breakpoint::onNode("hybridsequential0_dense1_fwd", OpPhase::Before)); // another client's
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("attached.png"));
    const Result r = runOpscope({ QStringLiteral("--attach"), QString::fromStdString(served.server->address()),
        QStringLiteral("--break"), QStringLiteral("hybridsequential0_pool0_fwd:after"), QStringLiteral("--run"),
        QStringLiteral("--screenshot"), png, QStringLiteral("--quit") });
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull());
    const auto pause = served.session.currentPause();
    ASSERT_TRUE(pause) << "the window detached; the server's run stays paused";
    EXPECT_EQ(pause->node, "hybridsequential0_pool0_fwd");
    EXPECT_EQ(served.session.breakpoints().size(), 2u) << "the command line's breakpoint is added to the server's own";
}

TEST(OpscopeAttach, AWrongTokenOrNoServerExitsFiveWithTheReason)
{
    debug::ServeOptions o;
    o.token = "right-token";
    remote::test::ServedSample served("mlp", o, true);
    QTemporaryDir dir;
    const QString tokenFile = dir.filePath(QStringLiteral("t.token"));
    {
        QFile f(tokenFile);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("wrong-token\n");
    }
    Result r = runOpscope({ QStringLiteral("--attach"), QString::fromStdString(served.server->address()),
        QStringLiteral("--token-file"), tokenFile, QStringLiteral("--quit") });
    EXPECT_EQ(r.status, kExitRefused) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("token"))) << r.err.toStdString();
    r = runOpscope({ QStringLiteral("--attach"), QString::fromStdString(served.server->address()), QStringLiteral("--quit") });
    EXPECT_EQ(r.status, kExitRefused) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("token"))) << r.err.toStdString();
}
