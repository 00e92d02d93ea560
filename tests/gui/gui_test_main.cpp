// The window's tests run real widgets on the offscreen platform, with settings kept apart from the
// user's (QStandardPaths test mode), and wait on signals, never on sleeps.

#include "gui/app/application.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    qputenv(
        "QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    opscope::gui::setUpApplication(app);
    QSettings().clear();
    return RUN_ALL_TESTS();
}
