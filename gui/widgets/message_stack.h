#pragma once

class QLabel;
class QStackedWidget;
class QString;
class QWidget;

namespace opscope::gui {

/// A stack whose page 0 is a message (centred, word-wrapped, in the placeholder colour) shown while
/// there is nothing else to show; the caller adds its content as page 1 and switches between them.
/// The message label is returned through `message`.
QStackedWidget* messageStack(QWidget* parent, const QString& text, QLabel** message);

} // namespace opscope::gui
