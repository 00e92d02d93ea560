#pragma once

// Helpers of the window's tests: a fresh window on the offscreen platform, and waits on signals.

#include "gui/app/main_window.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"

#include <gtest/gtest.h>
#include <memory>

#include <QSignalSpy>
#include <QTest>

namespace opscope::gui::test {

constexpr int kWaitMs = 30000;

/// A window with nothing restored from settings, messages to the status bar instead of dialogs.
inline std::unique_ptr<MainWindow> makeWindow(AppOptions o = {})
{
    o.fresh = true;
    auto w = std::make_unique<MainWindow>(o);
    w->setInteractive(false);
    w->resize(1400, 900);
    w->show();
    return w;
}

/// Opens `spec` and waits until it is shown and its graph is laid out.
inline bool openAndWait(MainWindow& w, const QString& spec)
{
    QSignalSpy ready(&w, &MainWindow::modelReady);
    QSignalSpy failed(w.controller(), &SessionController::modelLoadFailed);
    w.openModel(spec);
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, kWaitMs)) return false;
    if (ready.isEmpty()) return false;
    return QTest::qWaitFor([&] { return !w.graphPanel()->view()->isLayoutPending(); }, kWaitMs);
}

/// Waits until the controller's state is `s`.
inline bool waitState(MainWindow& w, SessionController::State s)
{
    return QTest::qWaitFor([&] { return w.controller()->state() == s; }, kWaitMs);
}

} // namespace opscope::gui::test
