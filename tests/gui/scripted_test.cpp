// The window driven from its command line, as scripts use it: every input problem ends the scripted
// start with the documented status after saying what is wrong, never a hang; --input takes what
// opscope-cli takes; --help and --version need no display.

#include "common/test_paths.h"
#include "gui/app/app_options.h"
#include "gui/opscope_process.h"
#include "io/npy.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QImage>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

namespace {

QStringList scripted(QStringList args)
{
    args << QStringLiteral("--quit") << QStringLiteral("--fresh");
    return args;
}

QString writeNpyFile(const QTemporaryDir& dir, const QString& name, const Shape& shape)
{
    const QString path = dir.filePath(name);
    writeNpy(path.toStdString(), Tensor::ones(shape).view());
    return path;
}

} // namespace

TEST(ScriptedWindow, BadInputFilesEndTheRunWithStatus3)
{
    QTemporaryDir dir;
    const QString garbage = dir.filePath(QStringLiteral("garbage.npy"));
    {
        QFile f(garbage);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("garbage\n");
    }
    for (const QString& file : { garbage, dir.filePath(QStringLiteral("missing.npy")) }) {
        const Result r = runOpscope(scripted({ QStringLiteral("sample:lenet"), QStringLiteral("--input"),
            QStringLiteral("data=") + file, QStringLiteral("--run") }));
        EXPECT_EQ(r.status, kExitLoadFailed) << file.toStdString() << r.err.toStdString();
        EXPECT_TRUE(r.err.contains(QFileInfo(file).fileName())) << r.err.toStdString();
    }
    // Without --run too: the inputs the command line names are made, and a bad one is said.
    const QString png = dir.filePath(QStringLiteral("shot.png"));
    const Result r = runOpscope(scripted({ QStringLiteral("sample:lenet"), QStringLiteral("--input"),
        QStringLiteral("data=") + garbage, QStringLiteral("--screenshot"), png }));
    EXPECT_EQ(r.status, kExitLoadFailed) << r.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull()) << "the window with the message is still saved";
}

TEST(ScriptedWindow, AnInputShapeTheModelCannotTakeIsStatus4)
{
    QTemporaryDir dir;
    const QString wrong = writeNpyFile(dir, QStringLiteral("wrong.npy"), Shape({ 2, 3 }));
    Result r = runOpscope(scripted({ QStringLiteral("sample:lenet"), QStringLiteral("--input"),
        QStringLiteral("data=") + wrong, QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitRunFailed) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("(2, 3)"))) << r.err.toStdString();
    // A sample's weights fix its channels, in the window as in opscope-cli.
    r = runOpscope(scripted({ QStringLiteral("sample:mini-resnet"), QStringLiteral("--input"),
        QStringLiteral("data=1x5x32x32"), QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitRunFailed) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("(16, 3, 3, 3)"))) << r.err.toStdString();
}

TEST(ScriptedWindow, InputTakesAShapeAndAFill)
{
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("shot.png"));
    const Result r = runOpscope(scripted({ QStringLiteral("sample:mini-resnet"), QStringLiteral("--input"),
        QStringLiteral("data=2x3x40x40:uniform"), QStringLiteral("--run"), QStringLiteral("--screenshot"), png }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull());
    // A fill that is not one is refused with a reason.
    const Result bad = runOpscope(scripted({ QStringLiteral("sample:mini-resnet"), QStringLiteral("--input"),
        QStringLiteral("data=2x3x40x40:purple"), QStringLiteral("--run") }));
    EXPECT_NE(bad.status, kExitOk);
    EXPECT_NE(bad.status, -1) << "hung";
}

TEST(ScriptedWindow, AnMxnetFileRunsFromTheCommandLine)
{
    OPSCOPE_NEEDS_SHARED("models/lenet-symbol.json", "models/lenet-0001.params");
    const QString model = QString::fromStdString(opscope::test::shared("models/lenet-symbol.json"));
    // No shape recorded and none given: status 2, and the message suggests one from the first layer.
    Result r = runOpscope(scripted({ model, QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitUsage) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("(N, 1, H, W)"))) << r.err.toStdString();
    // A .npy file gives the input its shape; so does NAME=SHAPE.
    QTemporaryDir dir;
    const QString digit = writeNpyFile(dir, QStringLiteral("digit.npy"), Shape({ 1, 1, 28, 28 }));
    r = runOpscope(
        scripted({ model, QStringLiteral("--input"), QStringLiteral("data=") + digit, QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    r = runOpscope(
        scripted({ model, QStringLiteral("--input"), QStringLiteral("data=1x1x28x28"), QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    const QString rgb = writeNpyFile(dir, QStringLiteral("rgb.npy"), Shape({ 1, 3, 28, 28 }));
    r = runOpscope(
        scripted({ model, QStringLiteral("--input"), QStringLiteral("data=") + rgb, QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitRunFailed) << r.err.toStdString();
}

TEST(ScriptedWindow, ALossLabelIsNotAskedFor)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-symbol.json", "models/legacy-mlp-0001.params");
    const QString model = QString::fromStdString(opscope::test::shared("models/legacy-mlp-symbol.json"));
    const Result r = runOpscope(
        scripted({ model, QStringLiteral("--input"), QStringLiteral("data=2x784"), QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("softmax_label"))) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("zeros of shape (1568,)"))) << r.err.toStdString();
}

TEST(ScriptedWindow, HelpAndVersionNeedNoDisplay)
{
    for (const QString& flag : { QStringLiteral("--help"), QStringLiteral("--version") }) {
        // The xcb platform without an X server would abort; these must not reach it.
        const Result r = runOpscope({ flag },
            { QStringLiteral("QT_QPA_PLATFORM=xcb"), QStringLiteral("DISPLAY="), QStringLiteral("WAYLAND_DISPLAY=") });
        EXPECT_EQ(r.status, kExitOk) << flag.toStdString() << r.err.toStdString();
        EXPECT_TRUE(r.out.contains(QStringLiteral("opscope"))) << r.out.toStdString();
    }
}

TEST(ScriptedWindow, GradientConditionsNeedATrainingStep)
{
    const Result r = runOpscope(scripted({ QStringLiteral("sample:mlp"), QStringLiteral("--break-on"),
        QStringLiteral("grad naninf"), QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitUsage);
    EXPECT_TRUE(r.err.contains(QStringLiteral("--train-step"))) << r.err.toStdString();
}

// ONNX models in the window: a built-in ONNX sample with a bool input pauses at a node and shows its
// values; a .onnx file opens from the command line, its symbolic dimension given by --input; a bad
// .onnx is status 3 with the file named.
TEST(ScriptedWindow, OnnxModelsOpenRunAndShowTheirValues)
{
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("shot.png"));
    Result r = runOpscope(scripted({ QStringLiteral("sample:onnx-transformer"), QStringLiteral("--break"),
        QStringLiteral("/encoder/layers.0/self_attn/Where_1:after"), QStringLiteral("--run"), QStringLiteral("--tab"),
        QStringLiteral("values"), QStringLiteral("--screenshot"), png }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull());
    // The padding mask (bool) in the value table and the image tab.
    r = runOpscope(scripted({ QStringLiteral("sample:onnx-transformer"), QStringLiteral("--break"),
        QStringLiteral("/encoder/layers.0/self_attn/Cast:before"), QStringLiteral("--run"), QStringLiteral("--tab"),
        QStringLiteral("image"), QStringLiteral("--screenshot"), png }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();

    const QString model = QString::fromStdString(opscope::test::fixture("onnx/shape_only.onnx"));
    r = runOpscope(scripted({ model, QStringLiteral("--input"), QStringLiteral("x=2x3x4"), QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitOk) << r.err.toStdString();
    const QString bad = QString::fromStdString(opscope::test::fixture("onnx/truncated.onnx"));
    r = runOpscope(scripted({ bad, QStringLiteral("--run") }));
    EXPECT_EQ(r.status, kExitLoadFailed) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("truncated.onnx"))) << r.err.toStdString();
}
