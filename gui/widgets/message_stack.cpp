#include "gui/widgets/message_stack.h"

#include <QLabel>
#include <QStackedWidget>

namespace opscope::gui {

QStackedWidget* messageStack(QWidget* parent, const QString& text, QLabel** message)
{
    auto* stack = new QStackedWidget(parent);
    auto* label = new QLabel(text, stack);
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setForegroundRole(QPalette::PlaceholderText);
    stack->addWidget(label);
    *message = label;
    return stack;
}

} // namespace opscope::gui
