// What the window keeps between starts (QSettings, in the tests' own test-mode location): the last
// model, each model's breakpoints and inputs, recent files.

#include "common/test_paths.h"
#include "gui/gui_test_util.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/tensor/tensor_inspector.h"

#include <QAction>
#include <QSettings>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;

TEST(WindowSettings, TheLastModelAndItsBreakpointsComeBack)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    QSettings().clear();
    const QString file = QString::fromStdString(::opscope::test::shared("models/mnist-symbol.json"));
    {
        MainWindow w;
        w.setInteractive(false);
        w.show();
        ASSERT_TRUE(openAndWait(w, file));
        ASSERT_TRUE(openAndWait(w, QStringLiteral("sample:mlp")));
        w.breakpointModel()->add(debug::Breakpoint::onNode(
            "hybridsequential0_dense1_fwd", OpPhase::After, debug::Condition::of(debug::Condition::Kind::MaxAbove, 2)));
        w.breakpointModel()->setBreakOnNanInf(true);
        w.close();
    }
    {
        MainWindow w;
        w.setInteractive(false);
        w.show();
        QSignalSpy ready(&w, &MainWindow::modelReady);
        w.startUp(); // no model given: the last one
        ASSERT_TRUE(ready.wait(kWaitMs));
        EXPECT_EQ(w.controller()->model()->spec, QStringLiteral("sample:mlp"));
        ASSERT_EQ(w.breakpointModel()->rowCount(), 2);
        const debug::Breakpoint b = w.breakpointModel()->breakpoints()[0];
        EXPECT_EQ(b.location, "hybridsequential0_dense1_fwd");
        EXPECT_EQ(b.phase, OpPhase::After);
        EXPECT_EQ(b.condition, debug::Condition::of(debug::Condition::Kind::MaxAbove, 2));
        EXPECT_TRUE(w.breakpointModel()->breakOnNanInf());
        EXPECT_TRUE(w.action(MainWindow::Action::BreakOnNan)->isChecked());
        // Each model keeps its own: the file model had none.
        ASSERT_TRUE(openAndWait(w, file));
        EXPECT_EQ(w.breakpointModel()->rowCount(), 0);
        const QStringList recent = QSettings().value(QStringLiteral("files/recent")).toStringList();
        ASSERT_FALSE(recent.isEmpty());
        EXPECT_TRUE(recent.first().endsWith(QStringLiteral("mnist-symbol.json")));
    }
    QSettings().clear();
}

TEST(WindowSettings, TheDefaultStartOpensLenetWithABreakpoint)
{
    QSettings().clear();
    MainWindow w;
    w.setInteractive(false);
    w.show();
    QSignalSpy ready(&w, &MainWindow::modelReady);
    w.startUp();
    ASSERT_TRUE(ready.wait(kWaitMs));
    EXPECT_EQ(w.controller()->model()->spec, QString::fromLatin1(kDefaultSample));
    ASSERT_EQ(w.breakpointModel()->rowCount(), 1);
    // The first F5 pauses there and the inspector shows a histogram.
    QSignalSpy shown(&w, &MainWindow::pauseShown);
    w.action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(shown.wait(kWaitMs));
    EXPECT_EQ(w.controller()->pauseEvent()->node + ":after", std::string(kDefaultBreakpoint));
    EXPECT_TRUE(w.inspector()->hasResult());
    EXPECT_GT(w.inspector()->histogram().bins.size(), 0u);
    w.close();
    QSettings().clear();
}
