#pragma once

#include "debug/breakpoint.h"

#include <QDialog>

class QComboBox;
class QLineEdit;
class QSpinBox;
class QLabel;
class QDialogButtonBox;

namespace opscope::gui {

/// Asks for a breakpoint: where (a node before or after it runs, one tensor, or every op), a
/// condition in the session's syntax ("nan", "max>1e3", …, checked as it is typed) and an ignore count.
class BreakpointDialog : public QDialog {
    Q_OBJECT
public:
    explicit BreakpointDialog(QWidget* parent = nullptr);
    void setNode(const QString& node);
    void setPhase(OpPhase phase);
    void setCondition(const QString& text);
    /// Valid only when the dialog was accepted.
    debug::Breakpoint breakpoint() const;

private:
    void validate();

    QComboBox* m_where;
    QLineEdit* m_location;
    QLineEdit* m_condition;
    QSpinBox* m_ignore;
    QLabel* m_message;
    QDialogButtonBox* m_buttons;
};

} // namespace opscope::gui
