// The command line of `opscope`: parsed options, and the executable itself run offscreen with
// --run --screenshot --quit (its exit statuses are an interface scripts rely on).

#include "common/test_paths.h"
#include "gui/app/app_options.h"
#include "gui/opscope_process.h"

#include <gtest/gtest.h>

#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

TEST(AppOptions, ParsesEveryOption)
{
    AppOptions o;
    QString error;
    ASSERT_TRUE(parseAppOptions({ QStringLiteral("sample:mlp"), QStringLiteral("--break"), QStringLiteral("a:after"),
                                    QStringLiteral("--break=b"), QStringLiteral("--break-on"), QStringLiteral("naninf"),
                                    QStringLiteral("--break-on=max>1e3"), QStringLiteral("--run"),
                                    QStringLiteral("--screenshot"), QStringLiteral("x.png"), QStringLiteral("--quit") },
        &o, &error))
        << error.toStdString();
    EXPECT_EQ(o.model, QStringLiteral("sample:mlp"));
    ASSERT_EQ(o.breakpoints.size(), 4u);
    EXPECT_EQ(o.breakpoints[0].location, "a");
    EXPECT_EQ(o.breakpoints[0].phase, OpPhase::After);
    EXPECT_EQ(o.breakpoints[1].location, "b");
    EXPECT_EQ(o.breakpoints[1].phase, OpPhase::Before);
    EXPECT_EQ(o.breakpoints[2].kind, debug::Breakpoint::Kind::Watch);
    EXPECT_EQ(o.breakpoints[2].condition.kind, debug::Condition::Kind::NanOrInf);
    EXPECT_EQ(o.breakpoints[3].condition.kind, debug::Condition::Kind::MaxAbove);
    EXPECT_TRUE(o.run);
    EXPECT_TRUE(o.quit);
    EXPECT_EQ(o.screenshot, QStringLiteral("x.png"));
    ASSERT_TRUE(
        parseAppOptions({ QStringLiteral("--input"), QStringLiteral("data=zeros"),
                            QStringLiteral("--input=x=draw:a.png"), QStringLiteral("--tab"), QStringLiteral("image") },
            &o, &error));
    EXPECT_EQ(o.inputs, (QStringList { QStringLiteral("data=zeros"), QStringLiteral("x=draw:a.png") }));
    EXPECT_EQ(o.tab, QStringLiteral("image"));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--input"), QStringLiteral("data") }, &o, &error));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--tab"), QStringLiteral("colours") }, &o, &error));
    AppOptions e;
    ASSERT_TRUE(parseAppOptions({ QStringLiteral("--explain"), QStringLiteral("gradcam"), QStringLiteral("--present"),
                                    QStringLiteral("3") },
        &e, &error))
        << error.toStdString();
    EXPECT_EQ(e.explain, QStringLiteral("gradcam"));
    EXPECT_EQ(e.present, 3);
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--explain"), QStringLiteral("lime") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("lime"))) << error.toStdString();
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--present"), QStringLiteral("0") }, &o, &error));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--present"), QStringLiteral("two") }, &o, &error));
}

TEST(AppOptions, RejectsBadArgumentsWithAReason)
{
    AppOptions o;
    QString error;
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--break") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("--break")));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--break"), QStringLiteral("x:sideways") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("x:sideways")));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--break-on"), QStringLiteral("purple") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("purple")));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--frobnicate") }, &o, &error));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("a"), QStringLiteral("b") }, &o, &error));
}


TEST(OpscopeExecutable, ScreenshotAfterTheFirstPauseThenQuit)
{
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("paused.png"));
    const Result r = runOpscope({ QStringLiteral("sample:lenet"), QStringLiteral("--break"),
        QStringLiteral("hybridsequential0_pool0_fwd:after"), QStringLiteral("--run"), QStringLiteral("--screenshot"),
        png, QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    const QImage shot(png);
    ASSERT_FALSE(shot.isNull());
    // The whole window, which fills the screen (the offscreen platform's is 800×600).
    EXPECT_GE(shot.width(), 800);
    EXPECT_GE(shot.height(), 600);
}

TEST(OpscopeExecutable, ExitStatusesForBadModelsAndArguments)
{
    QTemporaryDir dir;
    Result r = runOpscope(
        { dir.filePath(QStringLiteral("missing-symbol.json")), QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitLoadFailed) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("missing-symbol.json"))) << r.err.toStdString();
    r = runOpscope({ QStringLiteral("--break-on"), QStringLiteral("purple") });
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("purple")));
    r = runOpscope({ QStringLiteral("sample:mlp"), QStringLiteral("--break"), QStringLiteral("no_such_node"),
        QStringLiteral("--run"), QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("no_such_node"))) << r.err.toStdString();
    r = runOpscope({ QStringLiteral("sample:mlp"), QStringLiteral("--input"), QStringLiteral("nosuch=ones"),
        QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("nosuch"))) << r.err.toStdString();
    r = runOpscope({ QStringLiteral("--help") });
    EXPECT_EQ(r.status, kExitOk);
}

TEST(OpscopeExecutable, TrainStepStopsInTheBackwardPass)
{
    AppOptions o;
    QString error;
    ASSERT_TRUE(parseAppOptions({ QStringLiteral("sample:mlp"), QStringLiteral("--train-step") }, &o, &error));
    EXPECT_TRUE(o.trainStep);
    EXPECT_FALSE(o.run);

    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("train-step.png"));
    Result r = runOpscope({ QStringLiteral("sample:mlp"), QStringLiteral("--train-step"), QStringLiteral("--break"),
        QStringLiteral("hybridsequential0_dense1_fwd_backward:after"), QStringLiteral("--screenshot"), png,
        QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull());
    // A backward node of an op the model lacks, and a sample without training data, are usage errors.
    r = runOpscope({ QStringLiteral("sample:mlp"), QStringLiteral("--train-step"), QStringLiteral("--break"),
        QStringLiteral("nosuch_backward"), QStringLiteral("--quit"), QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("nosuch_backward"))) << r.err.toStdString();
    r = runOpscope({ QStringLiteral("sample:nan-demo"), QStringLiteral("--train-step"), QStringLiteral("--quit"),
        QStringLiteral("--fresh") });
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("training data"))) << r.err.toStdString();
}

TEST(AppOptions, AttachTakesAServerAddressAndItsTokenAndNoModel)
{
    AppOptions o;
    QString error;
    ASSERT_TRUE(parseAppOptions({ QStringLiteral("--attach"), QStringLiteral("10.0.0.2:50051"),
                                    QStringLiteral("--token-file=t.token"), QStringLiteral("--watch"),
                                    QStringLiteral("--break"), QStringLiteral("a:after"), QStringLiteral("--run") },
        &o, &error))
        << error.toStdString();
    EXPECT_EQ(o.attach, QStringLiteral("10.0.0.2:50051"));
    EXPECT_EQ(o.tokenFile, QStringLiteral("t.token"));
    EXPECT_TRUE(o.watch);
    EXPECT_EQ(o.breakpoints.size(), 1u);
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--attach"), QStringLiteral("somehost") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("HOST:PORT"))) << error.toStdString();
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--attach"), QStringLiteral("h:70000") }, &o, &error));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("sample:mlp"), QStringLiteral("--attach"), QStringLiteral("h:1") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("a model"))) << error.toStdString();
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--attach=h:1"), QStringLiteral("--train-step") }, &o, &error));
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--token-file"), QStringLiteral("t") }, &o, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("--attach"))) << error.toStdString();
    // --fetch-limit: megabytes of a tensor fetched whole; the rest read as shown.
    AppOptions f;
    ASSERT_TRUE(parseAppOptions({ QStringLiteral("--attach=h:1"), QStringLiteral("--fetch-limit"), QStringLiteral("0.5") }, &f, &error))
        << error.toStdString();
    EXPECT_EQ(f.fetchLimitBytes, 512 * 1024);
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--attach=h:1"), QStringLiteral("--fetch-limit=-1") }, &f, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("megabytes"))) << error.toStdString();
    EXPECT_FALSE(parseAppOptions({ QStringLiteral("--fetch-limit=4") }, &f, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("--attach"))) << error.toStdString();
}
