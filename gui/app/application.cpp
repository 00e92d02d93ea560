#include "gui/app/application.h"

#include <QApplication>
#include <QFile>
#include <QStyleFactory>

// Q_INIT_RESOURCE must be called outside any namespace.
static void initOpscopeResources()
{
    Q_INIT_RESOURCE(opscope);
}

namespace opscope::gui {

void setUpApplication(QApplication& app)
{
    initOpscopeResources();
    QApplication::setOrganizationName(QStringLiteral("opscope"));
    QApplication::setApplicationName(QStringLiteral("opscope"));
    QApplication::setApplicationVersion(QStringLiteral(OPSCOPE_VERSION));
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(fusion);
    QFile qss(QStringLiteral(":/opscope/style.qss"));
    if (qss.open(QIODevice::ReadOnly)) app.setStyleSheet(QString::fromUtf8(qss.readAll()));
}

} // namespace opscope::gui
