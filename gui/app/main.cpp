// opscope: the window. `opscope --help` lists the command line.

#include "gui/app/app_options.h"
#include "gui/app/application.h"
#include "gui/app/main_window.h"

#include <cstdio>

#include <QApplication>

int main(int argc, char* argv[])
{
    // Before any QApplication: --help and --version work without a display.
    if (QString text; opscope::gui::wantsHelpOrVersion(argc, argv, &text)) {
        std::fputs(qPrintable(text), stdout);
        return opscope::gui::kExitOk;
    }
    QApplication app(argc, argv);
    opscope::gui::setUpApplication(app);

    QStringList args = QApplication::arguments();
    args.removeFirst();
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
