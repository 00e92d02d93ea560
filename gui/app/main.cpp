// opscope: the window. `opscope --help` lists the command line.

#include "gui/app/app_options.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"

#include <cstdio>

#include <QApplication>

int main(int argc, char* argv[])
{
    QApplication app(argc, argv);
    opscope::gui::setUpApplication(app);

    QStringList args = QApplication::arguments();
    args.removeFirst();
    if (args.contains(QStringLiteral("-h")) || args.contains(QStringLiteral("--help"))) {
        std::fputs(qPrintable(opscope::gui::appUsage()), stdout);
        return opscope::gui::kExitOk;
    }
    opscope::gui::AppOptions options;
    QString error;
    if (!opscope::gui::parseAppOptions(args, &options, &error)) {
        std::fprintf(stderr, "opscope: %s\n(see opscope --help)\n", qPrintable(error));
        return opscope::gui::kExitUsage;
    }
    opscope::gui::MainWindow window(options);
    window.setInteractive(options.screenshot.isEmpty() && !options.quit);
    window.show();
    window.startUp();
    const int status = QApplication::exec();
    return status != 0 ? status : window.exitStatus();
}
